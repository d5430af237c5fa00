package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// slowForms shows forms as the recorder does, but holds the post's return
// until the test releases it: the form is on screen, its id not yet known
// to the gateway (a platform slow to answer the post, a fast click).
type slowForms struct {
	channels.Adapter
	ed      channels.Editor
	fm      channels.Former
	shown   chan channels.Handle
	release chan struct{}
}

func (s slowForms) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	return s.ed.Edit(ctx, h, m)
}

func (s slowForms) Form(ctx context.Context, t channels.ThreadRef, f channels.Form) (channels.Handle, error) {
	h, err := s.fm.Form(ctx, t, f)
	s.shown <- h
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return h, err
}

// TestAnswerBeforeTheFormsPostReturns: an answer to a form whose post has
// not returned yet waits for it and is taken, instead of being told the
// question no longer waits (seen in CI under load).
func TestAnswerBeforeTheFormsPostReturns(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true, Form: true})
	ad := rec.Adapter()
	sf := slowForms{Adapter: ad, ed: ad.(channels.Editor), fm: ad.(channels.Former),
		shown: make(chan channels.Handle, 1), release: make(chan struct{})}
	e := newEnv(t, envOptions{recorder: rec, adapter: sf})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "early"}
	e.say(th, ann, "ask-text")
	var h channels.Handle
	select {
	case h = <-sf.shown:
	case <-e.ctx().Done():
		t.Fatal("the question's form was not shown")
	}
	// Deliver returns once the router handed the answer to the thread.
	if err := rec.AnswerForm(e.ctx(), ann, h, channels.FormAccept, map[string][]string{"name": {"Aurora"}, "retries": {"3"}}); err != nil {
		t.Fatal(err)
	}
	close(sf.release)
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "Release Aurora with 3 retries.") {
		t.Errorf("reply = %q, want the early answer taken", got)
	}
	for _, op := range rec.OpsIn(th) {
		if op.Op == "reply" {
			t.Errorf("the person was told %q", op.Text)
		}
	}
}
