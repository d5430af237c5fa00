package dispatch

import (
	"context"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/mailbox"
	"github.com/acpgw/gateway/projector"
)

// Runner runs one Lane on its own goroutine with real timers. Push and
// BeginTurn never block on delivery: a slow or rate-limited thread stalls
// only its own runner. The zero value is not usable; use Start.
type Runner struct {
	lane *Lane

	ctx   context.Context
	inbox *mailbox.Box[event]
	done  chan struct{} // closed when the goroutine returned
}

type event struct {
	begin bool
	outs  []projector.Output
	f     func(*Lane)
}

// Start starts a runner for lane; it stops when ctx is done or Close is
// called. The caller owns it and must call Close (or cancel ctx and Wait).
func Start(ctx context.Context, lane *Lane) *Runner {
	r := &Runner{lane: lane, ctx: ctx, inbox: mailbox.New[event](), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		mailbox.Run(ctx, r.inbox, (*runnerLoop)(r))
	}()
	return r
}

// BeginTurn tells the lane that a turn started.
func (r *Runner) BeginTurn() { r.send(event{begin: true}) }

// Push queues outputs for delivery, in order. It never blocks on I/O.
func (r *Runner) Push(outs ...projector.Output) {
	if len(outs) == 0 {
		return
	}
	r.send(event{outs: append([]projector.Output(nil), outs...)})
}

// Prompt queues a choice; see Lane.Prompt. posted runs on the runner's
// goroutine.
func (r *Runner) Prompt(key string, c channels.Choice, posted func(channels.Handle, error)) {
	r.send(event{f: func(l *Lane) { l.Prompt(time.Now(), key, c, posted) }})
}

// Resolve replaces a prompt's message; see Lane.Resolve.
func (r *Runner) Resolve(key, text string) {
	r.send(event{f: func(l *Lane) { l.Resolve(time.Now(), key, text) }})
}

// Notice queues an urgent system line; see Lane.Notice.
func (r *Runner) Notice(key, text string) {
	r.send(event{f: func(l *Lane) { l.Notice(time.Now(), key, text) }})
}

// Reply queues an answer to one person; see Lane.Reply.
func (r *Runner) Reply(text string, private func(context.Context, string) error) {
	r.send(event{f: func(l *Lane) { l.Reply(time.Now(), text, private) }})
}

// ReplaceNotice replaces an urgent notice, in order; see
// Lane.ReplaceNotice.
func (r *Runner) ReplaceNotice(key, text string) {
	r.send(event{f: func(l *Lane) { l.ReplaceNotice(time.Now(), key, text) }})
}

// SettleNotice corrects an urgent notice, in order; see
// Lane.SettleNotice.
func (r *Runner) SettleNotice(key, text string) {
	r.send(event{f: func(l *Lane) { l.SettleNotice(time.Now(), key, text) }})
}

// File queues a file, in order with pushed outputs; see Lane.File.
func (r *Runner) File(f channels.Upload) {
	r.send(event{f: func(l *Lane) { l.File(time.Now(), f) }})
}

// FileThen queues a file and reports how it went; see Lane.FileThen.
// taken and done run on the runner's goroutine: taken once the lane has
// the file, done once it is posted or given up.
func (r *Runner) FileThen(f channels.Upload, taken func(held bool), done func(error)) {
	r.send(event{f: func(l *Lane) { taken(l.FileThen(time.Now(), f, done)) }})
}

// Do runs f on the lane's goroutine, in order with pushed outputs (for
// settings changes and queries).
func (r *Runner) Do(f func(*Lane)) { r.send(event{f: f}) }

func (r *Runner) send(e event) { r.inbox.Put(e) }

// Close stops the runner and waits for its goroutine. Outputs not yet
// delivered are dropped.
func (r *Runner) Close() {
	r.inbox.Close()
	<-r.done
}

// Done is closed when the runner's goroutine has returned.
func (r *Runner) Done() <-chan struct{} { return r.done }

// runnerLoop is the Runner as mailbox.Run drives it.
type runnerLoop Runner

func (r *runnerLoop) Handle(now time.Time, e event) {
	switch {
	case e.begin:
		r.lane.BeginTurn(now)
	case e.f != nil:
		e.f(r.lane)
	default:
		r.lane.Push(now, e.outs...)
	}
}

func (r *runnerLoop) Step(now time.Time) time.Time { return r.lane.Step(r.ctx, now) }

func (r *runnerLoop) Done() bool { return false }
