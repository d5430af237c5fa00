// Package replay runs a recorded ACP session (raw NDJSON, one JSON-RPC frame
// per line, both directions in wire order) through the real projector and
// dispatch lane into a recording channel, and reports what a chat thread
// would have received, in delivery order. It backs `gateway replay`, the
// operators' preview and the project's black-box test surface.
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
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// Preset is a channel profile for --limits: what the recording channel
// accepts and can do. The zero Preset has no limit, and neither edits nor
// types.
type Preset struct {
	Limits channels.Limits
	Edit   bool
	Typing bool
}

// PresetFor is the profile of a platform with these limits (as its
// adapter package exports them) that edits and types.
func PresetFor(l channels.Limits) Preset {
	return Preset{Limits: l, Edit: true, Typing: true}
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
	r := newRun(o)
	if err := r.feed(ctx, in); err != nil {
		return r.stats, err
	}
	if n := r.stats.Frames; n > 0 && r.stats.Malformed == n {
		return r.stats, &AllMalformedError{Lines: n}
	}
	ops := r.rec.Ops()
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
	rec   *channeltest.Recorder
	lane  *dispatch.Lane
	proj  *projector.Projector
	now   time.Time
	next  time.Time
	outs  []projector.Output
	frame acpwire.Frame
	stats Stats

	clientReqs map[string]string // pending client requests: id → method
	agentReqs  map[string]string // pending agent requests: id → method
	turnAt     time.Time         // when the open turn's prompt was sent (virtual)
}

var thread = channels.ThreadRef{Platform: "replay", Channel: "c1", Thread: "t1"}

func newRun(o Options) *run {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	rec := channeltest.New(channeltest.Options{
		Edit:     o.Preset.Edit,
		Typing:   o.Preset.Typing,
		Limits:   o.Preset.Limits,
		Platform: thread.Platform,
	})
	r := &run{
		o:          o,
		rec:        rec,
		proj:       projector.New(o.Stream),
		now:        time.Unix(1_700_000_000, 0).UTC(),
		clientReqs: map[string]string{},
		agentReqs:  map[string]string{},
	}
	r.proj.SetCanEdit(o.Preset.Edit)
	r.lane = dispatch.NewLane(dispatch.Options{
		Adapter: rec.Adapter(),
		Thread:  thread,
		Stream:  o.Stream,
		Typing:  o.Typing,
		Logger:  slog.New(slog.DiscardHandler),
		OnTurnEnd: func(end projector.TurnEnd) {
			rec.Note(channeltest.Op{Op: "turn_end", StopReason: end.StopReason, Error: end.Err})
		},
	})
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
	if r.proj.InTurn() {
		fmt.Fprintf(r.o.Warn, "line %d: the log ends inside a turn; closing it\n", line)
		r.endTurn(ctx, "", "the log ended before the turn did")
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
			r.outs = r.proj.Apply(&f.Update, r.outs[:0])
			r.push(ctx)
			return
		case "session/prompt":
			r.stats.Turns++
			r.outs = r.proj.BeginTurn(r.outs[:0])
			r.turnAt = r.now
			r.push(ctx)
			r.lane.BeginTurn(r.now)
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
		if ok {
			delete(r.clientReqs, id)
		} else if _, ok = r.agentReqs[id]; ok {
			delete(r.agentReqs, id)
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
				r.endTurn(ctx, "", msg)
			} else {
				r.endTurn(ctx, f.StopReason, "")
			}
		case "session/new", "session/load":
			if f.Kind == acpwire.Result {
				r.modes(f.Result)
			}
		}
	}
	r.step(ctx)
}

func (r *run) endTurn(ctx context.Context, stopReason, errText string) {
	r.outs = r.proj.EndTurnAfter(r.now.Sub(r.turnAt), stopReason, errText, r.outs[:0])
	r.push(ctx)
}

func (r *run) push(ctx context.Context) {
	if len(r.outs) == 0 {
		return
	}
	r.lane.Push(r.now, r.outs...)
	r.step(ctx)
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

// isClientMethod reports whether a request comes from the client side of
// ACP (the gateway); agent requests are session/request_permission, fs/*
// and terminal/*.
func isClientMethod(m string) bool {
	return m != "session/request_permission" && !strings.HasPrefix(m, "fs/") && !strings.HasPrefix(m, "terminal/")
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
