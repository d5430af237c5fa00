package projector

import (
	"bytes"
	"strings"

	"github.com/acpgw/gateway/tooldisplay"
)

// Tool calls: merging an update into the call's state, deferring a
// bare start until its input is known, and emitting its line.

// tool merges a tool_call or tool_call_update and emits its line when the
// meta mode wants it.
func (p *Projector) tool(u *Update, out []Output) []Output {
	if !p.inTurn || u.Tool.ID == "" {
		return out
	}
	t := &p.turn
	ts := t.tools[u.Tool.ID]
	isNew := ts == nil
	if isNew {
		if t.tools == nil {
			t.tools = map[ToolCallID]*toolState{}
		}
		ts = &toolState{id: u.Tool.ID}
		t.tools[u.Tool.ID] = ts
		t.order = append(t.order, ts)
	}
	changed := merge(ts, &u.Tool)
	if (!changed && !isNew) || p.level == levelOff || !p.visible[u.Tag] {
		return out
	}
	if p.level == levelVerbose {
		return p.emitTool(ts, ts.status.Terminal(), out)
	}
	// minimal: one start line, one terminal line.
	switch {
	case ts.status.Terminal():
		if ts.terminal {
			return out
		}
		if ts.deferred {
			p.undefer(ts)
		}
		return p.emitTool(ts, true, out)
	case ts.shown:
		if ts.placeholder && !p.noEdits && !tooldisplay.Placeholder(ts.call()) {
			// The line shown says only "bash": the title and input
			// known now take its place, edited in place. Where the
			// channel cannot edit, a tool posts its start and its end
			// only (the meta cap counts on it): the end says them.
			return p.emitTool(ts, false, out)
		}
		return out
	case ts.bare() && ts.status <= StatusPending:
		if !ts.deferred {
			ts.deferred = true
			t.deferred = append(t.deferred, ts)
		}
		return out
	default:
		if ts.deferred {
			p.undefer(ts)
		}
		return p.emitTool(ts, false, out)
	}
}

// merge applies a sparse update to the tool's state and reports whether
// anything visible changed. Status only moves forward.
func merge(ts *toolState, u *ToolUpdate) bool {
	changed := false
	if u.HasTitle && u.Title != "" && u.Title != ts.title {
		ts.title = u.Title
		changed = true
	}
	if u.Kind != "" && u.Kind != ts.kind {
		ts.kind = u.Kind
		changed = true
	}
	if u.Status > ts.status && u.Status != StatusNone {
		ts.status = u.Status
		changed = true
	}
	if len(u.RawInput) > 0 && !emptyJSON(u.RawInput) && !bytes.Equal(u.RawInput, ts.rawInput) {
		ts.rawInput = append(ts.rawInput[:0:0], u.RawInput...)
		changed = true
	}
	if len(u.Locations) > 0 && !sameLocations(ts.locations, u.Locations) {
		ts.locations = ts.locations[:0:0]
		for _, l := range u.Locations {
			ts.locations = append(ts.locations, l.Path)
		}
		changed = true
	}
	return changed
}

func sameLocations(have []string, l []Location) bool {
	if len(have) != len(l) {
		return false
	}
	for i := range l {
		if have[i] != l[i].Path {
			return false
		}
	}
	return true
}

// emptyJSON reports whether raw is null, {} or [] (ignoring spaces).
func emptyJSON(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	switch len(raw) {
	case 0:
		return true
	case 2:
		return raw[0] == '{' && raw[1] == '}' || raw[0] == '[' && raw[1] == ']'
	case 4:
		return string(raw) == "null"
	}
	if raw[0] == '{' || raw[0] == '[' {
		inner := bytes.TrimSpace(raw[1 : len(raw)-1])
		return len(inner) == 0
	}
	return false
}

// bare reports whether a tool has nothing to show yet but a placeholder
// title: agents announce tools this way before filling them in.
func (ts *toolState) bare() bool { return tooldisplay.Placeholder(ts.call()) }

// call is the tool's state as tooldisplay reads it.
func (ts *toolState) call() tooldisplay.Call {
	return tooldisplay.Call{
		Kind:      ts.kind,
		Title:     ts.title,
		RawInput:  ts.rawInput,
		Status:    ts.status.String(),
		Locations: ts.locations,
	}
}

// Asked merges what a permission request says of its tool (agents send
// the real title and input there, some only there) into the tool's
// state, and shows a line already shown with a placeholder with them
// instead. A tool the turn has not announced is left alone: the prompt
// shows it.
func (p *Projector) Asked(tu ToolUpdate, out []Output) []Output {
	if !p.inTurn || tu.ID == "" || p.turn.tools[tu.ID] == nil {
		return out
	}
	tu.Status = StatusNone // a request's "pending" is no news of the tool
	u := Update{Tag: TagToolCallUpdate, RawTag: "tool_call_update", Tool: tu}
	return p.tool(&u, out)
}

func (p *Projector) undefer(ts *toolState) {
	ts.deferred = false
	d := p.turn.deferred
	for i, x := range d {
		if x == ts {
			p.turn.deferred = append(d[:i], d[i+1:]...)
			return
		}
	}
}

// flushDeferred emits the start lines held back for bare tools, so that
// whatever comes next is not shown before them.
func (p *Projector) flushDeferred(out []Output) []Output {
	if len(p.turn.deferred) == 0 {
		return out
	}
	held := p.turn.deferred
	p.turn.deferred = nil
	for _, ts := range held {
		ts.deferred = false
		out = p.emitTool(ts, false, out)
	}
	return out
}

// emitTool renders the tool's line and appends it unless it repeats the
// last one or the meta cap forbids it. final marks a terminal line, which
// may still edit an already visible tool past the cap.
func (p *Projector) emitTool(ts *toolState, final bool, out []Output) []Output {
	call := ts.call()
	line := tooldisplay.Summary(call)
	if line == ts.last {
		if final {
			ts.terminal = true
		}
		return out
	}
	var ok bool
	if out, ok = p.spendMeta(p.toolCost(ts, final), out); !ok {
		return out
	}
	// A start line where the channel cannot edit has paid for the room
	// of its terminal line; the terminal line spends it.
	ts.reserved = p.noEdits && !final && (!ts.shown || ts.reserved)
	out = p.flushDeferred(out) // tools announced earlier come first
	first := !ts.shown
	ts.shown = true
	ts.last = line
	ts.placeholder = tooldisplay.Placeholder(call)
	p.turn.lastMeta = line
	if final {
		ts.terminal = true
	}
	return append(out, Tool{
		ID:     ts.id,
		Text:   cutKeepingStatus(line, p.set.MaxToolSummaryChars),
		Status: ts.status,
		First:  first,
		CutOff: p.cutOffLine(ts, line),
	})
}

// cutOffLine is a running tool's line as the turn's end would render it
// if the turn were cut off now (status cancelled), from its line as it is
// (a tooldisplay line ends in " · <status>" when it has a status): the
// same as rendering it again, without parsing its input again; "" for a
// terminal tool.
func (p *Projector) cutOffLine(ts *toolState, line string) string {
	if ts.status.Terminal() {
		return ""
	}
	if ts.status != StatusNone {
		if i := strings.LastIndex(line, " · "); i >= 0 {
			line = line[:i]
		}
	}
	return cutKeepingStatus(line+cancelledSuffix, p.set.MaxToolSummaryChars)
}

// cancelledSuffix is what the status cancelled adds to a tool's line.
var cancelledSuffix = strings.TrimPrefix(
	tooldisplay.Summary(tooldisplay.Call{Status: StatusCancelled.String()}),
	tooldisplay.Summary(tooldisplay.Call{}))
