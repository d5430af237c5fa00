package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// A worker taking a thread over whose notice meets a rate limit waits it
// out, then tells the thread and asks the cut-off prompt again (the
// cluster harness's Slack edges pace a channel's posts: the notice was
// refused and the prompt left unasked).
func TestAdoptWaitsOutARateLimit(t *testing.T) {
	opts := envOptions{dir: t.TempDir(), shared: true, rec: channeltest.Options{Edit: true, Typing: true}}
	a := newEnv(t, opts)
	th := a.rec.Thread("taken")
	a.say(th, ann, "slow 40")
	a.waitOp(th, "the answer streaming on A", hasText("quick brown"))
	cut := runningIn(t, a.st, th)
	a.close()

	b := newEnv(t, opts)
	if err := b.st.MarkTurnRunning(b.ctx(), cut); err != nil {
		t.Fatal(err)
	}
	b.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 200 * time.Millisecond, Scope: "post"})
	b.r.Adopt(b.ctx(), th)
	b.waitOp(th, "the answer streaming on B", hasText("quick brown"))
	b.waitEnd(th)
	wantNotices(t, b, th, sysmsg.WorkerLost{Again: true})
}

// A thread taken over that cannot be told for a long while (its channel
// busy with other threads' posts) holds nothing up: the notice waits in
// the thread's lane, ahead of the answer to the prompt asked again, and a
// shutdown meanwhile does not wait for it (the worker's event context
// outlives the router: a notice tried again on it kept the worker from
// stopping); the marks stay for the next owner.
func TestAdoptDoesNotWaitForTheNotice(t *testing.T) {
	opts := envOptions{dir: t.TempDir(), shared: true, rec: channeltest.Options{Edit: true, Typing: true}}
	e := newEnv(t, opts)
	th := e.rec.Thread("busy")
	cut := store.RunningTurn{Thread: th, SessionID: "s-gone", Started: time.UnixMilli(1000), Prompt: store.TurnPrompt{ID: "in-x", Author: ann, Text: "echo x"}}
	if err := e.st.MarkTurnRunning(e.ctx(), cut); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		e.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: time.Second, Scope: "post (channel pacing)"})
	}
	// As a worker's event context: it ends only once the router stopped.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.r.Adopt(ctx, th)
	e.close()
	if n := len(e.messages(th, channels.KindNotice)); n != 0 {
		t.Errorf("%d notices posted through a rate limit that never lifted", n)
	}
	next := newEnv(t, opts)
	if rs, err := next.st.RunningTurns(next.ctx()); err != nil || len(rs) != 1 || rs[0].Prompt.Text != "echo x" {
		t.Errorf("marks after the shutdown: %+v (%v), want the cut-off prompt's, for the next owner", rs, err)
	}
}
