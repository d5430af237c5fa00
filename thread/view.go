package thread

// What reaches people of a thread's effects: the projector and delivery
// lane calls that the thread's owner (perform.go) and `gateway replay`
// (package replay, which drives the same Machine with a recorded agent)
// both make, so that a replay shows what production shows.

import (
	"strings"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// Lane is a thread's delivery lane as View calls it, each call at the
// lane's own time: the dispatch.Runner's wall clock in production, a
// virtual clock in a replay.
type Lane interface {
	// AgentStarting: an agent is being started for a message (typing
	// shows).
	AgentStarting()
	BeginTurn()
	Push(outs ...projector.Output)
	Notice(key, text string)
	ReplaceNotice(key, text string)
	SettleNotice(key, text string)
	Prompt(key string, c channels.Choice, posted func(channels.Handle, error))
	Resolve(key, text string)
	StopTyping()
	// Now is the lane's time, which the projector is told with each
	// update (it counts the agent's notices per minute).
	Now() time.Time
}

// View turns the effects people see into projector and lane calls.
type View struct {
	Proj *projector.Projector
	Lane Lane
}

// Notify performs a Notify effect: in the turn's order (InTurn), at once
// under a key the turn's end replaces (Key), or at once.
func (v View) Notify(f Notify) {
	switch {
	case f.Settle:
		v.Lane.SettleNotice(f.Key, sysmsg.Text(f.Notice))
	case f.InTurn:
		v.Lane.Push(projector.Notice{Text: sysmsg.Text(f.Notice)})
	default:
		// Key "": an urgent notice nothing replaces. A keyed one is
		// replaced by the turn's final notice (EndTurn).
		n := f.Notice
		if s, ok := n.(sysmsg.Stopping); ok && f.Key != "" && !v.Proj.CanEdit() {
			// The channel cannot edit "Stopping…" into the final
			// notice: the final words now, which the turn's end then
			// does not repeat (Lane.ReplaceNotice).
			n = s.Done()
		}
		v.Lane.Notice(f.Key, sysmsg.Text(n))
	}
}

// BeginTurn performs the people's part of a BeginTurn effect.
func (v View) BeginTurn() {
	outs := v.Proj.BeginTurn(nil)
	v.Lane.BeginTurn()
	v.Lane.Push(outs...)
}

// Update shows an update of the agent for the running turn, unless the
// turn was stopped (what the agent still says then is not shown). It
// reports whether it was shown.
func (v View) Update(u *projector.Update, stopped bool) bool {
	if stopped {
		return false
	}
	v.Proj.SetNow(v.Lane.Now())
	outs := v.Proj.Apply(u, nil)
	if len(outs) > 0 {
		v.Lane.Push(outs...)
	}
	return true
}

// TurnEnd is how the turn of o reads at its end: its ACP stop reason and
// the error people are told ("" for none). A stopped turn that failed
// was cancelled; a stopped turn's error is not told.
func TurnEnd(o TurnOutcome) (stopReason, errText string) {
	stopReason = o.StopReason
	if o.Err != nil && o.Stopper == "" {
		if IsExited(o.Err) {
			errText = sysmsg.Crashed{Exit: DescribeExit(o.Err)}.Reason()
		} else {
			errText = o.Err.Error()
		}
	}
	if o.Err != nil && o.Stopper != "" {
		stopReason = "cancelled"
	}
	return stopReason, errText
}

// EndTurn performs the people's part of an EndTurn effect (stopReason and
// errText from TurnEnd; grace is the abort grace, told when the agent was
// killed; elapsed is how long the turn took, for the footer). The final
// notice of a stopped turn (the projector's, see
// Projector.StopTurn) takes the place of its "Stopping…" notice o.Ack
// (edited in place where the channel can edit), in order before the
// TurnEnd, which is last.
func (v View) EndTurn(o TurnOutcome, stopReason, errText string, grace, elapsed time.Duration) {
	if o.Stopper != "" {
		v.Proj.StopTurn(sysmsg.Stopped{By: o.Stopper, Interrupt: o.Interrupted, Killed: o.Killed, Grace: grace})
	}
	outs := v.Proj.EndTurnAfter(elapsed, stopReason, errText, nil)
	if o.Forgotten && o.Stopper == "" && len(outs) > 0 {
		// Disowned: another worker has the thread; only the turn's end
		// (its hooks) is left to go through the lane.
		v.Lane.Push(outs[len(outs)-1])
		return
	}
	if o.Ack == "" || len(outs) < 2 {
		v.Lane.Push(outs...)
		return
	}
	n, ok := outs[len(outs)-2].(projector.Notice)
	if !ok || n.Reason != projector.NoticeTurnStopped {
		v.Lane.Push(outs...)
		return
	}
	v.Lane.Push(outs[:len(outs)-2]...)
	v.Lane.ReplaceNotice(o.Ack, n.Text)
	v.Lane.Push(outs[len(outs)-1])
}

// ShowPrompt shows permission prompt id, asking req, with buttons whose
// ids name the prompt (id/option); posted hears whether it was posted. It
// returns the prompt's text, which the settled version repeats.
func (v View) ShowPrompt(id string, req agent.PermissionRequest, cwd string, posted func(channels.Handle, error)) string {
	// The request may name its tool better than the turn's updates did
	// (a subagent's tools are its card's, not the turn's lines).
	if outs := v.Proj.Asked(req.Tool, nil); len(outs) > 0 && req.Subagent == "" {
		v.Lane.Push(outs...)
	}
	view := projector.PermissionPrompt(req.Tool, PermissionOptions(req.Options), cwd)
	if req.Subagent != "" {
		view = v.Proj.FromSubagent(req.Subagent, view)
	}
	options := make([]channels.Option, 0, len(view.Options))
	for _, o := range view.Options {
		options = append(options, channels.Option{ID: id + OptionSep + o.ID, Label: o.Label, Style: o.Style})
	}
	v.Lane.Prompt(id, channels.Choice{Text: view.Text, Options: options}, posted)
	return view.Text
}

// Settle shows how prompt id (whose text was text) was settled.
func (v View) Settle(id, text string, outcome sysmsg.Outcome) {
	switch o := outcome.(type) {
	case sysmsg.Chosen:
		if strings.HasPrefix(o.Kind, "reject") {
			v.Proj.Rejected()
		}
	case sysmsg.Expired:
		if o.Option != "" { // answered with its reject option
			v.Proj.Rejected()
		}
	}
	v.Lane.Resolve(id, sysmsg.Settled(text, outcome))
}

// Settlement is what a SettlePrompt means for a prompt asked at asked,
// settled at now: the answer the agent gets (option, ok), the status
// recorded (an unknown option is cancelled) and the outcome people read.
func Settlement(req agent.PermissionRequest, f SettlePrompt, asked, now time.Time) (option string, ok bool, status store.PromptStatus, outcome sysmsg.Outcome) {
	status, by := f.Status, f.By
	switch status {
	case store.PromptAnswered:
		opt, found := findOption(req.Options, f.Option)
		if !found {
			// A forged or stale option id: treat as cancelled.
			return "", false, store.PromptCancelled, sysmsg.Cancelled{Unknown: true}
		}
		return opt.ID, true, status, sysmsg.Chosen{Name: opt.Name, Kind: opt.Kind, By: displayName(by)}
	case store.PromptExpired:
		opt, found := PickOption(req.Options, "reject")
		return opt.ID, found, status, sysmsg.Expired{After: now.Sub(asked), Option: opt.Name}
	default:
		why := sysmsg.Cancelled{Unshown: f.NotShown}
		if !f.NotShown && (by.Name != "" || by.ID != "") {
			why.By = displayName(by)
		}
		return "", false, status, why
	}
}

// runnerLane is the production Lane: the thread's lane runner.
type runnerLane struct{ r *dispatch.Runner }

func (l runnerLane) AgentStarting() {
	l.r.Do(func(l *dispatch.Lane) { l.AgentStarting(time.Now()) })
}
func (l runnerLane) BeginTurn()                     { l.r.BeginTurn() }
func (l runnerLane) Push(outs ...projector.Output)  { l.r.Push(outs...) }
func (l runnerLane) Notice(key, text string)        { l.r.Notice(key, text) }
func (l runnerLane) ReplaceNotice(key, text string) { l.r.ReplaceNotice(key, text) }
func (l runnerLane) SettleNotice(key, text string)  { l.r.SettleNotice(key, text) }
func (l runnerLane) Resolve(key, text string)       { l.r.Resolve(key, text) }
func (l runnerLane) StopTyping()                    { l.r.Do(stopTyping) }
func (l runnerLane) Now() time.Time                 { return time.Now() }
func (l runnerLane) Prompt(key string, c channels.Choice, posted func(channels.Handle, error)) {
	l.r.Prompt(key, c, posted)
}

// RunnerView is the production View: the thread's projector and its
// lane runner.
func RunnerView(p *projector.Projector, r *dispatch.Runner) View {
	return View{Proj: p, Lane: runnerLane{r}}
}
