// Package replay runs a recorded ACP session (raw NDJSON, one JSON-RPC frame
// per line, both directions in wire order) through the thread machine that
// runs production threads (thread.Machine), with the recorded frames as
// the agent, and the real projector and dispatch lane into a recording
// channel, and reports what a chat thread would have received, in
// delivery order. It backs `gateway replay`, the operators' preview and
// the project's black-box test surface.
//
// The frames become the machine's events: a session/prompt request is a
// person's message (PromptIn; its agent starts at once), a
// session/request_permission request is asked (PermissionAsked) and shown
// as a prompt, its response is the recorded answer (a choice, or the stop
// that cancelled it), a session/cancel is a stop (StopIn), the
// session/prompt response ends the turn (TurnDone). The effects reach the
// projector and lane through thread.View, as in production. The
// machine's timers do not run: the recording says what happened.
//
// Time is virtual: each frame advances the clock by Options.FrameInterval,
// and pending work (edit throttles, held blocks, typing refreshes) runs at
// its due time between frames. The output depends only on the input and
// the options.
package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/typing"
)

// Preset is a channel profile for --limits: what the recording channel
// accepts and can do. The zero Preset has no limit, and neither edits,
// types nor shows buttons (permission prompts are then answered by
// number).
type Preset struct {
	Limits channels.Limits
	Edit   bool
	Typing bool
	// Buttons: permission prompts are shown with buttons
	// (channels.Prompter).
	Buttons bool
	// Uploads: files (the agent's pictures) are posted as uploads
	// (channels.Uploader), within Limits.MaxUploadBytes.
	Uploads bool
}

// PresetFor is the profile of a platform with these limits (as its
// adapter package exports them) that edits, types, shows buttons and,
// where its limits let it, takes files.
func PresetFor(l channels.Limits) Preset {
	return Preset{Limits: l, Edit: true, Typing: true, Buttons: true, Uploads: l.MaxUploadBytes > 0}
}

// Options configure a replay.
type Options struct {
	Stream projector.Settings
	Typing typing.Config
	Preset Preset
	// FrameInterval is the virtual time between two frames.
	FrameInterval time.Duration
	// Summary adds a last line with counts.
	Summary bool
	// Warn receives one line per malformed or unusable input line.
	Warn io.Writer
	// Person is who sends the prompts, answers the permission prompts
	// and stops the turns; the zero Author reads "someone".
	Person channels.Author
}

// DefaultFrameInterval is the virtual time between frames.
const DefaultFrameInterval = 20 * time.Millisecond

// Stats are the counts of a replay.
type Stats struct {
	Frames    int `json:"frames"`
	Malformed int `json:"malformed"`
	Turns     int `json:"turns"`
	Sends     int `json:"sends"`
	Edits     int `json:"edits"`
	Typing    int `json:"typing"`
	// Chars counts the code points of every message's final text.
	Chars int `json:"chars"`
}

