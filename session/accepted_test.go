package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// marksIn returns the marks of th, oldest first.
func marksIn(t *testing.T, st store.Backend, th channels.ThreadRef) []store.RunningTurn {
	t.Helper()
	rs, err := st.RunningTurns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var mine []store.RunningTurn
	for _, r := range rs {
		if r.Thread == th {
			mine = append(mine, r)
		}
	}
	return mine
}

// markWatch tells of each write of a running mark.
type markWatch struct {
	store.Backend
	wrote chan struct{}
}

func (w markWatch) MarkTurnRunning(ctx context.Context, r store.RunningTurn) error {
	defer w.tell()
	return w.Backend.MarkTurnRunning(ctx, r)
}

func (w markWatch) ClearTurnRunning(ctx context.Context, t channels.ThreadRef, started time.Time) error {
	defer w.tell()
	return w.Backend.ClearTurnRunning(ctx, t, started)
}

func (w markWatch) tell() {
	select {
	case w.wrote <- struct{}{}:
	default: // one pending is enough: the reader reads the store again
	}
}

// watchMarks makes o's store tell of its mark writes.
func watchMarks(o *envOptions) chan struct{} {
	wrote := make(chan struct{}, 1)
	o.store = func(b store.Backend) store.Backend { return markWatch{Backend: b, wrote: wrote} }
	return wrote
}

// marksOnce returns th's marks once ok holds of them: the thread writes
// its marks through its saves, a moment after it took the prompt.
func (e *env) marksOnce(wrote chan struct{}, th channels.ThreadRef, what string, ok func([]store.RunningTurn) bool) []store.RunningTurn {
	e.t.Helper()
	ctx := e.ctx()
	for {
		ms := marksIn(e.t, e.st, th)
		if ok(ms) {
			return ms
		}
		select {
		case <-wrote:
		case <-ctx.Done():
			e.t.Fatalf("%s: the marks are %+v", what, ms)
		}
	}
}

