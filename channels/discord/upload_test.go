package discord

import (
	"bytes"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sysmsg"
)

// TestLaneDeliversFile: through the real lane and adapter into the fake
// with Discord's rate limits, text, a file and text arrive in the thread
// in order, the file as an attachment with its bytes, name and caption;
// a file over Discord's limit becomes a notice with its name and size.
func TestLaneDeliversFile(t *testing.T) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{})
	withClock(t, a, clock)
	th := f.threadRef()
	d := newLaneDriver(t, a, th, clock)
	shot := []byte("\x89PNG\r\n\x1a\n\x00binary\xff")
	d.lane.BeginTurn(clock.now())
	d.push(projector.Text{Text: "Here is the screenshot."})
	d.lane.File(clock.now(), channels.Upload{Name: "shot.png", Data: shot, Caption: "The failing page."})
	d.lane.File(clock.now(), channels.Upload{Name: "video.mp4", Data: make([]byte, maxUploadBytes+1)})
	d.push(projector.Text{Text: "Anything else?"}, projector.TurnEnd{StopReason: "end_turn"})
	d.settle()

	msgs := f.botMessages(f.thread)
	var got []string
	for _, m := range msgs {
		s := m.Content
		for _, file := range m.Files {
			s += " [" + file.Name + " " + file.ContentType + "]"
			if !bytes.Equal(file.Body, shot) {
				t.Errorf("%s arrived with %q, want %q", file.Name, file.Body, shot)
			}
		}
		got = append(got, s)
	}
	want := []string{
		"Here is the screenshot.",
		"The failing page. [shot.png image/png]",
		sysmsg.Text(sysmsg.FileNotSent{Name: "video.mp4", Size: maxUploadBytes + 1, Limit: maxUploadBytes}),
		"Anything else?",
	}
	if len(got) != len(want) {
		t.Fatalf("the thread shows %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d = %q, want %q", i, got[i], want[i])
		}
	}
}
