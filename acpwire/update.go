package acpwire

import (
	"bytes"

	"github.com/acpgw/gateway/projector"
)

// ukey names the members of params.update that Decode reads.
type ukey uint8

const (
	ukOther ukey = iota
	ukSessionUpdate
	ukContent
	ukMessageID
	ukSegment
	ukKind
	ukChannel
	ukRole
	ukMeta
	ukToolCallID
	ukTitle
	ukStatus
	ukRawInput
	ukRawOutput
	ukLocations
	ukEntries
	ukUsed
	ukSize
	ukCost
	ukCurrentModeID
	ukAvailableCommands
	ukConfigOptions
	ukDescription
	ukText

	// Subagents (ACP 1.33).
	ukSessionID
	ukState
	ukCapabilities
	ukSender
	ukRecipient

	// ACP 1.33: notices, compaction, plan operations.
	ukSeverity
	ukCompactionID
	ukSummary
	ukError
	ukPlanID
	ukPlan
	numUKeys
)

func updateKey(k []byte) ukey {
	switch string(k) {
	case "sessionUpdate":
		return ukSessionUpdate
	case "content":
		return ukContent
	case "messageId":
		return ukMessageID
	case "segment":
		return ukSegment
	case "kind":
		return ukKind
	case "channel":
		return ukChannel
	case "role":
		return ukRole
	case "_meta":
		return ukMeta
	case "toolCallId":
		return ukToolCallID
	case "title":
		return ukTitle
	case "status":
		return ukStatus
	case "rawInput":
		return ukRawInput
	case "rawOutput":
		return ukRawOutput
	case "locations":
		return ukLocations
	case "entries":
		return ukEntries
	case "used":
		return ukUsed
	case "size":
		return ukSize
	case "cost":
		return ukCost
	case "currentModeId":
		return ukCurrentModeID
	case "availableCommands":
		return ukAvailableCommands
	case "configOptions":
		return ukConfigOptions
	case "description":
		return ukDescription
	case "text":
		return ukText

	case "sessionId":
		return ukSessionID
	case "state":
		return ukState
	case "capabilities":
		return ukCapabilities
	case "senderSessionId":
		return ukSender
	case "recipientSessionId":
		return ukRecipient
	// ACP 1.33: notices, compaction, plan operations.
	case "severity":
		return ukSeverity
	case "compactionId":
		return ukCompactionID
	case "summary":
		return ukSummary
	case "error":
		return ukError
	case "planId":
		return ukPlanID
	case "plan":
		return ukPlan
	}
	return ukOther
}

// Bits of updState.thought, one per place that can mark a chunk as a
// thought, so that a duplicate member replaces only its own verdict.
const (
	thoughtSegment uint8 = 1 << iota
	thoughtKind
	thoughtChannel
	thoughtRole
	thoughtMeta
	thoughtContent
)

// updState is what decoding one update object collects besides Update.
type updState struct {
	thought uint8
	// Summary candidates of an unknown tag.
	title, description, contentText, text string
	// planID is a planId inside a plan_update's plan object.
	planID string
}

func setBit(bits *uint8, bit uint8, on bool) {
	if on {
		*bits |= bit
	} else {
		*bits &^= bit
	}
}

// updateParams decodes the session/update params object at i into
// f.Update. It returns only malformed JSON as an error; a params object
// that is no session/update is recorded in d.updErr.
func (d *decoder) updateParams(i int) (int, error) {
	f := d.f
	f.Update = projector.Update{}
	d.updErr, d.updErrAt = "expected update object in session/update params", i
	var sid string
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return 0, err
		}
		if !ok {
			i = v
			break
		}
		switch string(d.key(key, kfl)) {
		case "sessionId":
			var t token
			if t, i, err = d.next(v, depthParams); err != nil {
				return 0, err
			}
			sid = d.cachedOr(cacheSession, t)
		case "update":
			f.Update = projector.Update{}
			if v < len(d.data) && d.data[v] == '{' {
				d.updErr = ""
				i, err = d.update(v)
			} else {
				d.updErr, d.updErrAt = "expected object update in session/update params", v
				i, err = d.skip(v, depthParams)
			}
		default:
			i, err = d.skip(v, depthParams)
		}
		if err != nil {
			return 0, err
		}
	}
	if d.updErr != "" {
		f.Update = projector.Update{}
	}
	f.Update.SessionID = sid
	return i, nil
}

