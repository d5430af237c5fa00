// Package projector turns an ACP session/update stream into what people in
// a chat thread should see: reply text, one line per tool call, status
// lines, notices, a plan and thoughts, in order.
//
// It is pure: no I/O, no goroutines, no clock, no platform names. The caller
// feeds decoded updates and turn boundaries and receives Outputs; delivery
// (splitting, editing in place, pacing, holding for final_only) is the
// dispatch package's job. Every projection rule lives here:
//
//   - tag gating by Settings.TagVisibility; hidden updates still update
//     state (tools merge, usage is recorded); unknown tags show only in
//     verbose mode;
//   - metaMode off/minimal/verbose for tool and status lines;
//   - text chunks as deltas or cumulative snapshots (see Accumulator);
//   - thoughts, classified by metadata only, never enter the reply;
//   - budgets: maxTurnChars with one truncation notice, line cuts, and a
//     cap on meta messages posted per turn (see "The meta cap" below);
//   - tool state merged per toolCallId, rendered by tooldisplay;
//   - turn state reset at turn end; open tools finalised when a turn ends.
//
// Updates outside a turn (setup, session/load history, late updates after
// the turn's response) change session state only and are never projected,
// but for the agent's notices (ACP notice), at most NoticesPerMinute a
// minute (SetNow tells the time).
//
// # The meta cap
//
// Settings.MaxMetaEventsPerTurn counts meta messages posted in a turn: tool
// lines, status lines, mode notices and plans. Once it is reached, no new
// tool or status message is posted in that turn, and one notice says so.
// What a message costs depends on whether the channel edits in place
// (SetCanEdit):
//
//   - where it can, a tool's first line and a plan's first version cost
//     one each; later states of a tool and later plans edit the message
//     already shown and are free;
//   - where it cannot, every state is a new message, so showing a tool's
//     start line costs two: the line and the room reserved for its
//     terminal line. The terminal line then spends the reservation, so a
//     started tool is never left without its outcome, however many tools
//     follow. Intermediate lines (verbose mode) and later plans cost one.
//
// Once the cap has refused a message, the rest of the turn posts no new
// meta message even if a cheaper one would still fit, so that the notice
// stays true; reserved terminal lines still come.
package projector

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/tooldisplay"
	"github.com/rivo/uniseg"
)

type metaLevel uint8

const (
	levelOff metaLevel = iota
	levelMinimal
	levelVerbose
)

// Projector projects one ACP session. It is not safe for concurrent use;
// one owner (the thread's lane) drives it.
type Projector struct {
	suppressed string // why the last Apply showed nothing
	set        Settings
	level      metaLevel
	visible    [numTags]bool
	visUnknown map[string]bool // explicit settings for tags the projector does not know

	// Session state, kept across turns.
	title     string
	commands  []Command
	modeID    string
	modeNames map[string]string
	lastUsage UsageUpdate
	kids      map[string]*kid // the session's subagents (subagent.go)
	turns     int             // turns begun, for the subagents' card keys

	// The agent's notices outside a turn: when the last ones were shown,
	// and whether the hiding of the next ones was said (acp133.go).
	now           time.Time
	notices       [NoticesPerMinute]time.Time
	noticesHidden bool

	inTurn  bool
	turn    turn
	noEdits bool // the channel cannot edit: every state is a new message
}

// turn is the state of one prompt turn; it is reset at turn end.
type turn struct {
	text    Accumulator
	thought Accumulator
	reply   strings.Builder // the whole reply text of the turn, visible or not

	visibleRunes int
	truncated    bool
	// posted: the last text shown was a posted message (Message), so the
	// turn's next text starts a new message.
	posted bool

	metaCount  int
	metaCapped bool

	stopped  *sysmsg.Stopped // someone stopped the turn (StopTurn)
	rejected bool            // a permission of the turn was rejected (Rejected)

	tools    map[ToolCallID]*toolState
	order    []*toolState // in first-seen order
	deferred []*toolState // minimal mode: start lines held until informative

	lastStatus  map[string]string // last status text per tag (uncut)
	lastMeta    string            // the immediately previous meta text (verbose dedupe)
	usageShown  bool
	shownUsed   int64
	shownSize   int64
	usage       UsageUpdate
	usageFrames int

	cards     map[string]*kidCard // subagents' cards, by child (subagent.go)
	cardOrder []*kid              // the children with a card, in order
	plan      string              // the plan message shown

	// ACP 1.33 (acp133.go).
	legacyPlan  []PlanEntry // the last plan update's entries
	plans       []*planDoc  // plan_update's plans, in first-seen order
	compactions map[string]*compaction

	images map[[sha256.Size]byte]bool // the pictures shown (image.go)
}

