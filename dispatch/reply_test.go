package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

// privateAnswers is a person's private answer channel (Inbound.Reply)
// that fails as told, then takes what it is given.
type privateAnswers struct {
	fail []error // the answers to the first calls
	got  []string
	at   []time.Time
	h    *harness
}

func (p *privateAnswers) reply(_ context.Context, text string) error {
	p.at = append(p.at, p.h.now)
	if len(p.fail) > 0 {
		err := p.fail[0]
		p.fail = p.fail[1:]
		return err
	}
	p.got = append(p.got, text)
	return nil
}

// TestReplyGoesAheadAndPrivately: an answer to one person does not wait
// behind a held turn's text nor for the thread's post pacing, is retried
// while the platform is unreachable, and posts nothing in the thread when
// it goes privately; without a private way it is a notice in the thread.
func TestReplyGoesAheadAndPrivately(t *testing.T) {
	s := projector.DefaultSettings()
	s.DeliveryMode = projector.DeliveryFinalOnly
	h := newHarness(t, channeltest.Options{Edit: true}, s, never)
	p := &privateAnswers{h: h, fail: []error{errors.New("connection reset")}}
	h.lane.BeginTurn(h.now)
	h.push(projector.Text{Text: "held answer"})
	h.lane.Notice(h.now, "", "⚙️ Queued: 1 ahead of it.")
	h.lane.Reply(h.now, "Only approvers can answer this prompt.", p.reply)
	h.lane.Reply(h.now, "⚙️ That prompt is not waiting any more.", nil)
	h.wait(0)
	h.wait(5 * time.Second)
	if want := []string{"Only approvers can answer this prompt."}; !cmp.Equal(p.got, want) {
		t.Fatalf("private answers (-got +want):\n%s", cmp.Diff(p.got, want))
	}
	if len(p.at) != 2 || p.at[1].Sub(p.at[0]) < time.Second {
		t.Errorf("the private answer was tried at %v; want a retry after the backoff", p.at)
	}
	want := []string{"send m1 ⚙️ Queued: 1 ahead of it.", "send m2 ⚙️ That prompt is not waiting any more."}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Fatalf("before the turn ends (-got +want):\n%s", cmp.Diff(got, want))
	}
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want = append(want, "send m3 held answer", "turn_end")
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

// TestReplyRefusedIsNoLoss: a private answer the platform refuses for
// good is dropped without telling the thread of a loss (nobody else lost
// anything), and what follows is delivered.
func TestReplyRefusedIsNoLoss(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true}, projector.DefaultSettings(), never)
	p := &privateAnswers{h: h, fail: []error{channels.Permanent(errors.New("unknown interaction"))}}
	h.lane.Reply(h.now, "Only approvers can answer this prompt.", p.reply)
	h.push(projector.Notice{Text: "⚙️ after"})
	h.drain()
	if len(p.got) != 0 || len(p.at) != 1 {
		t.Errorf("private answers: got %q after %d calls; want none after 1", p.got, len(p.at))
	}
	if got, want := h.ops(), []string{"send m1 ⚙️ after"}; !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}
