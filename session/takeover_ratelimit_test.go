package session_test

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
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