type toolState struct {
	id        ToolCallID
	title     string
	kind      string
	status    ToolStatus
	rawInput  []byte
	locations []string

	shown    bool   // a line was emitted
	reserved bool   // the meta cap holds room for the terminal line
	deferred bool   // waiting in turn.deferred
	last     string // last emitted line, uncut
	// placeholder: the last line emitted had only a placeholder label.
	placeholder bool
	terminal    bool // the terminal line was emitted
}

// New returns a projector with settings s (see DefaultSettings).
func New(s Settings) *Projector {
	p := &Projector{}
	p.SetSettings(s)
	return p
}

// SetSettings replaces the settings; it takes effect from the next update.
func (p *Projector) SetSettings(s Settings) {
	p.set = s
	switch s.MetaMode {
	case MetaOff:
		p.level = levelOff
	case MetaVerbose:
		p.level = levelVerbose
	default:
		p.level = levelMinimal
	}
	def := DefaultTagVisibility()
	p.visUnknown = nil
	for t := TagUnknown + 1; t < numTags; t++ {
		name := t.String()
		v, ok := s.TagVisibility[name]
		if !ok {
			v = def[name]
			if t == TagUsage {
				// showUsage alone is enough to see usage lines.
				v = s.ShowUsage
			}
		}
		p.visible[t] = v
	}
	// Plan operations follow the plan unless listed.
	for _, t := range [...]Tag{TagPlanUpdate, TagPlanRemoved} {
		if _, ok := s.TagVisibility[t.String()]; !ok {
			p.visible[t] = p.visible[TagPlan]
		}
	}
	for name, v := range s.TagVisibility {
		if ParseTag(name) == TagUnknown {
			if p.visUnknown == nil {
				p.visUnknown = map[string]bool{}
			}
			p.visUnknown[name] = v
		}
	}
}

// SetCanEdit tells the projector whether the channel edits messages in
// place (the default) or posts every state as a new message; the meta cap
// counts posted messages (see the package comment). It takes effect from
// the next turn.
func (p *Projector) SetCanEdit(can bool) { p.noEdits = !can }

// CanEdit reports what SetCanEdit said last (true by default).
func (p *Projector) CanEdit() bool { return !p.noEdits }

// Settings returns the settings in use.
func (p *Projector) Settings() Settings { return p.set }

// SetModes tells the projector the session's modes (from session/new or
// session/load) so that mode changes read with names.
func (p *Projector) SetModes(current string, names map[string]string) {
	p.modeID = current
	p.modeNames = names
}

// Title returns the session title set by the agent's session_info_update,
// for naming the thread; "" when none (or cleared).
func (p *Projector) Title() string { return p.title }

// Commands returns the agent's available commands (session state).
func (p *Projector) Commands() []Command { return p.commands }

// Mode returns the current mode id.
func (p *Projector) Mode() string { return p.modeID }

// LastUsage returns the last usage the agent reported in the session.
func (p *Projector) LastUsage() UsageUpdate { return p.lastUsage }

// TurnUsage returns the last usage reported in the current turn and how
// many usage_update frames the turn had. Recorded whatever is shown.
func (p *Projector) TurnUsage() (UsageUpdate, int) { return p.turn.usage, p.turn.usageFrames }

// TurnText returns the turn's whole reply text so far, visible or not.
func (p *Projector) TurnText() string { return p.turn.reply.String() }

// InTurn reports whether a turn is open.
func (p *Projector) InTurn() bool { return p.inTurn }

// BeginTurn opens a turn (a session/prompt was sent). A turn still open is
// ended first as cancelled.
func (p *Projector) BeginTurn(out []Output) []Output {
	if p.inTurn {
		out = p.EndTurn("cancelled", "", out)
	}
	p.inTurn = true
	p.turns++
	return out
}

// Apply projects one update and appends what should be seen to out. When
// it appends nothing, Suppressed says why.
func (p *Projector) Apply(u *Update, out []Output) []Output {
	n := len(out)
	out = p.apply(u, out)
	p.suppressed = ""
	if len(out) == n {
		p.suppressed = p.why(u)
	}
	return out
}

