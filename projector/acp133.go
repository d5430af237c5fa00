package projector

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/tooldisplay"
)

// ACP 1.33's updates: the agent's notices, context compactions and plan
// operations (several plans by id).

// NoticesPerMinute is how many of the agent's notices outside a turn are
// shown in a minute; one more says the next ones are hidden. In a turn the
// meta cap bounds them.
const NoticesPerMinute = 3

// Bounds of what the agent can make the projector keep and show.
const (
	maxCompactions       = 16       // compactions per turn
	maxCompactionSummary = 32 << 10 // bytes of a compaction's summary kept
	maxPlans             = 8        // plans by id per turn
	maxPlanEntries       = 50       // entries a plan shows
	maxPlanMarkdown      = 1500     // code points of a markdown plan shown
	maxPlanText          = 3500     // code points of the whole plan message
)

// CompactionKey is the prefix of a compaction's Tool output ID: its line
// is keyed "compaction:<compactionId>", apart from the tool calls' ids.
const CompactionKey = "compaction:"

// SetNow tells the projector the time of the updates that follow (it
// reads no clock): the notices outside a turn are counted per minute by
// it.
func (p *Projector) SetNow(t time.Time) { p.now = t }

// notice shows an agent's notice: in a turn as a meta message (the meta
// cap counts it), outside a turn at most NoticesPerMinute a minute.
func (p *Projector) notice(u *Update, out []Output) []Output {
	if !p.visible[TagNotice] {
		return out
	}
	text := sysmsg.Text(p.noticeFit(u.Notice))
	if text == "" {
		return out
	}
	if p.inTurn {
		var ok bool
		if out, ok = p.spendMeta(1, out); !ok {
			return out
		}
		out = p.flushDeferred(out)
		p.turn.lastMeta = text
		return append(out, Notice{Text: text, Reason: NoticeAgent})
	}
	n := 0
	for _, at := range p.notices {
		if !at.IsZero() && p.now.Sub(at) < time.Minute {
			n++
		}
	}
	if n >= NoticesPerMinute {
		if p.noticesHidden {
			return out
		}
		p.noticesHidden = true
		return append(out, Notice{Text: sysmsg.Text(sysmsg.NoticesHidden{PerMinute: NoticesPerMinute}), Reason: NoticeAgentHidden})
	}
	// The oldest time makes room.
	oldest := 0
	for i, at := range p.notices {
		if at.Before(p.notices[oldest]) {
			oldest = i
		}
	}
	p.notices[oldest] = p.now
	if p.now.IsZero() {
		p.notices[oldest] = time.Unix(0, 1) // counted, whatever the clock
	}
	p.noticesHidden = false
	return append(out, Notice{Text: text, Reason: NoticeAgent})
}

// noticeLead is about how many code points of a notice's line are not
// the agent's words (the mark, severity and separators).
const noticeLead = 40

// noticeFit is n as a sysmsg.AgentNotice whose words are cut so that its
// line stays near MaxStatusChars (each in its own code span: the line
// cannot be cut as a whole without breaking a span).
func (p *Projector) noticeFit(n NoticeUpdate) sysmsg.AgentNotice {
	room := max(p.set.MaxStatusChars-noticeLead, 16)
	title, desc := collapse(n.Title), collapse(n.Description)
	if title != "" && desc != "" {
		t := max(room/2, room-utf8.RuneCountInString(desc))
		title = tooldisplay.Cut(title, t)
		desc = tooldisplay.Cut(desc, max(room-utf8.RuneCountInString(title), 8))
	} else {
		title, desc = tooldisplay.Cut(title, room), tooldisplay.Cut(desc, room)
	}
	return sysmsg.AgentNotice{Severity: n.Severity, Title: title, Description: desc}
}

// compaction is what the turn knows of one context compaction.
type compaction struct {
	id      string
	state   string
	err     string
	summary []string
	size    int
	shown   bool
	last    string
}

func (c *compaction) setSummary(blocks []string) {
	c.summary, c.size = nil, 0
	for _, b := range blocks {
		c.add(b)
	}
}

func (c *compaction) add(s string) {
	if s == "" || c.size >= maxCompactionSummary {
		return
	}
	if room := maxCompactionSummary - c.size; len(s) > room {
		s = tooldisplay.Cut(s, room/4) // code points: at most 4 bytes each
	}
	c.summary = append(c.summary, s)
	c.size += len(s)
}

func compactionStatus(state string) ToolStatus {
	switch state {
	case "completed":
		return StatusCompleted
	case "failed":
		return StatusFailed
	case "cancelled":
		return StatusCancelled
	}
	return StatusInProgress
}