// Run reads frames from in and writes the recorded chat operations to out
// as JSON lines. Malformed lines are reported to Options.Warn and skipped;
// when every line is, Run writes nothing and returns *AllMalformedError.
func Run(ctx context.Context, in io.Reader, out io.Writer, o Options) (Stats, error) {
	r := newRun(ctx, o)
	if err := r.feed(ctx, in); err != nil {
		return r.stats, err
	}
	if n := r.stats.Frames; n > 0 && r.stats.Malformed == n {
		return r.stats, &AllMalformedError{Lines: n}
	}
	ops := r.rec.Ops()
	r.questionKinds(ops)
	w := bufio.NewWriterSize(out, 64<<10)
	var line []byte
	for _, op := range ops {
		line = append(op.AppendJSON(line[:0]), '\n')
		if _, err := w.Write(line); err != nil {
			return r.stats, fmt.Errorf("write output: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return r.stats, fmt.Errorf("write output: %w", err)
	}
	r.count(ops)
	enc := json.NewEncoder(out)
	if o.Summary {
		if err := enc.Encode(struct {
			Op string `json:"op"`
			Stats
		}{"summary", r.stats}); err != nil {
			return r.stats, fmt.Errorf("write output: %w", err)
		}
	}
	return r.stats, nil
}

// AllMalformedError is Run's error when no line of the input was a
// JSON-RPC message: it is not an ACP event log at all.
type AllMalformedError struct {
	Lines int // the lines that were not blank
}

func (e *AllMalformedError) Error() string {
	return fmt.Sprintf("all %d lines are malformed: the input is not an ACP event log (one JSON-RPC message per line)", e.Lines)
}

type run struct {
	o     Options
	ctx   context.Context
	rec   *channeltest.Recorder
	lane  *dispatch.Lane
	proj  *projector.Projector
	view  thread.View
	m     *thread.Machine
	now   time.Time
	next  time.Time
	frame acpwire.Frame
	stats Stats
	cwd   string // the session's working directory (session/new, session/load)

	clientReqs map[string]string // pending client requests: id → method
	agentReqs  map[string]string // pending agent requests: id → method
	prompts    map[string]*prompt
	events     []thread.Event // to apply, in order
	applying   bool
	turnAt     time.Time // when the open turn's prompt was sent (virtual)

	// questions (question.go): by question id; the question of a url
	// question's elicitation id; the texts of their cards and outcomes.
	questions     map[string]*question
	elicitations  map[string]string
	questionTexts map[string]bool

	// children are the subagents' session ids the session announced
	// (subagent.go).
	children map[string]bool
}

// prompt is a permission request shown as a prompt.
type prompt struct {
	req   agent.PermissionRequest
	asked time.Time
	text  string
	shown bool // posted in the thread
}

var replayThread = channels.ThreadRef{Platform: "replay", Channel: "c1", Thread: "t1"}

// never is a wait the machine never reaches in a replay (its timers do
// not run): the abort grace and the permission timeout.
const never = 24 * time.Hour

func newRun(ctx context.Context, o Options) *run {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	rec := channeltest.New(channeltest.Options{
		Edit:     o.Preset.Edit,
		Typing:   o.Preset.Typing,
		Prompt:   o.Preset.Buttons,
		Upload:   o.Preset.Uploads,
		Limits:   o.Preset.Limits,
		Platform: replayThread.Platform,
	})
	r := &run{
		o:          o,
		ctx:        ctx,
		rec:        rec,
		proj:       projector.New(o.Stream),
		m:          thread.NewMachine(thread.MachineConfig{Busy: thread.BusyQueue, Grace: never}),
		now:        time.Unix(1_700_000_000, 0).UTC(),
		clientReqs: map[string]string{},
		agentReqs:  map[string]string{},
		prompts:    map[string]*prompt{},

		questions:     map[string]*question{},
		elicitations:  map[string]string{},
		questionTexts: map[string]bool{},
		children:      map[string]bool{},
	}
	r.proj.SetCanEdit(o.Preset.Edit)
	r.lane = dispatch.NewLane(dispatch.Options{
		Adapter: rec.Adapter(),
		Thread:  replayThread,
		Stream:  o.Stream,
		Typing:  o.Typing,
		Logger:  slog.New(slog.DiscardHandler),
		OnTurnEnd: func(end projector.TurnEnd) {
			rec.Note(channeltest.Op{Op: "turn_end", StopReason: end.StopReason, Error: end.Err})
		},
	})
	r.view = thread.View{Proj: r.proj, Lane: virtualLane{r}}
	return r
}

func (r *run) feed(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		r.stats.Frames++
		r.advance(ctx, r.now.Add(r.o.FrameInterval))
		if err := acpwire.Decode(b, &r.frame); err != nil {
			r.stats.Malformed++
			fmt.Fprintf(r.o.Warn, "line %d: skipped: %v\n", line, err)
			continue
		}
		r.handle(ctx, &r.frame, line)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	if r.m.Active() {
		fmt.Fprintf(r.o.Warn, "line %d: the log ends inside a turn; closing it\n", line)
		r.apply(thread.TurnDone{Err: errors.New("the log ended before the turn did")})
	}
	// Drain: run every pending deadline.
	for i := 0; i < 100_000; i++ {
		r.step(ctx)
		if r.next.IsZero() {
			break
		}
		r.now = r.next
	}
	return nil
}

// advance moves virtual time to t, running work that falls due on the way.
func (r *run) advance(ctx context.Context, t time.Time) {
	for !r.next.IsZero() && !r.next.After(t) {
		r.now = r.next
		r.step(ctx)
	}
	r.now = t
}

func (r *run) step(ctx context.Context) { r.next = r.lane.Step(ctx, r.now) }

func (r *run) handle(ctx context.Context, f *acpwire.Frame, line int) {
	switch f.Kind {
	case acpwire.Request, acpwire.Notification:
		switch f.Method {
		case "session/update":
			r.family(&f.Update)
			if r.m.Active() {
				r.apply(thread.AgentOutput{})
			}
			if r.view.Update(&f.Update, r.m.Stopped()) {
				r.step(ctx)
			}
			return
		case "session/prompt":
			r.turnAt = r.now
			r.apply(thread.PromptIn{In: channels.Inbound{Thread: replayThread, Author: r.o.Person}})
		case "session/cancel":
			// The stop of the running turn; one that comes after the
			// turn was stopped (its prompts' cancelled answers came
			// first) or ended is the same stop, late. A subagent's
			// follows its parent's.
			if r.m.Active() && !r.m.Stopped() && !r.children[sessionOf(f.Params)] {
				r.apply(thread.StopIn{By: r.o.Person})
			}
		case "session/new", "session/load":
			r.cwdOf(f.Params)
		case "session/request_permission":
			r.asked(f, line)
		case "elicitation/create":
			r.questionAsked(f, line)
		case "elicitation/complete":
			r.questionDone(f.Params)
		}
		if f.Kind == acpwire.Request {
			if isClientMethod(f.Method) {
				r.clientReqs[f.IDString()] = f.Method
			} else {
				r.agentReqs[f.IDString()] = f.Method
			}
		}
	case acpwire.Result, acpwire.Error:
		id := f.IDString()
		method, ok := r.clientReqs[id]
		if agentMethod, both := r.agentReqs[id]; ok && both && answers(agentMethod, f) && !answers(method, f) {
			// The id is pending on both sides (each numbers its own
			// requests; a gateway's log has its prompt and an agent's
			// permission request both at 2): the response is the one its
			// result fits.
			ok = false
		}
		if ok {
			delete(r.clientReqs, id)
		} else if method, ok = r.agentReqs[id]; ok {
			delete(r.agentReqs, id)
			switch method {
			case "session/request_permission":
				r.answered(f, line)
			case "elicitation/create":
				r.questionAnswered(f, line)
			}
			return
		} else {
			fmt.Fprintf(r.o.Warn, "line %d: response to no pending request (id %s)\n", line, id)
			return
		}
		switch method {
		case "session/prompt":
			if f.Kind == acpwire.Error {
				msg := "error"
				if f.Err != nil {
					msg = f.Err.Message
				}
				r.apply(thread.TurnDone{Err: errors.New(msg)})
			} else {
				r.apply(thread.TurnDone{StopReason: f.StopReason})
			}
		case "session/new", "session/load":
			if f.Kind == acpwire.Result {
				r.modes(f.Result)
			}
		}
	}
	r.step(ctx)
}

// promptID is the prompt of the agent's request id: deterministic, so
// the output is.
func promptID(requestID string) string { return "perm-" + requestID }

// asked is the agent's session/request_permission f: asked of people.
func (r *run) asked(f *acpwire.Frame, line int) {
	req, err := agent.DecodePermissionRequest(f.Params)
	if err != nil {
		fmt.Fprintf(r.o.Warn, "line %d: permission request not shown: %v\n", line, err)
		return
	}
	if r.children[req.SessionID] {
		req.Subagent = req.SessionID
	}
	id := promptID(f.IDString())
	r.prompts[id] = &prompt{req: req, asked: r.now}
	r.apply(thread.PermissionAsked{ID: id, Timeout: never})
}

// answered is the recorded answer f to a permission request: a choice,
// or "cancelled". A cancelled prompt of a running turn was cancelled by
// the stop whose session/cancel follows (the gateway answers the prompts
// first); otherwise the agent withdrew it.
func (r *run) answered(f *acpwire.Frame, line int) {
	id := promptID(f.IDString())
	if !r.m.Pending(id) {
		return // never shown (asked after a stop), or not decoded
	}
	// Nobody answers a prompt they cannot see: time runs until the lane
	// has posted it (it may wait behind paced text).
	if p := r.prompts[id]; p != nil {
		for i := 0; !p.shown && !r.next.IsZero() && i < 100_000; i++ {
			r.now = later(r.now, r.next)
			r.step(r.ctx)
		}
	}
	option, ok := "", false
	if f.Kind == acpwire.Result {
		var err error
		if option, ok, err = agent.DecodePermissionOutcome(f.Result); err != nil {
			fmt.Fprintf(r.o.Warn, "line %d: %v; taken as cancelled\n", line, err)
		}
	}
	switch {
	case ok:
		r.apply(thread.PermissionAnswer{ID: id, Option: option, By: r.o.Person, Approver: true})
	case r.m.Active() && !r.m.Stopped():
		r.apply(thread.StopIn{By: r.o.Person})
	default:
		r.apply(thread.PermissionWithdrawn{ID: id})
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// apply runs the machine on e and performs its effects; events that
// performing them raises are applied after, in order.
func (r *run) apply(e thread.Event) {
	r.events = append(r.events, e)
	if r.applying {
		return
	}
	r.applying = true
	for len(r.events) > 0 {
		e := r.events[0]
		r.events = r.events[1:]
		_, fx := r.m.Apply(r.now, e)
		for _, f := range fx {
			r.perform(f)
		}
	}
	r.events = nil
	r.applying = false
}

// perform does what the machine asked for with the recorded agent: the
// agent is there at once, its calls were recorded, and what reaches
// people goes through thread.View as in production.
func (r *run) perform(f thread.Effect) {
	switch f := f.(type) {
	case thread.StartAgent:
		r.view.Lane.AgentStarting()
		r.apply(thread.SlotTaken{})
		r.apply(thread.AgentStarted{})
	case thread.BeginTurn:
		r.stats.Turns++
		r.view.BeginTurn()
	case thread.StopTyping:
		r.view.Lane.StopTyping()
	case thread.Notify:
		r.view.Notify(f)
	case thread.ShowPrompt:
		if p := r.prompts[f.ID]; p != nil {
			p.text = r.view.ShowPrompt(f.ID, p.req, r.cwd, func(_ channels.Handle, err error) {
				if err != nil {
					r.apply(thread.PermissionUnshown{ID: f.ID})
					return
				}
				p.shown = true
			})
		}
	case thread.SettlePrompt:
		p := r.prompts[f.ID]
		delete(r.prompts, f.ID)
		if p == nil || f.Unshown || f.Shutdown {
			break
		}
		_, _, _, outcome := thread.Settlement(p.req, f, p.asked, r.now)
		r.view.Settle(f.ID, p.text, outcome)
	case thread.ShowQuestion:
		r.showQuestion(f.ID)
	case thread.SettleQuestion:
		r.settleQuestion(f)
	case thread.EndTurn:
		stop, errText := thread.TurnEnd(f.Turn)
		r.view.EndTurn(f.Turn, stop, errText, never, r.now.Sub(r.turnAt))
	}
	// The rest (cancel, kill, stop the agent, refusals, eviction) acts
	// on the agent or the platform, which the recording stands for.
}

// virtualLane is thread.Lane on the replay's virtual clock; each call
// runs what falls due at once.
type virtualLane struct{ r *run }

func (l virtualLane) AgentStarting()          { l.r.lane.AgentStarting(l.r.now); l.step() }
func (l virtualLane) BeginTurn()              { l.r.lane.BeginTurn(l.r.now); l.step() }
func (l virtualLane) StopTyping()             { l.r.lane.StopTyping(); l.step() }
func (l virtualLane) Now() time.Time          { return l.r.now }
func (l virtualLane) Notice(key, text string) { l.r.lane.Notice(l.r.now, key, text); l.step() }
func (l virtualLane) ReplaceNotice(key, text string) {
	l.r.lane.ReplaceNotice(l.r.now, key, text)
	l.step()
}
func (l virtualLane) SettleNotice(key, text string) {
	l.r.lane.SettleNotice(l.r.now, key, text)
	l.step()
}
func (l virtualLane) Resolve(key, text string) { l.r.lane.Resolve(l.r.now, key, text); l.step() }
func (l virtualLane) Push(outs ...projector.Output) {
	if len(outs) > 0 {
		l.r.lane.Push(l.r.now, outs...)
		l.step()
	}
}
func (l virtualLane) Prompt(key string, c channels.Choice, posted func(channels.Handle, error)) {
	l.r.lane.Prompt(l.r.now, key, c, posted)
	l.step()
}
func (l virtualLane) step() { l.r.step(l.r.ctx) }

// cwdOf reads the working directory of a session/new or session/load
// request, against which permission prompts show paths.
func (r *run) cwdOf(params []byte) {
	var p struct {
		Cwd string `json:"cwd"`
	}
	if json.Unmarshal(params, &p) == nil {
		r.cwd = p.Cwd
	}
}

// modes reads the session's modes from a session/new or session/load
// result (a cold path: once per session).
func (r *run) modes(result []byte) {
	var res struct {
		Modes *struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	if json.Unmarshal(result, &res) != nil || res.Modes == nil {
		return
	}
	names := map[string]string{}
	for _, m := range res.Modes.AvailableModes {
		names[m.ID] = m.Name
	}
	r.proj.SetModes(res.Modes.CurrentModeID, names)
}

// answers reports whether response f can answer a request of method:
// a prompt's result has a stopReason, a permission request's an outcome,
// a question's an action. Any other method, or an error, may be
// answered by anything.
func answers(method string, f *acpwire.Frame) bool {
	if f.Kind != acpwire.Result {
		return true
	}
	var key string
	switch method {
	case "session/prompt":
		return f.StopReason != ""
	case "session/request_permission":
		key = "outcome"
	case "elicitation/create":
		key = "action"
	default:
		return true
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(f.Result, &res) != nil {
		return false
	}
	_, has := res[key]
	return has
}

// isClientMethod reports whether a request comes from the client side of
// ACP (the gateway); agent requests are session/request_permission, fs/*,
// terminal/* and elicitation/*.
func isClientMethod(m string) bool {
	return m != "session/request_permission" && !strings.HasPrefix(m, "fs/") && !strings.HasPrefix(m, "terminal/") && !strings.HasPrefix(m, "elicitation/")
}

func (r *run) count(ops []channeltest.Op) {
	for _, op := range ops {
		switch op.Op {
		case "send", "prompt":
			r.stats.Sends++
		case "edit":
			r.stats.Edits++
		case "typing":
			r.stats.Typing++
		}
	}
	for _, m := range r.rec.Messages() {
		r.stats.Chars += utf8.RuneCountInString(m.Text)
	}
}
