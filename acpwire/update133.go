package acpwire

import "github.com/acpgw/gateway/projector"

// apply133 decodes a member of the ACP 1.33 updates: notice,
// compaction_update, compaction_summary_chunk, plan_update and
// plan_removed. Like apply, every member sets all the fields it governs.
func (d *decoder) apply133(k ukey, v int) (int, error) {
	u := &d.f.Update
	const depth = depthUpdate
	switch u.Tag {
	case projector.TagNotice:
		switch k {
		case ukSeverity, ukTitle, ukDescription:
			t, end, err := d.next(v, depth)
			switch k {
			case ukSeverity:
				u.Notice.Severity = d.wordOr(t)
			case ukTitle:
				u.Notice.Title = d.stringOr(t)
			default:
				u.Notice.Description = d.stringOr(t)
			}
			return end, err
		}
	case projector.TagCompaction, projector.TagCompactionChunk:
		c := &u.Compaction
		switch k {
		case ukCompactionID:
			t, end, err := d.next(v, depth)
			c.ID = d.stringOr(t)
			return end, err
		case ukStatus:
			if u.Tag != projector.TagCompaction {
				break
			}
			t, end, err := d.next(v, depth)
			c.Status = d.wordOr(t)
			return end, err
		case ukError:
			if u.Tag != projector.TagCompaction {
				break
			}
			t, end, err := d.next(v, depth)
			c.Error, c.ErrorSet = d.stringOr(t), t.kind == '"' || t.kind == 'n'
			return end, err
		case ukSummary:
			if u.Tag != projector.TagCompaction {
				break
			}
			return d.summary(v, depth)
		case ukContent:
			if u.Tag != projector.TagCompactionChunk {
				break
			}
			b, end, err := d.block(v, depth, false)
			c.Chunk = b.text
			return end, err
		}
	case projector.TagPlanUpdate, projector.TagPlanRemoved:
		switch k {
		case ukPlanID:
			t, end, err := d.next(v, depth)
			u.PlanID = d.stringOr(t)
			return end, err
		case ukPlan:
			if u.Tag == projector.TagPlanUpdate {
				return d.planDoc(v, depth)
			}
		}
	}
	return d.skip(v, depth)
}

// summary decodes compaction_update's summary: an array of content
// blocks (their text kept), or null, which clears it.
func (d *decoder) summary(i, depth int) (int, error) {
	c := &d.f.Update.Compaction
	c.Summary, c.SummarySet = nil, false
	if i >= len(d.data) || d.data[i] != '[' {
		t, end, err := d.next(i, depth)
		c.SummarySet = t.kind == 'n'
		return end, err
	}
	c.SummarySet = true
	i++
	for first := true; ; first = false {
		v, ok, err := d.elem(i, first)
		if err != nil {
			return 0, err
		}
		if !ok {
			return v, nil
		}
		var b block
		if b, i, err = d.block(v, depth+1, false); err != nil {
			return 0, err
		}
		if b.text != "" {
			c.Summary = append(c.Summary, b.text)
		}
	}
}

// planDoc decodes plan_update's plan object: its type, entries, uri or
// content. A planId inside it counts when the update has none of its own.
func (d *decoder) planDoc(i, depth int) (int, error) {
	u := &d.f.Update
	u.PlanDoc, u.Plan, d.upd.planID = projector.PlanDoc{}, nil, ""
	if i >= len(d.data) || d.data[i] != '{' {
		return d.skip(i, depth)
	}
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return 0, err
		}
		if !ok {
			return v, nil
		}
		switch string(d.key(key, kfl)) {
		case "entries":
			i, err = d.plan(v, depth+1)
		case "type", "uri", "content", "planId":
			var t token
			if t, i, err = d.next(v, depth+1); err != nil {
				return 0, err
			}
			switch string(d.key(key, kfl)) {
			case "type":
				u.PlanDoc.Type = d.wordOr(t)
			case "uri":
				u.PlanDoc.URI = d.stringOr(t)
			case "content":
				u.PlanDoc.Markdown = d.stringOr(t)
			default:
				d.upd.planID = d.stringOr(t)
			}
		default:
			i, err = d.skip(v, depth+1)
		}
		if err != nil {
			return 0, err
		}
	}
}