// update decodes the update object at i. Members seen before sessionUpdate
// are remembered and decoded once the tag is known; members after it are
// decoded as they are scanned. A second sessionUpdate with another value
// makes the whole object decode again with the last tag.
func (d *decoder) update(i int) (int, error) {
	u := &d.f.Update
	start := i
	var (
		pend   [numUKeys]int32 // value offset+1 of members waiting for the tag
		tag    token           // the last sessionUpdate
		tagSet bool            // a string tag is set in u
		retag  bool            // the tag changed after members were decoded
	)
	d.upd = updState{}
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return 0, err
		}
		if !ok {
			i = v
			break
		}
		k := updateKey(d.key(key, kfl))
		switch {
		case k == ukSessionUpdate:
			if tag, i, err = d.next(v, depthUpdate); err != nil {
				return 0, err
			}
			switch {
			case retag:
			case tagSet:
				retag = tag.kind != '"' || string(d.bytes(tag.raw, tag.fl)) != u.RawTag
			case tag.kind == '"':
				d.setTag(tag)
				tagSet = true
			}
			continue
		case k == ukOther || retag:
			i, err = d.skip(v, depthUpdate)
		case !tagSet:
			pend[k] = int32(v) + 1
			i, err = d.skip(v, depthUpdate)
		default:
			pend[k] = 0
			i, err = d.apply(k, v)
		}
		if err != nil {
			return 0, err
		}
	}
	if tag.kind != '"' {
		*u = projector.Update{}
		d.updErr, d.updErrAt = "expected string sessionUpdate in session/update", start
		return i, nil
	}
	if retag {
		*u = projector.Update{}
		d.upd = updState{}
		d.setTag(tag)
		pend = [numUKeys]int32{}
		j := start + 1
		for first := true; ; first = false {
			key, kfl, v, ok, err := d.member(j, first)
			if err != nil {
				return 0, err
			}
			if !ok {
				break
			}
			if k := updateKey(d.key(key, kfl)); k != ukSessionUpdate && k != ukOther {
				pend[k] = int32(v) + 1
			}
			if j, err = d.skip(v, depthUpdate); err != nil {
				return 0, err
			}
		}
	}
	for k, at := range pend {
		if at != 0 {
			if _, err := d.apply(ukey(k), int(at-1)); err != nil {
				return 0, err
			}
		}
	}
	switch u.Tag {
	case projector.TagAgentMessageChunk, projector.TagAgentThoughtChunk, projector.TagUserMessageChunk:
		u.Thought = d.upd.thought != 0
	case projector.TagPlanUpdate:
		if u.PlanID == "" {
			u.PlanID = d.upd.planID
		}
	case projector.TagUnknown:
		for _, s := range [...]string{d.upd.title, d.upd.description, d.upd.contentText, d.upd.text} {
			if s != "" {
				u.Summary = s
				break
			}
		}
	}
	return i, nil
}

// setTag sets Update.Tag and RawTag from the string token t.
func (d *decoder) setTag(t token) {
	u := &d.f.Update
	b := d.bytes(t.raw, t.fl)
	u.Tag = projector.ParseTag(string(b))
	if u.Tag != projector.TagUnknown {
		u.RawTag = u.Tag.String()
	} else {
		u.RawTag = string(b)
	}
}