// killed puts back the marks a worker left when it was killed: the test's
// worker shuts down instead (its drain tells and clears what it can).
func killed(t *testing.T, e *env, marks []store.RunningTurn) {
	t.Helper()
	for _, m := range marks {
		if err := e.st.MarkTurnRunning(e.ctx(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// A prompt queued behind a running turn is marked too: when the worker
// dies, the worker taking the thread over tells the thread once and
// answers both prompts again, in order; no mark is left.
func TestAdoptAsksAQueuedPromptAgain(t *testing.T) {
	opts := envOptions{dir: t.TempDir(), shared: true, rec: channeltest.Options{Edit: true, Typing: true}}
	wrote := watchMarks(&opts)
	a := newEnv(t, opts)
	th := a.rec.Thread("queued")
	a.say(th, ann, "slow 40")
	a.waitOp(th, "the answer streaming on A", hasText("quick brown"))
	a.say(th, bob, "echo queued")
	queued := sysmsg.Text(sysmsg.Queued{Ahead: 1})
	a.waitOp(th, "the queued notice", func(op channeltest.Op) bool { return op.Text == queued })
	marks := a.marksOnce(wrote, th, "A's marks, want slow 40, then echo queued by Bob", func(marks []store.RunningTurn) bool {
		return len(marks) == 2 && marks[0].Prompt.Text == "slow 40" && marks[1].Prompt.Text == "echo queued" && marks[1].Prompt.Author.ID == bob.ID
	})
	a.close()
	b := newEnv(t, opts)
	killed(t, b, marks)
	b.r.Adopt(b.ctx(), th)
	b.waitEnd(th)
	b.waitEnd(th)
	got := b.text(th)
	if i, j := strings.Index(got, "quick brown"), strings.Index(got, "queued"); i < 0 || j < i {
		t.Errorf("answers on B = %q, want slow 40's, then echo queued's", got)
	}
	if n := b.messages(th, channels.KindNotice); len(n) == 0 || n[0].Text != sysmsg.Text(sysmsg.WorkerLost{Again: true, Later: 1}) {
		t.Errorf("notices on B = %+v, want first the one saying both are answered again", n)
	}
	lost := 0
	for _, m := range b.messages(th, channels.KindNotice) {
		if strings.Contains(m.Text, "went away") {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("the thread was told %d times that its worker went away, want once", lost)
	}
	if rs := marksIn(t, b.st, th); len(rs) != 0 {
		t.Errorf("marks left after both answers: %+v", rs)
	}
}

// A turn whose agent answered but whose answer the thread has not got yet
// (a rate limit holds the post) keeps its mark until the answer is
// delivered: when the worker dies then, the worker taking the thread
// over answers it again.
func TestAdoptAsksAnUndeliveredAnswerAgain(t *testing.T) {
	opts := envOptions{dir: t.TempDir(), shared: true, rec: channeltest.Options{Edit: true, Typing: true}}
	wrote := watchMarks(&opts)
	a := newEnv(t, opts)
	th := a.rec.Thread("undelivered")
	a.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: time.Hour, Scope: "post"})
	a.say(th, ann, "echo held back")
	a.waitEndRaw(th)
	marks := a.marksOnce(wrote, th, "A's marks once the agent answered, want the prompt's until its answer is delivered", func(marks []store.RunningTurn) bool {
		return len(marks) == 1 && marks[0].Prompt.Text == "echo held back"
	})
	if strings.Contains(a.text(th), "held back") {
		t.Fatalf("the answer was delivered on A: %q", a.text(th))
	}
	a.close()
	b := newEnv(t, opts)
	killed(t, b, marks)
	b.r.Adopt(b.ctx(), th)
	b.waitEnd(th)
	if got := b.text(th); !strings.Contains(got, "held back") {
		t.Errorf("answer on B = %q, want echo held back's", got)
	}
	wantNotices(t, b, th, sysmsg.WorkerLost{Again: true})
	if rs := marksIn(t, b.st, th); len(rs) != 0 {
		t.Errorf("marks left after the answer was delivered: %+v", rs)
	}
}

// A restart after a shutdown that could not tell the thread tells it
// once, however many of its prompts were left (the cut-off turn's, one
// queued behind it), and clears them all.
func TestRestartTellsAThreadOnceForAllItsPrompts(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true})
	ad := &down{Adapter: rec.Adapter()}
	e := newEnv(t, envOptions{recorder: rec, adapter: ad, limits: session.Limits{ShutdownGrace: 300 * time.Millisecond}})
	th := rec.Thread("cut")
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streaming", func(op channeltest.Op) bool { return strings.Contains(op.Text, "quick") })
	e.say(th, bob, "echo queued")
	queued := sysmsg.Text(sysmsg.Queued{Ahead: 1})
	e.waitOp(th, "the queued notice", func(op channeltest.Op) bool { return op.Text == queued })
	ad.down.Store(true)
	e.close()
	if rs, err := e2(t, e.dir).RunningTurns(t.Context()); err != nil || len(rs) != 2 {
		t.Fatalf("marks after a shutdown that could not tell the thread: %+v, %v; want the cut turn's and the queued prompt's", rs, err)
	}
	e2 := newEnv(t, envOptions{recorder: rec, dir: e.dir})
	const told = "Interrupted: the gateway restarted while the agent was working on this"
	e2.waitOp(th, "the notice at start", func(op channeltest.Op) bool {
		return op.Kind == channels.KindNotice && strings.Contains(op.Text, told)
	})
	e2.close()
	if n := notices(e2, th, told); n != 1 {
		t.Errorf("the thread was told %d times at the start, want once", n)
	}
	if rs, err := e2e(t, e.dir).RunningTurns(t.Context()); err != nil || len(rs) != 0 {
		t.Errorf("marks after the thread was told: %+v, %v", rs, err)
	}
}