// compaction handles compaction_update and compaction_summary_chunk: one
// line per compactionId, edited in place (a Tool output keyed by
// CompactionKey), its summary kept for CompactionSummary, never answer
// text.
func (p *Projector) compaction(u *Update, out []Output) []Output {
	cu := &u.Compaction
	if !p.inTurn || cu.ID == "" {
		return out
	}
	t := &p.turn
	c := t.compactions[cu.ID]
	if u.Tag == TagCompactionChunk {
		// Appends to a compaction in progress only.
		if c != nil && (c.state == "in_progress" || c.state == "") {
			c.add(cu.Chunk)
		}
		return out
	}
	if c == nil {
		if len(t.compactions) >= maxCompactions {
			return out
		}
		if t.compactions == nil {
			t.compactions = map[string]*compaction{}
		}
		c = &compaction{id: cu.ID, state: "in_progress"}
		t.compactions[cu.ID] = c
	}
	switch cu.Status {
	case "in_progress", "completed", "failed", "cancelled":
		c.state = cu.Status
	}
	if cu.SummarySet {
		c.setSummary(cu.Summary)
	}
	if cu.ErrorSet {
		c.err = cu.Error
	}
	return p.emitCompaction(c, out)
}

func (p *Projector) emitCompaction(c *compaction, out []Output) []Output {
	if p.level == levelOff || !p.visible[TagCompaction] {
		return out
	}
	line := sysmsg.Text(sysmsg.Compaction{State: c.state, Err: c.err})
	if line == c.last {
		return out
	}
	cost := 1
	if c.shown && !p.noEdits {
		cost = 0
	}
	var ok bool
	if out, ok = p.spendMeta(cost, out); !ok {
		return out
	}
	out = p.flushDeferred(out)
	st := compactionStatus(c.state)
	cut := ""
	if !st.Terminal() {
		cut = sysmsg.Text(sysmsg.Compaction{State: "cancelled"})
	}
	first := !c.shown
	c.shown, c.last = true, line
	return append(out, Tool{ID: ToolCallID(CompactionKey + c.id), Text: line, Status: st, First: first, CutOff: cut})
}

// endCompactions ends the turn's compactions still in progress as
// cancelled.
func (p *Projector) endCompactions(out []Output) []Output {
	ids := make([]string, 0, len(p.turn.compactions))
	for id, c := range p.turn.compactions {
		if c.shown && !compactionStatus(c.state).Terminal() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := p.turn.compactions[id]
		c.state = "cancelled"
		out = p.emitCompaction(c, out)
	}
	return out
}

// CompactionSummary returns the summary of the open turn's compaction id
// (the text of its blocks and chunks, bounded), and whether the turn has
// that compaction.
func (p *Projector) CompactionSummary(id string) (string, bool) {
	c := p.turn.compactions[id]
	if c == nil {
		return "", false
	}
	return strings.Join(c.summary, ""), true
}

// planDoc is one plan of the turn by id (plan_update).
type planDoc struct {
	id      string
	doc     PlanDoc
	entries []PlanEntry
}

// planOp handles plan_update (upsert the plan by id) and plan_removed;
// every plan of the turn shows in the one plan message (Plan).
func (p *Projector) planOp(u *Update, out []Output) []Output {
	if !p.inTurn || u.PlanID == "" {
		return out
	}
	t := &p.turn
	i := slices.IndexFunc(t.plans, func(d *planDoc) bool { return d.id == u.PlanID })
	switch u.Tag {
	case TagPlanRemoved:
		if i < 0 {
			return out
		}
		t.plans = slices.Delete(t.plans, i, i+1)
	default:
		d := &planDoc{id: u.PlanID, doc: u.PlanDoc, entries: slices.Clone(u.Plan)}
		switch {
		case i >= 0:
			t.plans[i] = d
		case len(t.plans) >= maxPlans:
			return out
		default:
			t.plans = append(t.plans, d)
		}
	}
	if !p.visible[u.Tag] {
		return out
	}
	text := renderPlans(t.legacyPlan, t.plans)
	if text == "" && t.plan != "" {
		text = planCleared
	}
	return p.showPlan(text, out)
}

// planCleared is the plan message once every plan of the turn is removed.
const planCleared = "📋 Plan removed."

// renderPlans renders the legacy plan (the plan update's entries) and the
// plans by id as one message: one plan as RenderPlan does, several each
// under "📋 Plan i of n".
func renderPlans(legacy []PlanEntry, plans []*planDoc) string {
	if len(plans) == 0 {
		return RenderPlan(legacy)
	}
	var parts []string
	if len(legacy) > 0 {
		parts = append(parts, planEntries(legacy))
	}
	var heads []string
	if len(legacy) > 0 {
		heads = append(heads, "")
	}
	for _, d := range plans {
		head, body := "", ""
		switch d.doc.Type {
		case "file":
			path := strings.TrimPrefix(d.doc.URI, "file://")
			if path == "" {
				continue
			}
			head = " · " + tooldisplay.CodeSpan(tooldisplay.Visible(oneLine(path, 200)))
		case "markdown":
			md := strings.TrimSpace(d.doc.Markdown)
			if md == "" {
				continue
			}
			body = "\n" + tooldisplay.Cut(md, maxPlanMarkdown)
		default:
			if len(d.entries) == 0 {
				continue
			}
			body = planEntries(d.entries)
		}
		heads = append(heads, head)
		parts = append(parts, body)
	}
	if len(parts) == 0 {
		return ""
	}
	var b strings.Builder
	for i := range parts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("📋 Plan")
		if len(parts) > 1 {
			b.WriteString(" " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(parts)))
		}
		b.WriteString(heads[i])
		b.WriteString(parts[i])
	}
	return tooldisplay.Cut(b.String(), maxPlanText)
}