// apply decodes the update member k whose value is at v, for the tag
// already set, and returns the index after the value. Every member sets
// all the fields it governs, so that a duplicate member replaces an
// earlier one.
func (d *decoder) apply(k ukey, v int) (int, error) {
	u := &d.f.Update
	const depth = depthUpdate
	switch u.Tag {
	case projector.TagAgentMessageChunk, projector.TagAgentThoughtChunk, projector.TagUserMessageChunk:
		switch k {
		case ukContent:
			b, end, err := d.block(v, depth, false)
			u.Text, u.ContentType, u.Image = b.text, b.typ, b.img
			setBit(&d.upd.thought, thoughtContent, b.thought)
			return end, err
		case ukMessageID:
			t, end, err := d.next(v, depth)
			u.MessageID = d.cachedOr(cacheMessage, t)
			return end, err
		case ukSegment, ukKind, ukChannel, ukRole:
			t, end, err := d.next(v, depth)
			bit := thoughtSegment
			switch k {
			case ukKind:
				bit = thoughtKind
			case ukChannel:
				bit = thoughtChannel
			case ukRole:
				bit = thoughtRole
			}
			setBit(&d.upd.thought, bit, d.isThoughtWord(t))
			return end, err
		case ukMeta:
			on, end, err := d.metaThought(v, depth)
			setBit(&d.upd.thought, thoughtMeta, on)
			return end, err
		}
	case projector.TagToolCall, projector.TagToolCallUpdate:
		return d.applyTool(k, v)
	case projector.TagPlan:
		if k == ukEntries {
			return d.plan(v, depth)
		}
	case projector.TagUsage:
		switch k {
		case ukUsed, ukSize:
			t, end, err := d.next(v, depth)
			n, ok := int64(0), false
			if t.kind == '0' {
				n, ok = parseInt(t.raw)
			}
			if k == ukUsed {
				u.Usage.Used, u.Usage.UsedKnown = n, ok
			} else {
				u.Usage.Size, u.Usage.SizeKnown = n, ok
			}
			return end, err
		case ukCost:
			return d.cost(v, depth)
		}
	case projector.TagCurrentMode:
		if k == ukCurrentModeID {
			t, end, err := d.next(v, depth)
			u.ModeID = d.stringOr(t)
			return end, err
		}
	case projector.TagSessionInfo:
		if k == ukTitle {
			t, end, err := d.next(v, depth)
			u.Title = d.stringOr(t)
			u.TitleSet = t.kind == '"' || t.kind == 'n'
			return end, err
		}
	case projector.TagAvailableCommands:
		if k == ukAvailableCommands {
			return d.commands(v, depth)
		}
	case projector.TagConfigOption:
		if k == ukConfigOptions {
			return d.configOptions(v, depth)
		}
	case projector.TagSubagent:
		return d.applySubagent(k, v)
	case projector.TagSessionMessage, projector.TagSessionMessageChunk:
		return d.applySessionMessage(k, v)
	case projector.TagNotice, projector.TagCompaction, projector.TagCompactionChunk, projector.TagPlanUpdate, projector.TagPlanRemoved:
		return d.apply133(k, v)
	case projector.TagUnknown:
		switch k {
		case ukTitle, ukDescription, ukText:
			t, end, err := d.next(v, depth)
			s := d.stringOr(t)
			switch k {
			case ukTitle:
				d.upd.title = s
			case ukDescription:
				d.upd.description = s
			default:
				d.upd.text = s
			}
			return end, err
		case ukContent:
			b, end, err := d.block(v, depth, true)
			d.upd.contentText = b.text
			u.Text, u.ContentType = "", ""
			if b.typ == "text" {
				u.Text, u.ContentType = b.text, b.typ
			}
			return end, err
		}
	}
	return d.skip(v, depth)
}

// applyTool decodes a member of a tool_call or tool_call_update.
func (d *decoder) applyTool(k ukey, v int) (int, error) {
	tu := &d.f.Update.Tool
	const depth = depthUpdate
	switch k {
	case ukToolCallID:
		t, end, err := d.next(v, depth)
		tu.ID = projector.ToolCallID(d.cachedOr(cacheTool, t))
		return end, err
	case ukTitle:
		t, end, err := d.next(v, depth)
		tu.Title, tu.HasTitle = d.stringOr(t), t.kind == '"'
		return end, err
	case ukKind:
		t, end, err := d.next(v, depth)
		tu.Kind = d.wordOr(t)
		return end, err
	case ukStatus:
		t, end, err := d.next(v, depth)
		tu.Status = projector.StatusNone
		if t.kind == '"' {
			tu.Status = projector.ParseToolStatus(string(d.bytes(t.raw, t.fl)))
		}
		return end, err
	case ukRawInput, ukRawOutput:
		t, end, err := d.next(v, depth)
		var raw []byte
		if t.kind != 'n' && err == nil {
			raw = bytes.Clone(d.span(t))
		}
		if k == ukRawInput {
			tu.RawInput = raw
		} else {
			tu.RawOutput = raw
		}
		return end, err
	case ukContent:
		tu.Content, tu.HasContent = nil, false
		if v < len(d.data) && d.data[v] == '[' {
			tu.HasContent = true
			var end int
			var err error
			tu.Content, end, err = d.toolContent(v, depth)
			return end, err
		}
	case ukLocations:
		return list(d, v, depth, &tu.Locations, d.location)
	}
	return d.skip(v, depth)
}
