package projector

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acpgw/gateway/tooldisplay"
)

// Subagents (ACP 1.33). A session announces child sessions with
// subagent_update; the child's own updates come marked with
// Update.Child. Each child is one card of the parent's turn, a Tool
// output keyed by SubagentKey that later states edit in place: its
// title, its state, how many tools it ran and the latest tool line. Its
// text and its tool calls never become the parent's text or tool lines
// (all its tool lines and its text are in SubagentDetail, for channels
// that show a line's details), and its usage, mode, config, commands and
// title leave the session's state alone. A card costs the meta cap what
// a tool line costs: one for its first state; later states are edits
// where the channel edits, and where it cannot only a change of the
// child's state is posted again (one each).

// Bounds of what is kept of subagents.
const (
	maxKids        = 64   // children a session keeps; later ones are not shown
	maxKidTools    = 256  // tool calls kept per child and turn; later ones only counted
	maxKidText     = 4096 // bytes of a child's text kept per turn
	maxKidWords    = 300  // bytes of a child's title, description or task kept
	maxKidStateLen = 32   // bytes of a state word kept
)

// SubagentPrefix starts the key of a subagent's card (SubagentKey).
const SubagentPrefix = "subagent:"

// SubagentKey is the ID of child's card in the open turn (its Tool
// outputs) and the key of its details: "subagent:<turn>:<child>", so
// that a child at work in several turns has a card in each, none edited
// by a later turn's (the lane keeps keys until it delivered a turn's end).
func (p *Projector) SubagentKey(child string) ToolCallID {
	return ToolCallID(SubagentPrefix + strconv.Itoa(p.turns) + ":" + child)
}

// kid is what the session knows of one child, across turns.
type kid struct {
	id, title, description, task string
	state                        string
	cancel                       bool
}

// kidCard is a child's card in the open turn.
type kidCard struct {
	tools   map[ToolCallID]*toolState
	order   []*toolState
	latest  *toolState // the tool updated last
	uncount int        // tool calls beyond maxKidTools
	text    Accumulator
	kept    strings.Builder // the child's text, cut at maxKidText
	cut     bool            // more text came than is kept

	shown     bool   // a state was emitted
	last      string // the last state emitted
	lastState string // the state word it showed (channels that cannot edit)
}

// subagent applies the session's subagent_update: a new child or a patch
// of one; its card shows the change.
func (p *Projector) subagent(u *Update, out []Output) []Output {
	sa := &u.Subagent
	k := p.kid(sa.ID, true)
	if k == nil {
		return out
	}
	if sa.TitleSet {
		k.title = clip(sa.Title, maxKidWords)
	}
	if sa.DescriptionSet {
		k.description = clip(sa.Description, maxKidWords)
	}
	if sa.StateSet {
		k.state = clip(sa.State, maxKidStateLen)
	}
	if sa.CapsSet {
		k.cancel = sa.Cancel
	}
	return p.showKid(k, out)
}

// kid returns the child id, made when create is set and the session keeps
// fewer than maxKids; nil otherwise.
func (p *Projector) kid(id string, create bool) *kid {
	if id == "" {
		return nil
	}
	if k := p.kids[id]; k != nil || !create {
		return k
	}
	if len(p.kids) >= maxKids {
		return nil
	}
	if p.kids == nil {
		p.kids = map[string]*kid{}
	}
	k := &kid{id: id}
	p.kids[id] = k
	return k
}

// card returns the open turn's card of k, made on first use.
func (p *Projector) card(k *kid) *kidCard {
	t := &p.turn
	c := t.cards[k.id]
	if c == nil {
		if t.cards == nil {
			t.cards = map[string]*kidCard{}
		}
		c = &kidCard{}
		t.cards[k.id] = c
		t.cardOrder = append(t.cardOrder, k)
	}
	return c
}

// child applies an update of a child session (u.Child): its tool calls
// and text feed its card; nothing else of it is shown or kept.
func (p *Projector) child(u *Update, out []Output) []Output {
	k := p.kid(u.Child, false)
	if k == nil || !p.inTurn {
		if u.Tag == TagSessionMessage || u.Tag == TagSessionMessageChunk {
			p.message(u)
		}
		return out
	}
	switch u.Tag {
	case TagAgentMessageChunk:
		if u.Thought {
			return out
		}
		c := p.card(k)
		if c.cut {
			return out
		}
		delta, _ := c.text.Add(u.MessageID, u.Text)
		if room := maxKidText - c.kept.Len(); len(delta) > room {
			delta, c.cut = clip(delta, room), true
		}
		c.kept.WriteString(delta)
		return out
	case TagToolCall, TagToolCallUpdate:
		return p.kidTool(k, u, out)
	case TagSessionMessage, TagSessionMessageChunk:
		p.message(u)
	}
	return out
}

// kidTool merges a child's tool call into its card.
func (p *Projector) kidTool(k *kid, u *Update, out []Output) []Output {
	if u.Tool.ID == "" {
		return out
	}
	c := p.card(k)
	ts := c.tools[u.Tool.ID]
	if ts == nil {
		if len(c.order) >= maxKidTools {
			if u.Tag == TagToolCall {
				c.uncount++
				return p.showKid(k, out)
			}
			return out
		}
		if c.tools == nil {
			c.tools = map[ToolCallID]*toolState{}
		}
		ts = &toolState{id: u.Tool.ID}
		c.tools[u.Tool.ID] = ts
		c.order = append(c.order, ts)
	}
	if !merge(ts, &u.Tool) && c.latest == ts {
		return out
	}
	c.latest = ts
	return p.showKid(k, out)
}

