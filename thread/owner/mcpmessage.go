package owner

// The send_message tool of the thread's MCP server: the text goes to the
// thread's owner, which projects it like the agent's own text (the turn's
// budget and order, projector.Message) into the lane. A stopped turn
// shows nothing more, this text neither; outside a turn the tool (and
// the ask tool) is refused: an agent whose turn ended does not go on
// posting in the thread, where no budget and no stop would hold it.

import (
	"context"
	"errors"
)

// messageEv is text the agent posts with send_message; reply hears
// whether it was shown.
type messageEv struct {
	text  string
	reply chan error
}

// errMessageStopped is send_message's answer in a stopped turn.
var errMessageStopped = errors.New("the turn was stopped; the message was not posted")

// errNoTurn is send_message's and ask's answer outside a turn.
var errNoTurn = errors.New("no turn is running: the agent can post in the thread only while it answers a message; nothing was posted (say it in the reply to the next message)")

// errThreadEnded is a tool's answer once the thread has ended.
var errThreadEnded = errors.New("the thread has ended")

// SendMessage hands text to the thread's owner and waits for it to be
// queued in the lane.
func (m mcpThread) SendMessage(ctx context.Context, text string) error {
	reply := make(chan error, 1)
	if !m.t.inbox.send(messageEv{text: text, reply: reply}) {
		return errThreadEnded
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// message shows the agent's posted text in the thread, if a turn runs
// and was not stopped.
func (t *Thread) message(e messageEv) {
	switch {
	case !t.proj.InTurn():
		t.d.Log.Info("send_message refused: no turn is running", "thread", t.ref, "chars", len(e.text))
		e.reply <- errNoTurn
		return
	case t.m.Stopped():
		e.reply <- errMessageStopped
		return
	}
	if outs := t.proj.Message(e.text, nil); len(outs) > 0 {
		t.runner.Push(outs...)
	}
	e.reply <- nil
}
