package web

import "github.com/acpgw/gateway/channels"

// toolDetail is the JSON of a tool line's details.
type toolDetail struct {
	Input     string     `json:"input,omitempty"`
	Output    string     `json:"output,omitempty"`
	Diffs     []toolDiff `json:"diffs,omitempty"`
	Locations []string   `json:"locations,omitempty"`
}

type toolDiff struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// maxToolDetails is how many tool calls' details a thread keeps for lines
// not posted yet or still changing.
const maxToolDetails = 64

// setToolDetail merges d into the details of tool call key of thread id
// and shows them on the tool's line, if it is there. Unknown threads are
// ignored.
func (s *store) setToolDetail(id, key string, d channels.ToolDetail) {
	if s.shared != nil {
		s.performQuiet(id, func(sc *store) { sc.setToolDetail(id, key, d) })
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[id]
	if t == nil || key == "" {
		return
	}
	var next toolDetail
	if old := t.tools[key]; old != nil {
		next = *old
	} else {
		if t.tools == nil {
			t.tools = make(map[string]*toolDetail)
		}
		t.toolOrder = append(t.toolOrder, key)
		if len(t.toolOrder) > maxToolDetails {
			delete(t.tools, t.toolOrder[0])
			t.toolOrder = t.toolOrder[1:]
		}
	}
	if d.Input != "" {
		next.Input = d.Input
	}
	if d.Output != "" {
		next.Output = d.Output
	}
	if d.Diffs != nil {
		next.Diffs = make([]toolDiff, len(d.Diffs))
		for i, df := range d.Diffs {
			next.Diffs[i] = toolDiff{Path: df.Path, Old: df.Old, New: df.New}
		}
	}
	if d.Locations != nil {
		next.Locations = d.Locations
	}
	t.tools[key] = &next
	for i := len(t.msgs) - 1; i >= 0; i-- {
		m := t.msgs[i]
		if m.Kind != string(channels.KindTool) || m.Key != key {
			continue
		}
		shown := *m
		shown.Tool = &next
		t.msgs[i], t.byID[m.ID] = &shown, &shown
		s.markLocked(t)
		s.publishMessageLocked(t, shown)
		break
	}
}
