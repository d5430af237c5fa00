package session_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// A message delivered twice (a platform that missed the acknowledgement,
// or a cluster's stream redelivering an event whose worker died, after
// the next worker asked the prompt again from its mark) is answered once.
func TestAMessageDeliveredTwiceIsAnsweredOnce(t *testing.T) {
	e := newEnv(t, envOptions{})
	th := e.rec.Thread("twice")
	in := channels.Inbound{Thread: th, Author: ann, Text: "echo once", ID: "m-1", Reply: e.rec.ReplyFunc(th)}
	for range 2 {
		if err := e.rec.Deliver(e.ctx(), in); err != nil {
			t.Fatal(err)
		}
	}
	// A message of its own after them: a new prompt, behind which the
	// copy would have been answered.
	next := in
	next.ID, next.Text = "m-2", "echo then"
	if err := e.rec.Deliver(e.ctx(), next); err != nil {
		t.Fatal(err)
	}
	e.waitOp(th, "the answer to the next message", hasText("then"))
	n := 0
	for _, m := range e.messages(th, channels.KindText) {
		n += strings.Count(m.Text, "once")
	}
	if n != 1 {
		t.Errorf("%d answers to a message delivered twice: %+v", n, e.messages(th, channels.KindText))
	}
	if !strings.Contains(e.logs.String(), "delivered twice") {
		t.Errorf("the copy was not logged:\n%s", e.logs.String())
	}
}

// A worker taking a thread over drops the message the worker before
// handled last when the stream gives it again (the worker that forwarded
// it died before acknowledging it; its partition was held up meanwhile,
// so it is the thread's last): answered there already, it is not
// answered twice. The message after it is answered.
func TestATakenOverThreadDropsTheMessageHandledBefore(t *testing.T) {
	opts := envOptions{dir: t.TempDir(), shared: true}
	a := newEnv(t, opts)
	th := a.rec.Thread("moved")
	first := channels.Inbound{Thread: th, Author: ann, Text: "echo once", ID: "m-1", Reply: a.rec.ReplyFunc(th)}
	if err := a.rec.Deliver(a.ctx(), first); err != nil {
		t.Fatal(err)
	}
	a.waitEnd(th)
	a.close()

	b := newEnv(t, opts)
	b.r.Adopt(b.ctx(), th)
	again := first
	again.Reply = b.rec.ReplyFunc(th)
	if err := b.rec.Deliver(b.ctx(), again); err != nil {
		t.Fatal(err)
	}
	next := again
	next.ID, next.Text = "m-2", "echo then"
	if err := b.rec.Deliver(b.ctx(), next); err != nil {
		t.Fatal(err)
	}
	b.waitOp(th, "the answer to the next message", hasText("then"))
	for _, m := range b.messages(th, channels.KindText) {
		if strings.Contains(m.Text, "once") {
			t.Errorf("the message handled before the take-over was answered again: %+v", b.messages(th, channels.KindText))
		}
	}
}
