package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
)

// The adapter calls a thread makes besides its messages: a tool's
// details, the agent and session it shows, its title, an agent's form.
// The thread's owner makes them through its lane, in order with what it
// pushed before, so that the owner never calls the adapter itself and
// which capabilities the adapter has is read here alone.

// titleTimeout bounds the one attempt at renaming a thread.
const titleTimeout = 10 * time.Second

// errNoForms is what a form's posted hears when the adapter no longer
// takes forms (its capabilities changed since the form was asked for).
var errNoForms = errors.New("the chat takes no forms")

// Caps returns what the lane's adapter can do now (channels.CapsOf): it
// does no I/O and is safe from any goroutine.
func (r *Runner) Caps() channels.Caps { return channels.CapsOf(r.lane.ad) }

// History returns the adapter's reader of a thread's past messages, where
// the platform keeps them (channels.History). Reads are the caller's: they
// answer a question of the thread's start, not deliver its output.
func (r *Runner) History() (channels.History, bool) { return channels.As[channels.History](r.lane.ad) }

// ToolDetail gives an adapter that shows a line's details on demand
// (channels.ToolDetailer) what the line key shows; nothing elsewhere.
func (r *Runner) ToolDetail(key string, d channels.ToolDetail) {
	r.send(event{f: func(l *Lane) {
		if td, ok := channels.As[channels.ToolDetailer](l.ad); ok {
			td.ToolDetail(l.thread, key, d)
		}
	}})
}

// ShowAgent tells an adapter that shows the thread's agent
// (channels.AgentShower) which one it is.
func (r *Runner) ShowAgent(name string) {
	r.send(event{f: func(l *Lane) {
		if as, ok := channels.As[channels.AgentShower](l.ad); ok {
			as.ShowAgent(l.thread, name)
		}
	}})
}

// ShowSession tells an adapter that shows the thread's session
// (channels.SessionShower) what it is now.
func (r *Runner) ShowSession(info channels.SessionInfo) {
	r.send(event{f: func(l *Lane) {
		if ss, ok := channels.As[channels.SessionShower](l.ad); ok {
			ss.ShowSession(l.thread, info)
		}
	}})
}

// SetTitle renames the thread where the platform names threads
// (channels.Titler): one attempt, bounded, its failure logged; a thread
// keeps its old name rather than hold its lane.
func (r *Runner) SetTitle(title string) {
	r.send(event{f: func(l *Lane) { l.setTitle(r.ctx, title) }})
}

func (l *Lane) setTitle(ctx context.Context, title string) {
	ti, ok := channels.As[channels.Titler](l.ad)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, titleTimeout)
	defer cancel()
	if err := ti.SetTitle(ctx, l.thread, title); err != nil {
		l.log.Warn("cannot rename the thread", "thread", l.thread, "err", err)
	}
}

// Form queues an agent's form (channels.Former) as a prompt: in order with
// the outputs pushed before it, shown at once in a final_only turn, tried
// again through rate limits and outages as a prompt is, and replaced by
// Resolve(key, …) with its outcome as a notice. posted, if set, runs on
// the lane's goroutine with the form's handle or the error that kept it
// from being shown.
func (l *Lane) Form(now time.Time, key string, f channels.Form, posted func(channels.Handle, error)) {
	l.visible(now)
	l.formKeys[promptPrefix+key] = true
	l.enqueue(&item{kind: itemPrompt, msgKind: channels.KindNotice, key: promptPrefix + key, form: &f, posted: posted, since: now})
}

// Form queues a form; see Lane.Form.
func (r *Runner) Form(key string, f channels.Form, posted func(channels.Handle, error)) {
	r.send(event{f: func(l *Lane) { l.Form(time.Now(), key, f, posted) }})
}

// postForm posts the form of prompt item it.
func (l *Lane) postForm(ctx context.Context, it *item) (channels.Handle, error) {
	fm, ok := channels.As[channels.Former](l.ad)
	if !ok {
		return channels.Handle{}, channels.Permanent(errNoForms)
	}
	return fm.Form(ctx, l.thread, *it.form)
}