// message takes a session_message(_chunk) to a child as the child's task
// (its card's description when the agent gave none). Never text.
func (p *Projector) message(u *Update) {
	k := p.kid(u.Recipient, false)
	if k == nil || u.Text == "" || len(k.task) >= maxKidWords {
		return
	}
	k.task = clip(k.task+u.Text, maxKidWords)
}

// showKid emits k's card when the turn shows it.
func (p *Projector) showKid(k *kid, out []Output) []Output {
	if !p.inTurn || p.level == levelOff || !p.visible[TagSubagent] {
		return out
	}
	c := p.card(k)
	text := p.kidText(k, c, k.state)
	if text == c.last {
		return out
	}
	cost := 0
	switch {
	case !c.shown:
		cost = 1
	case p.noEdits && c.lastState == k.state:
		return out // where every state is a new message, only a new state is posted
	case p.noEdits:
		cost = 1
	}
	var ok bool
	if out, ok = p.spendMeta(cost, out); !ok {
		return out
	}
	out = p.flushDeferred(out)
	first := !c.shown
	c.shown, c.last, c.lastState = true, text, k.state
	cutOff := ""
	if at := k.state == "running" || k.state == "requires_action"; at {
		cutOff = p.kidText(k, c, "")
	}
	return append(out, Tool{ID: p.SubagentKey(k.id), Text: text, Status: kidStatus(k.state), First: first, CutOff: cutOff})
}

func kidStatus(state string) ToolStatus {
	switch state {
	case "running", "requires_action":
		return StatusInProgress
	case "idle":
		return StatusCompleted
	}
	return StatusNone
}

// kidText renders k's card with state: a line with the child's name and
// state, and a line with its tool count and latest tool line.
func (p *Projector) kidText(k *kid, c *kidCard, state string) string {
	var b strings.Builder
	b.WriteString("🤖 Subagent ")
	b.WriteString(kidName(k))
	b.WriteString(" · ")
	b.WriteString(stateWords(state))
	if n := len(c.order) + c.uncount; n > 0 {
		b.WriteString("\n")
		b.WriteString(strconv.Itoa(n))
		if n == 1 {
			b.WriteString(" tool")
		} else {
			b.WriteString(" tools")
		}
		if c.latest != nil {
			b.WriteString(" · latest: ")
			b.WriteString(cutKeepingStatus(tooldisplay.Summary(c.latest.call()), p.set.MaxToolSummaryChars))
		}
	}
	return b.String()
}

// kidName is how a child is named: its title, else its description, else
// the task it was given, else its id; the agent's words, in a code span.
func kidName(k *kid) string {
	name := k.title
	for _, s := range []string{k.description, k.task, k.id} {
		if strings.TrimSpace(name) != "" {
			break
		}
		name = s
	}
	return tooldisplay.CodeSpan(tooldisplay.Visible(oneLine(name, 80)))
}

// stateWords is what people read of a child's state.
func stateWords(state string) string {
	switch state {
	case "running":
		return "running"
	case "requires_action":
		return "needs you"
	case "idle":
		return "idle"
	}
	return "unknown" // unknown, an extension (_...), a future variant, none
}

// SubagentName is how child is named in a prompt it asks (its card's
// name), "" when the session did not announce it.
func (p *Projector) SubagentName(child string) string {
	k := p.kid(child, false)
	if k == nil {
		return ""
	}
	return kidName(k)
}

// FromSubagent is the prompt pr as a child asks it: a first line names
// the subagent (SubagentName; its id when unknown).
func (p *Projector) FromSubagent(child string, pr Prompt) Prompt {
	pr.Text = p.SubagentAsks(child, pr.Text)
	return pr
}

// SubagentAsks is text (a prompt's, a question's) as child asks it: a
// first line names the subagent (SubagentName; its id when unknown).
func (p *Projector) SubagentAsks(child, text string) string {
	name := p.SubagentName(child)
	if name == "" {
		name = tooldisplay.CodeSpan(tooldisplay.Visible(oneLine(child, 80)))
	}
	return "🤖 Subagent " + name + " asks:\n" + text
}

// SubagentDetail is what child's card shows on click in the open turn,
// for channels that show a line's details: the task (its description or
// the message it was given) as input, its tool lines and its text as
// output. ok is false when the turn has no card of child.
func (p *Projector) SubagentDetail(child string) (input, output string, ok bool) {
	k := p.kid(child, false)
	c := p.turn.cards[child]
	if k == nil || c == nil || !c.shown {
		return "", "", false
	}
	input = k.description
	if input == "" {
		input = k.task
	}
	var b strings.Builder
	for _, ts := range c.order {
		b.WriteString(tooldisplay.Summary(ts.call()))
		b.WriteByte('\n')
	}
	if c.uncount > 0 {
		b.WriteString("… " + strconv.Itoa(c.uncount) + " more tools\n")
	}
	if c.kept.Len() > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.kept.String())
		if c.cut {
			b.WriteString(" …")
		}
	}
	return input, strings.TrimRight(b.String(), "\n"), true
}

// clip cuts s to at most max bytes on a code point boundary.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// endCards edits, at the end of a turn that was stopped, cancelled or
// failed, the cards of children still at work to their cut-off state
// (unknown): nobody can tell whether they stopped. Where the channel
// cannot edit they are left as posted.
func (p *Projector) endCards(out []Output) []Output {
	if p.noEdits || p.level == levelOff || !p.visible[TagSubagent] {
		return out
	}
	for _, k := range p.turn.cardOrder {
		c := p.turn.cards[k.id]
		if !c.shown || (k.state != "running" && k.state != "requires_action") {
			continue
		}
		text := p.kidText(k, c, "")
		c.last = text
		out = append(out, Tool{ID: p.SubagentKey(k.id), Text: text, Status: StatusCancelled})
	}
	return out
}
