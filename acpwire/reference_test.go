package acpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path"
	"strings"

	"github.com/acpgw/gateway/projector"
)

// This file is an independent, deliberately plain reading of a frame with
// encoding/json (maps and json.RawMessage), following the package's rules
// one by one. The differential and fuzz tests compare Decode against it.

// refFrame is what the reference extracts, with the raw fields as strings.
type refFrame struct {
	Kind       Kind
	Method     string
	ID         string
	Params     string
	Result     string
	Err        *RPCError
	Update     projector.Update
	StopReason string
}

// gotFrame converts a decoded Frame for comparison with refFrame.
func gotFrame(f *Frame) refFrame {
	return refFrame{
		Kind: f.Kind, Method: f.Method, ID: string(f.ID), Params: string(f.Params),
		Result: string(f.Result), Err: f.Err, Update: f.Update, StopReason: f.StopReason,
	}
}

// unmarshal decodes JSON into any with json.Number numbers.
func unmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// rawMembers returns the raw members of a JSON object, last duplicate wins.
func rawMembers(data []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// refInt reads an integer the way the package documents it.
func refInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func refString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

var errRef = errors.New("not a frame")

// refDecode reads line with encoding/json.
func refDecode(line []byte) (refFrame, error) {
	var top any
	if err := unmarshal(line, &top); err != nil {
		return refFrame{}, err
	}
	m, ok := top.(map[string]any)
	if !ok {
		return refFrame{}, errRef
	}
	raw := rawMembers(line)
	var f refFrame
	if v, ok := m["jsonrpc"].(string); !ok || v != "2.0" {
		return refFrame{}, errRef
	}
	id, hasID := m["id"]
	if hasID {
		switch id.(type) {
		case string, json.Number, nil:
			f.ID = string(raw["id"])
		default:
			return refFrame{}, errRef
		}
	}
	if p, ok := m["params"]; ok {
		switch p.(type) {
		case map[string]any, []any:
			f.Params = string(raw["params"])
		default:
			return refFrame{}, errRef
		}
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if mv, ok := m["method"]; ok {
		method, ok := mv.(string)
		if !ok || hasResult || hasError {
			return refFrame{}, errRef
		}
		f.Method = method
		f.Kind = Notification
		if hasID {
			f.Kind = Request
		}
		if method != "session/update" {
			return f, nil
		}
		params, ok := m["params"].(map[string]any)
		if !ok {
			return refFrame{}, errRef
		}
		upd, ok := params["update"].(map[string]any)
		if !ok {
			return refFrame{}, errRef
		}
		if _, ok := upd["sessionUpdate"].(string); !ok {
			return refFrame{}, errRef
		}
		f.Update = refUpdate(upd, rawMembers(rawMembers(raw["params"])["update"]))
		f.Update.SessionID = refString(params, "sessionId")
		return f, nil
	}
	if !hasID || hasResult == hasError {
		return refFrame{}, errRef
	}
	if hasResult {
		f.Kind = Result
		f.Result = string(raw["result"])
		if r, ok := m["result"].(map[string]any); ok {
			f.StopReason = refString(r, "stopReason")
		}
		return f, nil
	}
	f.Kind = Error
	e, ok := m["error"].(map[string]any)
	if !ok {
		return refFrame{}, errRef
	}
	code, ok := refInt(e["code"])
	msg, isStr := e["message"].(string)
	if !ok || !isStr {
		return refFrame{}, errRef
	}
	f.Err = &RPCError{Code: code, Message: msg}
	if d, ok := rawMembers(raw["error"])["data"]; ok {
		f.Err.Data = d
	}
	return f, nil
}

// refIsThought reports whether v is a thought word.
func refIsThought(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	for _, w := range []string{"think", "thought", "thinking", "reasoning", "segment", "intent"} {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// refAnnotationsThought applies the annotations rules: a thought word as a
// direct string member, or _meta as refMetaThought; in a list, any object.
func refAnnotationsThought(v any) bool {
	switch a := v.(type) {
	case []any:
		for _, e := range a {
			if m, ok := e.(map[string]any); ok && refAnnotationsThought(m) {
				return true
			}
		}
	case map[string]any:
		for k, v := range a {
			if k == "_meta" {
				if refMetaThought(v) {
					return true
				}
			} else if refIsThought(v) {
				return true
			}
		}
	}
	return false
}

// refMetaThought applies the _meta thought rules.
func refMetaThought(v any) bool {
	meta, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range []string{"segment", "kind", "channel", "role", "type"} {
		if refIsThought(meta[k]) {
			return true
		}
	}
	return meta["thought"] == true || meta["thinking"] == true
}

// refImage is the picture of content block b: an image block with data
// or a uri (its name dropped), a resource link with a uri whose media
// type is an image's (or, without one, whose uri or name ends like one).
func refImage(b map[string]any) projector.ImageBlock {
	img := projector.ImageBlock{MimeType: refString(b, "mimeType"), Data: refString(b, "data"), URI: refString(b, "uri"), Name: refString(b, "name")}
	switch b["type"] {
	case "image":
		img.Name = ""
		if img.Data == "" && img.URI == "" {
			return projector.ImageBlock{}
		}
		return img
	case "resource_link":
		img.Data = ""
		if img.URI == "" {
			return projector.ImageBlock{}
		}
		if img.MimeType != "" {
			if strings.HasPrefix(img.MimeType, "image/") {
				return img
			}
			return projector.ImageBlock{}
		}
		for _, s := range []string{img.URI, img.Name} {
			if e := strings.ToLower(path.Ext(s)); e == ".png" || e == ".jpg" || e == ".jpeg" || e == ".gif" || e == ".webp" {
				return img
			}
		}
	}
	return projector.ImageBlock{}
}

// refUpdate extracts an Update from params.update.
func refUpdate(upd map[string]any, raw map[string]json.RawMessage) projector.Update {
	var u projector.Update
	u.RawTag = upd["sessionUpdate"].(string)
	u.Tag = projector.ParseTag(u.RawTag)
	content, _ := upd["content"].(map[string]any)
	switch u.Tag {
	case projector.TagAgentMessageChunk, projector.TagAgentThoughtChunk, projector.TagUserMessageChunk:
		u.ContentType = refString(content, "type")
		if u.ContentType == "text" {
			u.Text = refString(content, "text")
		}
		u.Image = refImage(content)
		u.MessageID = refString(upd, "messageId")
		for _, k := range []string{"segment", "kind", "channel", "role"} {
			u.Thought = u.Thought || refIsThought(upd[k])
		}
		for _, k := range []string{"segment", "channel", "role"} {
			u.Thought = u.Thought || refIsThought(content[k])
		}
		u.Thought = u.Thought || refAnnotationsThought(content["annotations"])
		u.Thought = u.Thought || refMetaThought(upd["_meta"]) || refMetaThought(content["_meta"])
	case projector.TagToolCall, projector.TagToolCallUpdate:
		t := &u.Tool
		t.ID = projector.ToolCallID(refString(upd, "toolCallId"))
		t.Title, t.HasTitle = upd["title"].(string)
		t.Kind = refString(upd, "kind")
		t.Status = projector.ParseToolStatus(refString(upd, "status"))
		if r, ok := raw["rawInput"]; ok && string(r) != "null" {
			t.RawInput = r
		}
		if r, ok := raw["rawOutput"]; ok && string(r) != "null" {
			t.RawOutput = r
		}
		if list, ok := upd["content"].([]any); ok {
			t.HasContent = true
			t.Content = []projector.ToolContent{}
			for _, e := range list {
				c, ok := e.(map[string]any)
				if !ok {
					continue
				}
				tc := projector.ToolContent{Type: refString(c, "type")}
				switch tc.Type {
				case "content":
					if inner, ok := c["content"].(map[string]any); ok && inner["type"] == "text" {
						tc.Text = refString(inner, "text")
					} else if ok {
						tc.Image = refImage(inner)
					}
				case "diff":
					tc.Path, tc.OldText, tc.NewText = refString(c, "path"), refString(c, "oldText"), refString(c, "newText")
				case "terminal":
					tc.TerminalID = refString(c, "terminalId")
				}
				t.Content = append(t.Content, tc)
			}
		}
		if list, ok := upd["locations"].([]any); ok {
			t.Locations = []projector.Location{}
			for _, e := range list {
				l, ok := e.(map[string]any)
				if !ok {
					continue
				}
				line, _ := refInt(l["line"])
				t.Locations = append(t.Locations, projector.Location{Path: refString(l, "path"), Line: int(line)})
			}
		}
	case projector.TagPlan:
		if list, ok := upd["entries"].([]any); ok {
			u.Plan = []projector.PlanEntry{}
			for _, e := range list {
				if p, ok := e.(map[string]any); ok {
					u.Plan = append(u.Plan, projector.PlanEntry{
						Content: refString(p, "content"), Priority: refString(p, "priority"), Status: refString(p, "status"),
					})
				}
			}
		}
	case projector.TagUsage:
		u.Usage.Used, u.Usage.UsedKnown = refInt(upd["used"])
		u.Usage.Size, u.Usage.SizeKnown = refInt(upd["size"])
		if cost, ok := upd["cost"].(map[string]any); ok {
			u.Usage.Currency = refString(cost, "currency")
			if n, ok := cost["amount"].(json.Number); ok {
				if x, err := n.Float64(); err == nil {
					u.Usage.Cost, u.Usage.CostKnown = x, true
				}
			}
		}
	case projector.TagCurrentMode:
		u.ModeID = refString(upd, "currentModeId")
	case projector.TagSessionInfo:
		title, ok := upd["title"]
		if s, isStr := title.(string); isStr {
			u.Title, u.TitleSet = s, true
		} else if ok && title == nil {
			u.TitleSet = true
		}
	case projector.TagAvailableCommands:
		if list, ok := upd["availableCommands"].([]any); ok {
			u.Commands = []projector.Command{}
			for _, e := range list {
				if c, ok := e.(map[string]any); ok {
					u.Commands = append(u.Commands, projector.Command{Name: refString(c, "name"), Description: refString(c, "description")})
				}
			}
		}
	case projector.TagConfigOption:
		if list, ok := upd["configOptions"].([]any); ok {
			rawList := []json.RawMessage{}
			_ = json.Unmarshal(raw["configOptions"], &rawList)
			u.Config = []projector.ConfigOption{}
			for i, e := range list {
				c, ok := e.(map[string]any)
				if !ok {
					continue
				}
				o := projector.ConfigOption{ID: refString(c, "id"), Name: refString(c, "name")}
				if s, ok := c["currentValue"].(string); ok {
					o.Value = s
				} else {
					o.Value = string(rawMembers(rawList[i])["currentValue"])
				}
				u.Config = append(u.Config, o)
			}
		}
	case projector.TagSubagent:
		sa := &u.Subagent
		sa.ID = refString(upd, "sessionId")
		if v, ok := upd["title"]; ok {
			sa.Title, sa.TitleSet = refString(upd, "title"), v == nil || isString(v)
		}
		if v, ok := upd["description"]; ok {
			sa.Description, sa.DescriptionSet = refString(upd, "description"), v == nil || isString(v)
		}
		if v, ok := upd["state"]; ok {
			st, isObj := v.(map[string]any)
			sa.StateSet = v == nil || isObj
			sa.State = refString(st, "state")
		}
		if v, ok := upd["capabilities"]; ok {
			caps, isObj := v.(map[string]any)
			sa.CapsSet = v == nil || isObj
			_, sa.Cancel = caps["cancel"].(map[string]any)
		}
	case projector.TagSessionMessage, projector.TagSessionMessageChunk:
		u.ContentType = refString(content, "type")
		if u.ContentType == "text" {
			u.Text = refString(content, "text")
		}
		u.MessageID = refString(upd, "messageId")
		u.Sender = refString(upd, "senderSessionId")
		u.Recipient = refString(upd, "recipientSessionId")
	case projector.TagNotice:
		u.Notice = projector.NoticeUpdate{Severity: refString(upd, "severity"), Title: refString(upd, "title"), Description: refString(upd, "description")}
	case projector.TagCompaction:
		c := &u.Compaction
		c.ID, c.Status = refString(upd, "compactionId"), refString(upd, "status")
		if e, ok := upd["error"]; ok {
			s, isStr := e.(string)
			c.Error, c.ErrorSet = s, isStr || e == nil
		}
		if sum, ok := upd["summary"]; ok {
			switch sum := sum.(type) {
			case nil:
				c.SummarySet = true
			case []any:
				c.SummarySet = true
				for _, b := range sum {
					if b, ok := b.(map[string]any); ok && b["type"] == "text" && refString(b, "text") != "" {
						c.Summary = append(c.Summary, refString(b, "text"))
					}
				}
			}
		}
	case projector.TagCompactionChunk:
		u.Compaction.ID = refString(upd, "compactionId")
		if content["type"] == "text" {
			u.Compaction.Chunk = refString(content, "text")
		}
	case projector.TagPlanRemoved:
		u.PlanID = refString(upd, "planId")
	case projector.TagPlanUpdate:
		u.PlanID = refString(upd, "planId")
		if plan, ok := upd["plan"].(map[string]any); ok {
			u.PlanDoc = projector.PlanDoc{Type: refString(plan, "type"), URI: refString(plan, "uri"), Markdown: refString(plan, "content")}
			if u.PlanID == "" {
				u.PlanID = refString(plan, "planId")
			}
			if list, ok := plan["entries"].([]any); ok {
				u.Plan = []projector.PlanEntry{}
				for _, e := range list {
					if p, ok := e.(map[string]any); ok {
						u.Plan = append(u.Plan, projector.PlanEntry{
							Content: refString(p, "content"), Priority: refString(p, "priority"), Status: refString(p, "status"),
						})
					}
				}
			}
		}
	case projector.TagUnknown:
		if content["type"] == "text" {
			u.Text, u.ContentType = refString(content, "text"), "text"
		}
		for _, s := range []string{refString(upd, "title"), refString(upd, "description"), refString(content, "text"), refString(upd, "text")} {
			if s != "" {
				u.Summary = s
				break
			}
		}
	}
	return u
}
