package dispatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/google/go-cmp/cmp"
)

// fileOps lists the operations with what identifies an upload.
func fileOps(h *harness) []string {
	var r []string
	for _, op := range h.rec.Ops() {
		s := op.Op
		if op.File != "" {
			s += " " + op.File + " " + op.ContentType
		}
		if op.Text != "" {
			s += " " + op.Text
		}
		r = append(r, s)
	}
	return r
}

var report = channels.Upload{Name: "report.txt", Data: []byte("all green\n"), Caption: "The report."}

// TestFileInOrder: a file is delivered in the thread's order, between the
// text before it and the text after it, with its bytes.
func TestFileInOrder(t *testing.T) {
	for _, s := range []projector.Settings{projector.DefaultSettings(), {DeliveryMode: projector.DeliveryFinalOnly}} {
		t.Run(string(s.DeliveryMode), func(t *testing.T) {
			h := newHarness(t, channeltest.Options{Edit: true, Upload: true, Limits: channels.Limits{MaxUploadBytes: 1 << 20}}, s, never)
			h.lane.BeginTurn(h.now)
			h.push(projector.Text{Text: "Here it comes."})
			h.lane.File(h.now, report)
			h.push(projector.Text{Text: "That was it."}, projector.TurnEnd{StopReason: "end_turn"})
			h.drain()
			want := []string{"send Here it comes.", "upload report.txt text/plain; charset=utf-8 The report.", "send That was it.", "turn_end"}
			if got := fileOps(h); !cmp.Equal(got, want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
			}
			for _, m := range h.rec.Messages() {
				if m.File != nil && string(m.File.Data) != string(report.Data) {
					t.Errorf("uploaded %q, want %q", m.File.Data, report.Data)
				}
			}
		})
	}
}

// TestFileNotice: where the file cannot be shown, the thread gets a
// notice with its name and size in its place, in order.
func TestFileNotice(t *testing.T) {
	big := channels.Upload{Name: "video.mp4", Data: make([]byte, 3000)}
	for _, tc := range []struct {
		name   string
		o      channeltest.Options
		f      channels.Upload
		inject error
		want   string
	}{
		{"no uploader", channeltest.Options{}, report, nil,
			sysmsg.Text(sysmsg.FileNotSent{Name: "report.txt", Size: 10})},
		{"over the limit", channeltest.Options{Upload: true, Limits: channels.Limits{MaxUploadBytes: 2048}}, big, nil,
			sysmsg.Text(sysmsg.FileNotSent{Name: "video.mp4", Size: 3000, Limit: 2048})},
		{"refused", channeltest.Options{Upload: true, Limits: channels.Limits{MaxUploadBytes: 2048}}, report, channels.Permanent(errors.New("400 bad file")),
			sysmsg.Text(sysmsg.FileNotSent{Name: "report.txt", Size: 10, Limit: 2048, Refused: true})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.o, projector.DefaultSettings(), never)
			if tc.inject != nil {
				h.rec.Inject(channeltest.InjectUpload, tc.inject)
			}
			h.lane.BeginTurn(h.now)
			h.push(projector.Text{Text: "Before."})
			h.lane.File(h.now, tc.f)
			h.push(projector.Text{Text: "After."}, projector.TurnEnd{StopReason: "end_turn"})
			h.drain()
			want := []string{"send Before.", "send " + tc.want, "send After.", "turn_end"}
			if got := fileOps(h); !cmp.Equal(got, want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
			}
			if !strings.Contains(tc.want, tc.f.Name) {
				t.Errorf("notice %q does not name the file", tc.want)
			}
		})
	}
}

