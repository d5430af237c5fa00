package edge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/sysmsg"
)

// A person's file too large for a NATS message (an image of 1.5 MiB; the
// server holds 1 MiB a message) does not stop the message's other files
// from reaching the worker: the edge leaves its content out, the thread
// is told so once, in a line of its own, and the prompt is answered.
func TestFileTooLargeToPassIsTold(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true})
	startEdge(t, url, "e1", rec.Adapter())
	w := startWorker(t, url)
	th := rec.Thread("files")
	fetches := make(chan struct{}, 10)
	in := channels.Inbound{Thread: th, Author: ann, Text: "echo read", ID: "m1",
		Files: []channels.File{{Name: "notes.txt", Size: 5}, {Name: "photo.png", Size: 1536 << 10}},
		Fetch: func(context.Context) []channels.File {
			select {
			case fetches <- struct{}{}:
			default:
			}
			return []channels.File{
				{Name: "notes.txt", ContentType: "text/plain", Size: 5, Text: "hello"},
				{Name: "photo.png", ContentType: "image/png", Size: 1536 << 10, Data: make([]byte, 1536<<10)},
			}
		},
	}
	if err := rec.Deliver(testCtx(t), in); err != nil {
		t.Fatal(err)
	}
	w.waitEnd(t, th, rec)
	// The demo agent echoes the prompt as it got it, files and all.
	got := text(rec, th)
	for _, want := range []string{"Attached file notes.txt:\n```\nhello\n```", "photo.png, image/png, 1.5 MiB, not included: too large to pass between the gateway's machines"} {
		if !strings.Contains(got, want) {
			t.Errorf("answered %q, want it to hold %q", got, want)
		}
	}
	if len(fetches) == 0 {
		t.Fatal("the files were never fetched")
	}
	want := sysmsg.FileNotPassed{Name: "photo.png", Size: 1536 << 10}.Body()
	want = want[:strings.Index(want, "larger than")] // the limit is the server's
	told := 0
	for _, m := range rec.Messages() {
		if m.Thread == th && m.Kind == channels.KindNotice && strings.Contains(m.Text, want) {
			told++
		}
	}
	if told != 1 {
		t.Errorf("told %d times that photo.png did not reach the agent (%q), want once: %v", told, want, rec.OpsIn(th))
	}
}

// Files that each fit in a NATS message but not together: the largest is
// left out, told as too large together, and the other reaches the agent.
func TestFilesTooLargeTogetherAreTold(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true})
	startEdge(t, url, "e1", rec.Adapter())
	w := startWorker(t, url)
	th := rec.Thread("together")
	files := []channels.File{
		{Name: "a.png", ContentType: "image/png", Size: 500 << 10, Data: make([]byte, 500<<10)},
		{Name: "b.png", ContentType: "image/png", Size: 600 << 10, Data: make([]byte, 600<<10)},
	}
	in := channels.Inbound{Thread: th, Author: ann, Text: "echo two", ID: "m1",
		Files: []channels.File{{Name: "a.png", Size: 500 << 10}, {Name: "b.png", Size: 600 << 10}},
		Fetch: func(context.Context) []channels.File { return files }}
	if err := rec.Deliver(testCtx(t), in); err != nil {
		t.Fatal(err)
	}
	w.waitEnd(t, th, rec)
	if got := text(rec, th); !strings.Contains(got, "b.png, image/png, 600 KiB, not included: too large to pass") || strings.Contains(got, "a.png, image/png, 500 KiB, not included") {
		t.Errorf("answered %q, want b.png left out and a.png in", got)
	}
	want := sysmsg.FileNotPassed{Name: "b.png", Size: 600 << 10, Together: true}.Body()
	want = want[:strings.Index(want, "larger together")+len("larger together")]
	var told []string
	for _, m := range rec.Messages() {
		if m.Thread == th && m.Kind == channels.KindNotice {
			told = append(told, m.Text)
		}
	}
	if len(told) != 1 || !strings.Contains(told[0], want) {
		t.Errorf("told %q, want one line holding %q", told, want)
	}
}