func (p *Projector) apply(u *Update, out []Output) []Output {
	if u.Child != "" {
		return p.child(u, out)
	}
	switch u.Tag {
	case TagSubagent:
		return p.subagent(u, out)
	case TagSessionMessage, TagSessionMessageChunk:
		// A message between sessions (the task given to a child): never
		// the answer's text.
		p.message(u)
		return out
	case TagAgentMessageChunk:
		if u.Thought {
			return p.thought(u, out)
		}
		if u.Image.Known() {
			return p.image(u.Image, out)
		}
		return p.text(u, out)
	case TagAgentThoughtChunk:
		return p.thought(u, out)
	case TagUserMessageChunk:
		// The user's own words (history, echoes): never a message.
		return out
	case TagToolCall, TagToolCallUpdate:
		return p.toolImages(u, p.tool(u, out))
	case TagPlan:
		return p.planUpdate(u, out)
	case TagAvailableCommands:
		p.commands = u.Commands
		return out
	case TagCurrentMode:
		return p.mode(u, out)
	case TagUsage:
		return p.usage(u, out)
	case TagConfigOption:
		return p.config(u, out)
	case TagSessionInfo:
		return p.sessionInfo(u, out)
	// ACP 1.33 (acp133.go).
	case TagNotice:
		return p.notice(u, out)
	case TagCompaction, TagCompactionChunk:
		return p.compaction(u, out)
	case TagPlanUpdate, TagPlanRemoved:
		return p.planOp(u, out)
	}
	return p.unknown(u, out)
}

// StopTurn tells the projector that someone stopped the open turn: its
// end (EndTurn) says s, whatever the agent's stopReason or error. Said
// again, the last s counts.
func (p *Projector) StopTurn(s sysmsg.Stopped) {
	if p.inTurn {
		p.turn.stopped = &s
	}
}

// Rejected tells the projector that a permission of the open turn was
// rejected: a turn the agent then ends cancelled, nobody having stopped
// it, says the agent ended it after the rejection (Codex does).
func (p *Projector) Rejected() {
	if p.inTurn {
		p.turn.rejected = true
	}
}

// EndTurn closes the turn with the agent's stopReason, or with errText when
// the prompt failed. Tools still open are finalised, a notice says why an
// unusual turn ended (or who stopped it, see StopTurn), and a TurnEnd is
// the last output.
func (p *Projector) EndTurn(stopReason, errText string, out []Output) []Output {
	return p.EndTurnAfter(-1, stopReason, errText, out)
}

// EndTurnAfter is EndTurn for a turn that lasted elapsed (negative:
// unknown); with acp.stream.footer "compact" the turn ends with a footer
// line (see footer). The projector reads no clock: the caller measures.
func (p *Projector) EndTurnAfter(elapsed time.Duration, stopReason, errText string, out []Output) []Output {
	if !p.inTurn {
		return out
	}
	t := &p.turn
	// A tool whose line still waits for its input never ran (a stop
	// cancelled its permission prompt, say): it shows cancelled too.
	held := t.deferred
	t.deferred = nil
	for _, ts := range held {
		ts.deferred = false
	}
	for _, ts := range t.order {
		if ts.status.Terminal() {
			continue
		}
		ts.status = StatusCancelled
		if (ts.shown && !ts.terminal || slices.Contains(held, ts)) && p.level != levelOff {
			out = p.emitTool(ts, true, out)
		}
	}
	if t.stopped != nil || stopReason == "cancelled" || errText != "" {
		out = p.endCards(out)
	}
	out = p.endCompactions(out)
	if t.stopped != nil {
		// Whatever the agent answered to the cancel, the people in the
		// thread read who stopped the turn.
		out = append(out, Notice{Text: sysmsg.Text(*t.stopped), Reason: NoticeTurnStopped})
	} else if n := endNotice(stopReason, errText, t.rejected); n.Text != "" {
		out = append(out, n)
	}
	if p.set.Footer == FooterCompact {
		if line := p.footer(elapsed); line != "" {
			out = append(out, Status{Tag: FooterTag, Text: line})
		}
	}
	out = append(out, TurnEnd{StopReason: stopReason, Err: errText})
	p.inTurn = false
	p.turn = turn{}
	return out
}

func endNotice(stopReason, errText string, rejected bool) Notice {
	if errText != "" {
		return Notice{Text: sysmsg.Text(sysmsg.Failed{Err: oneLine(errText, 300)}), Reason: NoticeTurnFailed}
	}
	s := sysmsg.Text(sysmsg.Ended{StopReason: oneLine(stopReason, 60), AfterRejection: rejected})
	if s == "" {
		return Notice{}
	}
	return Notice{Text: s, Reason: NoticeTurnStopped}
}

