package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/replay"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/typing"
)

func TestTurnEndToEnd(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true, Prompt: true}})
	th := e.rec.Thread("t1")
	e.say(th, ann, "echo Hello from the test.")
	end := e.waitEnd(th)
	if end.StopReason != "end_turn" || end.Err != "" {
		t.Fatalf("turn end = %+v", end)
	}
	if got := e.text(th); got != "Hello from the test." {
		t.Errorf("thread text = %q", got)
	}
	ops := e.rec.OpsIn(th)
	if ops[0].Op != "typing" {
		t.Errorf("first op = %+v, want typing", ops[0])
	}
	b, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok || b.SessionID == "" {
		t.Fatalf("binding = %+v, %v, %v", b, ok, err)
	}
	turns, err := e.st.Turns(e.ctx(), b.SessionID)
	if err != nil || len(turns) != 1 || turns[0].StopReason != "end_turn" {
		t.Errorf("turns = %+v, %v", turns, err)
	}
	e.close()
	// The event log has every frame, starting with initialize.
	raw, err := os.ReadFile(filepath.Join(e.dir, "events", escape(b.SessionID)+".ndjson"))
	if err != nil {
		t.Fatalf("event log: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if !strings.Contains(lines[0], `"method":"initialize"`) {
		t.Errorf("first frame = %s", lines[0])
	}
	for _, want := range []string{`"method":"session/new"`, `"available_commands_update"`, `"method":"session/prompt"`, `"stopReason":"end_turn"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("event log lacks %s", want)
		}
	}
	// An update sent before session/new returned reached the transcript.
	es, err := e2(t, e.dir).Entries(t.Context(), b.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	var user, assistant string
	for _, en := range es {
		switch body := en.Body.(type) {
		case store.Meta:
			commands = commands[:0] // the latest meta entry counts
			for _, c := range body.Commands {
				commands = append(commands, c.Name)
			}
		case store.Message:
			if body.Role == store.RoleUser {
				user = body.Text
			} else {
				assistant = body.Text
			}
		}
	}
	if strings.Join(commands, ",") != "help,stop" {
		t.Errorf("commands in the transcript = %v, want help,stop (sent before session/new returned)", commands)
	}
	if user != "echo Hello from the test." || assistant != "Hello from the test." {
		t.Errorf("transcript user %q assistant %q", user, assistant)
	}
}

// e2 reopens the store of a closed env.
func e2(t *testing.T, dir string) *store.Store {
	st, err := store.Open(t.Context(), filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func escape(id string) string {
	var b strings.Builder
	for _, c := range []byte(id) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}

// The event log a live turn leaves is what `gateway replay` reads: the
// replay shows the same text and tool lines the thread got.
func TestEventLogReplays(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e.rec.Thread("replay")
	e.say(th, ann, "tools")
	e.waitEnd(th)
	b, _, _ := e.st.Binding(e.ctx(), th)
	live := e.text(th)
	var liveTools []string
	for _, m := range e.messages(th, channels.KindTool) {
		liveTools = append(liveTools, m.Text)
	}
	e.close()
	f, err := eventlog.OpenReader(filepath.Join(e.dir, "events", escape(b.SessionID)+".ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	st, err := replay.Run(t.Context(), f, &out, replay.Options{Stream: projector.DefaultSettings(), Typing: typing.Config{Mode: typing.ModeNever}, Preset: replay.PresetFor(web.Limits())})
	if err != nil {
		t.Fatal(err)
	}
	if st.Malformed != 0 || st.Turns != 1 {
		t.Errorf("replay stats %+v", st)
	}
	// Final state of each replayed message, by id.
	final := map[string]channeltest.Op{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var op channeltest.Op
		if err := json.Unmarshal([]byte(line), &op); err != nil {
			t.Fatalf("replay line %q: %v", line, err)
		}
		if op.Msg == "" {
			continue
		}
		if _, ok := final[string(op.Msg)]; !ok {
			order = append(order, string(op.Msg))
		}
		final[string(op.Msg)] = op
	}
	var text strings.Builder
	var tools []string
	for _, id := range order {
		switch op := final[id]; op.Kind {
		case channels.KindText:
			text.WriteString(op.Text)
		case channels.KindTool:
			tools = append(tools, op.Text)
		}
	}
	if text.String() != live {
		t.Errorf("replayed text\n%q\nlive text\n%q", text.String(), live)
	}
	if strings.Join(tools, "\n") != strings.Join(liveTools, "\n") {
		t.Errorf("replayed tool lines\n%s\nlive\n%s", strings.Join(tools, "\n"), strings.Join(liveTools, "\n"))
	}
	if len(tools) < 3 {
		t.Errorf("only %d tool lines", len(tools))
	}
}

// A message's files reach the agent after its text; one with files and
// no text is a prompt too.
func TestFilesReachTheAgent(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e.rec.Thread("files")
	files := []channels.File{
		{Name: "message.txt", ContentType: "text/plain", Size: 12, Text: "panic: boom\n"},
		{Name: "shot.png", ContentType: "image/png", Size: 2048, URL: "https://cdn.example/shot.png", Skipped: "not a text file"},
	}
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Text: "echo see", Files: files, ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn end = %+v", end)
	}
	want := "see\n\nAttached file message.txt:\n```\npanic: boom\n```\n\n" +
		"(Attached file shot.png, image/png, 2 KiB, not included: not a text file. Link: https://cdn.example/shot.png)"
	if got := e.text(th); got != want {
		t.Errorf("the agent echoed\n%s\nwant\n%s", got, want)
	}
	// Files alone (a long paste Discord made into a file) run a turn too.
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Files: files[:1], ID: "m2"}); err != nil {
		t.Fatal(err)
	}
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn end of a message with only a file = %+v", end)
	}
}

// Images go to agents that take them, as ACP image blocks after the
// text; an agent that does not take them is told they were there.
func TestImagesReachTheAgent(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	shot := channels.File{Name: "shot.png", ContentType: "image/png", Size: len(png), URL: "https://cdn.example/shot.png", Data: png}
	// The most a message can carry (attach.MaxImageTotal) still makes a
	// prompt line that an agent on the Go SDK can read.
	half := append(append([]byte{}, png...), make([]byte, attach.MaxImageTotal/2-len(png))...)
	halfShot := channels.File{Name: "half.png", ContentType: "image/png", Size: len(half), Data: half}
	for _, tc := range []struct {
		name  string
		flags []string
		files []channels.File
		want  string
	}{
		{"takes images", nil, []channels.File{shot}, "I got 1 image(s): image/png (16 bytes)."},
		{"text only", []string{"--no-images"}, []channels.File{shot}, "I got no images."},
		{"the most a message carries", nil, []channels.File{halfShot, halfShot}, "I got 2 image(s): image/png (3145728 bytes), image/png (3145728 bytes)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := demoSpec(filepath.Join(dir, "demo-state"))
			spec.Command = append(spec.Command, tc.flags...)
			e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, spec: &spec})
			th := e.rec.Thread("images")
			if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Text: "images", Files: tc.files, ID: "m1"}); err != nil {
				t.Fatal(err)
			}
			if end := e.waitEnd(th); end.StopReason != "end_turn" {
				t.Fatalf("turn end = %+v", end)
			}
			if got := e.text(th); got != tc.want {
				t.Errorf("the agent said %q, want %q", got, tc.want)
			}
		})
	}
}

// Files are downloaded (Inbound.Fetch) only for a message the gateway
// runs: never for someone without access.
func TestFilesOfRefusedPeopleAreNotFetched(t *testing.T) {
	rule := session.AccessRule{Users: []string{ann.ID}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, access: map[string]session.AccessRule{"web": rule}})
	th := e.rec.Thread("fetch")
	var fetched atomic.Int32
	fetch := func(context.Context) []channels.File {
		fetched.Add(1)
		return []channels.File{{Name: "log.txt", Text: "from the fetch\n"}}
	}
	meta := []channels.File{{Name: "log.txt", ContentType: "text/plain", Size: 15}}
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: bob, Text: "echo from bob", Files: meta, Fetch: fetch, ID: "b1", Reply: e.rec.ReplyFunc(th)}); err != nil {
		t.Fatal(err)
	}
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Text: "echo see", Files: meta, Fetch: fetch, ID: "a1"}); err != nil {
		t.Fatal(err)
	}
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn end = %+v", end)
	}
	if n := fetched.Load(); n != 1 {
		t.Errorf("Fetch called %d times, want once (Ann's message only)", n)
	}
	if got, want := e.text(th), "see\n\nAttached file log.txt:\n```\nfrom the fetch\n```"; got != want {
		t.Errorf("the agent echoed %q, want %q", got, want)
	}
}

// A stop while the message's files download gives the turn up at once.
func TestStopWhileFilesDownload(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}})
	th := e.rec.Thread("slow-fetch")
	downloading := make(chan struct{})
	fetch := func(ctx context.Context) []channels.File {
		close(downloading)
		<-ctx.Done() // a download that only the stop ends
		return []channels.File{{Name: "big.log", Skipped: "it could not be downloaded"}}
	}
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Text: "echo never", Files: []channels.File{{Name: "big.log"}}, Fetch: fetch, ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-downloading:
	case <-e.ctx().Done():
		t.Fatal("Fetch was never called")
	}
	e.say(th, ann, "stop")
	e.waitOp(th, "the notice", func(op channeltest.Op) bool {
		return op.Kind == channels.KindNotice && strings.Contains(op.Text, "Stopped by Ann before the agent began.")
	})
	if strings.Contains(e.text(th), "never") {
		t.Error("the stopped message ran")
	}
}