// TestFileRetriedThroughOutage: an upload that fails because the platform
// cannot be reached is tried again, and what follows waits for it.
func TestFileRetriedThroughOutage(t *testing.T) {
	h := newHarness(t, channeltest.Options{Upload: true, Limits: channels.Limits{MaxUploadBytes: 1 << 20}}, projector.DefaultSettings(), never)
	h.rec.Inject(channeltest.InjectUpload, errUnreachable)
	h.rec.Inject(channeltest.InjectUpload, errUnreachable)
	h.lane.BeginTurn(h.now)
	h.lane.File(h.now, report)
	h.push(projector.Text{Text: "After."}, projector.TurnEnd{StopReason: "end_turn"})
	h.wait(10 * time.Second)
	h.drain()
	want := []string{"upload report.txt text/plain; charset=utf-8 The report.", "send After.", "turn_end"}
	if got := fileOps(h); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
	var failed int
	for _, op := range h.rec.Attempts() {
		if op.Op == "upload" && op.Error != "" {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("%d failed uploads, want the 2 injected", failed)
	}
}

// TestFileLongCaption: a caption longer than a message is posted as text
// before the file; nothing of it is lost.
func TestFileLongCaption(t *testing.T) {
	h := newHarness(t, channeltest.Options{Upload: true, Limits: channels.Limits{MaxMessageChars: 500, MaxUploadBytes: 1 << 20}}, projector.DefaultSettings(), never)
	caption := strings.Repeat("word ", 250) // 1,250 characters
	f := report
	f.Caption = caption
	h.lane.BeginTurn(h.now)
	h.lane.File(h.now, f)
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	var text strings.Builder
	var uploads int
	for _, m := range h.rec.Messages() {
		text.WriteString(m.Text)
		if m.File != nil {
			uploads++
		}
	}
	if uploads != 1 {
		t.Errorf("%d uploads, want 1", uploads)
	}
	if got, want := strings.Join(strings.Fields(text.String()), " "), strings.TrimSpace(caption); got != want {
		t.Errorf("caption shown as %q, want %q", got, want)
	}
	if ms := h.rec.Messages(); len(ms) < 3 || ms[len(ms)-1].File == nil {
		t.Errorf("messages %+v: want the caption's start as text, then the file", ms)
	}
}

// TestRunnerFile: Runner.File delivers a file in order with the outputs
// pushed around it, on the runner's goroutine, and waits out an outage
// (fake time).
func TestRunnerFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := channeltest.New(channeltest.Options{Edit: true, Upload: true, Limits: channels.Limits{MaxUploadBytes: 1 << 20}})
		rec.Inject(channeltest.InjectUpload, errUnreachable)
		th := rec.Thread("t")
		r := dispatch.Start(t.Context(), dispatch.NewLane(dispatch.Options{
			Adapter: rec.Adapter(), Thread: th, Stream: projector.DefaultSettings(), Typing: never,
			OnTurnEnd: func(projector.TurnEnd) { rec.NoteIn(th, channeltest.Op{Op: "turn_end"}) },
		}))
		defer r.Close()
		r.BeginTurn()
		r.Push(projector.Text{Text: "Here it comes."})
		r.File(report)
		r.Push(projector.Text{Text: "That was it."}, projector.TurnEnd{StopReason: "end_turn"})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		err := rec.WaitFor(ctx, th, func(ops []channeltest.Op) bool { return len(ops) > 0 && ops[len(ops)-1].Op == "turn_end" })
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, op := range rec.OpsIn(th) {
			got = append(got, op.Op+" "+op.File+op.Text)
		}
		want := []string{"send Here it comes.", "upload report.txtThe report.", "send That was it.", "turn_end "}
		if !cmp.Equal(got, want) {
			t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
		}
	})
}

func TestUploadLimit(t *testing.T) {
	for _, tc := range []struct {
		o    channeltest.Options
		want int
	}{
		{channeltest.Options{Upload: true, Limits: channels.Limits{MaxUploadBytes: 4096}}, 4096},
		{channeltest.Options{Limits: channels.Limits{MaxUploadBytes: 4096}}, 0}, // no Uploader
		{channeltest.Options{Upload: true}, 0},
	} {
		if got := dispatch.UploadLimit(channeltest.New(tc.o).Adapter()); got != tc.want {
			t.Errorf("UploadLimit(%+v) = %d, want %d", tc.o, got, tc.want)
		}
	}
}