// text handles a reply chunk.
func (p *Projector) text(u *Update, out []Output) []Output {
	if !p.inTurn {
		return out
	}
	t := &p.turn
	delta, newMsg := t.text.Add(u.MessageID, u.Text)
	if delta == "" {
		return out
	}
	t.reply.WriteString(delta)
	if !p.visible[TagAgentMessageChunk] || t.truncated {
		return out
	}
	out = p.flushDeferred(out)
	if t.posted {
		newMsg, t.posted = true, false
	}
	return p.budget(t, delta, newMsg, out)
}

// cutGraphemes returns the longest prefix of s of at most n code points
// that does not split a grapheme cluster.
func cutGraphemes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	state := -1
	rest := s
	end, runes := 0, 0
	for rest != "" {
		var g string
		g, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		r := utf8.RuneCountInString(g)
		if runes+r > n {
			break
		}
		runes += r
		end += len(g)
	}
	return s[:end]
}

func (p *Projector) thought(u *Update, out []Output) []Output {
	if !p.inTurn {
		return out
	}
	delta, _ := p.turn.thought.Add(u.MessageID, u.Text)
	if delta == "" || !p.visible[TagAgentThoughtChunk] {
		return out
	}
	out = p.flushDeferred(out)
	return append(out, Thought{Text: delta})
}

// status emits a status line of tag with text (not yet prefixed).
func (p *Projector) status(tag, text string, out []Output) []Output {
	if p.level == levelOff || text == "" {
		return out
	}
	full := sysmsg.Prefix(text)
	t := &p.turn
	if p.level == levelVerbose {
		if full == t.lastMeta {
			return out
		}
	} else if t.lastStatus[tag] == full {
		return out
	}
	var ok bool
	if out, ok = p.spendMeta(1, out); !ok {
		return out
	}
	out = p.flushDeferred(out)
	if t.lastStatus == nil {
		t.lastStatus = map[string]string{}
	}
	t.lastStatus[tag] = full
	t.lastMeta = full
	return append(out, Status{Tag: tag, Text: tooldisplay.Cut(full, p.set.MaxStatusChars)})
}

func (p *Projector) usage(u *Update, out []Output) []Output {
	uu := u.Usage
	if !uu.UsedKnown && p.lastUsage.UsedKnown {
		// "used": null means "not reported", not zero.
		uu.Used, uu.UsedKnown = p.lastUsage.Used, true
	}
	if !uu.SizeKnown && p.lastUsage.SizeKnown {
		uu.Size, uu.SizeKnown = p.lastUsage.Size, true
	}
	if !uu.CostKnown && p.lastUsage.CostKnown {
		uu.Cost, uu.Currency, uu.CostKnown = p.lastUsage.Cost, p.lastUsage.Currency, true
	}
	p.lastUsage = uu
	if !p.inTurn {
		return out
	}
	t := &p.turn
	t.usage = uu
	t.usageFrames++
	if !p.set.ShowUsage || !p.visible[TagUsage] || !u.Usage.UsedKnown || !uu.SizeKnown {
		return out
	}
	if t.usageShown && t.shownUsed == uu.Used && t.shownSize == uu.Size {
		return out
	}
	line := "context: " + groupDigits(uu.Used) + " / " + groupDigits(uu.Size) + " tokens"
	if uu.Size > 0 {
		line += " (" + sysmsg.Share(uu.Used, uu.Size) + ")"
	}
	if uu.CostKnown {
		line += fmt.Sprintf(" · %s", formatCost(uu.Cost, uu.Currency))
	}
	before := len(out)
	out = p.status("usage_update", line, out)
	if len(out) > before {
		t.usageShown, t.shownUsed, t.shownSize = true, uu.Used, uu.Size
	}
	return out
}

