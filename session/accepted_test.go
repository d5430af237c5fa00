package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// writeWatch tells of each write of a running mark, a choice or a
// binding: the
// thread writes them through its saves, a moment after what caused them.
type writeWatch struct {
	store.Backend
	wrote chan struct{}
}

func (w writeWatch) MarkTurnRunning(ctx context.Context, r store.RunningTurn) error {
	defer w.tell()
	return w.Backend.MarkTurnRunning(ctx, r)
}

func (w writeWatch) ClearTurnRunning(ctx context.Context, t channels.ThreadRef, started time.Time) error {
	defer w.tell()
	return w.Backend.ClearTurnRunning(ctx, t, started)
}

func (w writeWatch) SetChoice(ctx context.Context, t channels.ThreadRef, key, value string) error {
	defer w.tell()
	return w.Backend.SetChoice(ctx, t, key, value)
}

func (w writeWatch) DropChoice(ctx context.Context, t channels.ThreadRef, key string) error {
	defer w.tell()
	return w.Backend.DropChoice(ctx, t, key)
}

func (w writeWatch) PutBinding(ctx context.Context, b store.Binding) error {
	defer w.tell()
	return w.Backend.PutBinding(ctx, b)
}

func (w writeWatch) tell() {
	select {
	case w.wrote <- struct{}{}:
	default: // one pending is enough: the reader reads the store again
	}
}

// watchWrites makes o's store tell of its mark, choice and binding
// writes.
func watchWrites(o *envOptions) chan struct{} {
	wrote := make(chan struct{}, 1)
	o.store = func(b store.Backend) store.Backend { return writeWatch{Backend: b, wrote: wrote} }
	return wrote
}

// storedOnce waits until ok holds of what the store says (read again
// after each write wrote tells of), and fails the test with what() if
// the test's time runs out first.
func (e *env) storedOnce(wrote chan struct{}, what func() string, ok func() bool) {
	e.t.Helper()
	ctx := e.ctx()
	for !ok() {
		select {
		case <-wrote:
		case <-ctx.Done():
			e.t.Fatal(what())
		}
	}
}

// marksOnce returns th's marks once ok holds of them: the thread writes
// its marks through its saves, a moment after it took the prompt.
func (e *env) marksOnce(wrote chan struct{}, th channels.ThreadRef, what string, ok func([]store.RunningTurn) bool) []store.RunningTurn {
	e.t.Helper()
	var ms []store.RunningTurn
	e.storedOnce(wrote, func() string { return fmt.Sprintf("%s: the marks are %+v", what, ms) }, func() bool {
		ms = marksIn(e.t, e.st, th)
		return ok(ms)
	})
	return ms
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
	wrote := watchWrites(&opts)
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
	wrote := watchWrites(&opts)
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

// markGate holds the first write of a running mark until released, and
// keeps the order in which marks and seen marks were written.
type markGate struct {
	store.Backend
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	order   []string
}

func (g *markGate) MarkTurnRunning(ctx context.Context, r store.RunningTurn) error {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	err := g.Backend.MarkTurnRunning(ctx, r)
	g.wrote("mark")
	return err
}

func (g *markGate) MarkSeen(ctx context.Context, t channels.ThreadRef, id channels.MessageID, at time.Time) error {
	err := g.Backend.MarkSeen(ctx, t, id, at)
	g.wrote("seen")
	return err
}

func (g *markGate) wrote(what string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.order = append(g.order, what)
}

// A cluster worker returns from a prompt (and the stream acknowledges
// the event) only once the thread wrote its mark, then marked it seen: a
// worker killed before that leaves the event to the stream, which gives
// it to the next owner; one killed between the two leaves the mark, not
// a message seen that no one answers.
func TestAWorkerReturnsOnceThePromptIsMarked(t *testing.T) {
	g := &markGate{entered: make(chan struct{}), release: make(chan struct{})}
	opts := envOptions{dir: t.TempDir(), shared: true, rec: channeltest.Options{Edit: true, Typing: true},
		store: func(b store.Backend) store.Backend { g.Backend = b; return g }}
	e := newEnv(t, opts)
	var released sync.Once
	release := func() { released.Do(func() { close(g.release) }) }
	t.Cleanup(release) // before the gateway's shutdown, also when the test fails
	th := e.rec.Thread("acked")
	in := channels.Inbound{Thread: th, Author: ann, Text: "echo marked first", ID: "m-acked", Reply: e.rec.ReplyFunc(th)}
	delivered := make(chan error, 1)
	go func() { delivered <- e.rec.Deliver(e.ctx(), in) }()
	select {
	case <-g.entered:
	case err := <-delivered:
		t.Fatalf("the worker returned (%v) before the prompt's mark was being written", err)
	case <-e.ctx().Done():
		t.Fatal("no mark written for the prompt")
	}
	select {
	case err := <-delivered:
		t.Fatalf("the worker returned (%v) while the prompt's mark was still being written", err)
	default:
	}
	release()
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	if ms := marksIn(t, e.st, th); len(ms) != 1 {
		t.Errorf("marks when the worker returned: %+v, want the prompt's", ms)
	}
	if id, ok, err := e.st.LastSeen(e.ctx(), th); err != nil || !ok || id != in.ID {
		t.Errorf("last seen when the worker returned: %q %v %v, want %q", id, ok, err, in.ID)
	}
	g.mu.Lock()
	order := slices.Clone(g.order)
	g.mu.Unlock()
	if len(order) < 2 || order[0] != "mark" || order[1] != "seen" {
		t.Errorf("written in the order %v, want the mark before the seen mark", order)
	}
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "marked first") {
		t.Errorf("answer %q", got)
	}
}