func formatCost(amount float64, currency string) string {
	if currency == "" || currency == "USD" {
		return fmt.Sprintf("$%.2f", amount)
	}
	return fmt.Sprintf("%.2f %s", amount, currency)
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func (p *Projector) mode(u *Update, out []Output) []Output {
	prev := p.modeID
	p.modeID = u.ModeID
	if !p.inTurn || !p.visible[TagCurrentMode] || p.level == levelOff || prev == u.ModeID {
		return out
	}
	text := "mode: " + p.modeName(u.ModeID)
	if prev != "" {
		text = "mode: " + p.modeName(prev) + " → " + p.modeName(u.ModeID)
	}
	full := sysmsg.Prefix(text)
	var ok bool
	if out, ok = p.spendMeta(1, out); !ok {
		return out
	}
	out = p.flushDeferred(out)
	p.turn.lastMeta = full
	return append(out, Notice{Text: tooldisplay.Cut(full, p.set.MaxStatusChars), Reason: NoticeModeChange})
}

func (p *Projector) modeName(id string) string {
	if n := p.modeNames[id]; n != "" {
		return n
	}
	return id
}

func (p *Projector) config(u *Update, out []Output) []Output {
	if !p.inTurn || !p.visible[TagConfigOption] {
		return out
	}
	parts := make([]string, 0, len(u.Config))
	for _, c := range u.Config {
		name := c.Name
		if name == "" {
			name = c.ID
		}
		parts = append(parts, name+" = "+c.Value)
	}
	return p.status(u.RawTag, "config: "+strings.Join(parts, ", "), out)
}

func (p *Projector) sessionInfo(u *Update, out []Output) []Output {
	if u.TitleSet {
		p.title = u.Title
	}
	if !p.inTurn || !p.visible[TagSessionInfo] || !u.TitleSet || u.Title == "" {
		return out
	}
	return p.status(u.RawTag, "title: "+collapse(u.Title), out)
}

func (p *Projector) planUpdate(u *Update, out []Output) []Output {
	if !p.inTurn {
		return out
	}
	t := &p.turn
	t.legacyPlan = slices.Clone(u.Plan)
	if !p.visible[TagPlan] {
		return out
	}
	return p.showPlan(renderPlans(t.legacyPlan, t.plans), out)
}

// showPlan shows text as the turn's plan message: its first version
// costs the meta cap one, its edits nothing where the channel edits.
func (p *Projector) showPlan(text string, out []Output) []Output {
	t := &p.turn
	if text == t.plan || text == "" {
		return out
	}
	cost := 1 // the first plan of the turn, or a new message each time
	if t.plan != "" && !p.noEdits {
		cost = 0 // an edit of the plan already shown
	}
	var ok bool
	if out, ok = p.spendMeta(cost, out); !ok {
		return out
	}
	out = p.flushDeferred(out)
	t.plan = text
	return append(out, Plan{Text: text})
}

// RenderPlan renders plan entries as a checklist: a status mark per entry
// (✅ completed, 🔄 in progress, ⬜ pending) and the priority after the
// text when it is high or low.
func RenderPlan(entries []PlanEntry) string {
	if len(entries) == 0 {
		return ""
	}
	return "📋 Plan" + planEntries(entries)
}

// planEntries renders entries as RenderPlan's lines, each after a line
// break, at most maxPlanEntries of them.
func planEntries(entries []PlanEntry) string {
	var b strings.Builder
	for i, e := range entries {
		if i == maxPlanEntries {
			fmt.Fprintf(&b, "\n… %d more", len(entries)-i)
			break
		}
		b.WriteByte('\n')
		switch e.Status {
		case "completed":
			b.WriteString("✅ ")
		case "in_progress":
			b.WriteString("🔄 ")
		default:
			b.WriteString("⬜ ")
		}
		b.WriteString(oneLine(e.Content, 200))
		switch e.Priority {
		case "high":
			b.WriteString(" · ‼️ high")
		case "low":
			b.WriteString(" · low")
		}
	}
	return b.String()
}

// unknown handles a tag the projector does not know: state only, and a
// status line in verbose mode unless the tag is turned off.
func (p *Projector) unknown(u *Update, out []Output) []Output {
	if !p.inTurn || p.level != levelVerbose {
		return out
	}
	if v, ok := p.visUnknown[u.RawTag]; ok && !v {
		return out
	}
	tag := u.RawTag
	if tag == "" {
		tag = "update"
	}
	text := tag
	if u.Summary != "" {
		text += ": " + collapse(u.Summary)
	} else if u.Text != "" {
		text += ": " + collapse(u.Text)
	}
	return p.status(tag, text, out)
}

// cutKeepingStatus cuts a tool line to max code points, shortening the
// label so that the status at the end (" · done") stays readable: two
// lines that differ only in status never look the same.
func cutKeepingStatus(line string, max int) string {
	if max <= 0 || utf8.RuneCountInString(line) <= max {
		return line
	}
	i := strings.LastIndex(line, " · ")
	if i < 0 {
		return tooldisplay.Cut(line, max)
	}
	status := line[i:]
	room := max - utf8.RuneCountInString(status)
	if room < 8 {
		return tooldisplay.Cut(line, max)
	}
	return tooldisplay.Cut(line[:i], room) + status
}

// collapse turns whitespace runs, newlines included, into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// oneLine collapses whitespace runs to one space and cuts s to max code
// points.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	return tooldisplay.Cut(s, max)
}
