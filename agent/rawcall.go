package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/acpgw/gateway/acpwire"
)

// The SDK's types (v0.13.5) know neither the unstable "models" of
// session/new and session/load nor session/set_model, which agents such
// as Gemini CLI use for their models when they offer no config option of
// category model. The tap reads the one from the results as they pass,
// and sends the other as any request.

// watchRequestLocked notes, from a frame the gateway writes, a
// session/new, session/load or session/resume request whose result may carry models. Called with t.mu
// held.
func (t *tap) watchRequestLocked(line []byte) {
	if bytes.Contains(line, []byte(`"session/prompt"`)) {
		t.watchPromptLocked(line)
		return
	}
	if !bytes.Contains(line, []byte(`"session/new"`)) && !bytes.Contains(line, []byte(`"session/load"`)) && !bytes.Contains(line, []byte(`"session/resume"`)) {
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 || (req.Method != "session/new" && req.Method != "session/load" && req.Method != "session/resume") {
		return
	}
	if t.asked == nil {
		t.asked = map[string]string{}
	}
	t.asked[idKey(req.ID)] = req.Params.SessionID
}

// watchPromptLocked notes a session/prompt request the gateway writes,
// so that its answer is seen as it passes (promptAnswered). Called with
// t.mu held.
func (t *tap) watchPromptLocked(line []byte) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 || req.Method != "session/prompt" {
		return
	}
	if t.prompts == nil {
		t.prompts = map[string]string{}
	}
	t.prompts[idKey(req.ID)] = req.Params.SessionID
}

// promptAnswered returns the session of the session/prompt that the
// answer f ends, and forgets the prompt; false when f answers no prompt.
func (t *tap) promptAnswered(f *acpwire.Frame) (string, bool) {
	key := idKey(f.ID)
	t.mu.Lock()
	defer t.mu.Unlock()
	sid, ok := t.prompts[key]
	delete(t.prompts, key)
	return sid, ok
}

// idKey is the map key of a raw JSON-RPC id: numbers and strings alike.
func idKey(id []byte) string {
	if s, err := strconv.Unquote(string(id)); err == nil {
		return "s:" + s
	}
	return "n:" + string(bytes.TrimSpace(id))
}

// maxModels bounds the models value kept for one session.
const maxModels = 1 << 20

// watchResult handles a result or error from the agent: the result of
// a watched session/new or session/load leaves its models for the
// session.
func (t *tap) watchResult(f *acpwire.Frame) {
	key := idKey(f.ID)
	t.mu.Lock()
	defer t.mu.Unlock()
	sid, ok := t.asked[key]
	if !ok {
		return
	}
	delete(t.asked, key)
	if f.Kind != acpwire.Result {
		return
	}
	var res struct {
		SessionID string          `json:"sessionId"`
		Models    json.RawMessage `json:"models"`
	}
	if json.Unmarshal(f.Result, &res) != nil || len(res.Models) == 0 || len(res.Models) > maxModels || string(res.Models) == "null" {
		return
	}
	if res.SessionID != "" {
		sid = res.SessionID
	}
	if t.models == nil {
		t.models = map[string]json.RawMessage{}
	}
	t.models[sid] = bytes.Clone(res.Models)
}

// takeModels returns (and forgets) the unstable models the last
// session/new or session/load of session id reported, nil if none.
func (t *tap) takeModels(id string) json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.models[id]
	delete(t.models, id)
	return m
}

// unstableModels reads the unstable "models" of a session/new or
// session/load result: {availableModels: [{modelId, name, description}],
// currentModelId}. Nil when there are none, or it does not parse.
func unstableModels(raw json.RawMessage) *Models {
	if len(raw) == 0 {
		return nil
	}
	var m struct {
		Available []struct {
			ModelID     string `json:"modelId"`
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"availableModels"`
		Current string `json:"currentModelId"`
	}
	if json.Unmarshal(raw, &m) != nil || (len(m.Available) == 0 && m.Current == "") {
		return nil
	}
	out := &Models{Current: m.Current}
	for _, a := range m.Available {
		if a.ModelID == "" {
			continue
		}
		out.Available = append(out.Available, Model{ID: a.ModelID, Name: cmpOr(a.Name, a.ModelID), Description: a.Description})
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// SetModel switches the session's model with session/set_model (unstable
// in ACP, unknown to the SDK), for agents that report Models without a
// config option of category model (Session.LegacyModels). The agent
// answers with an empty result and sends no update.
func (s *Session) SetModel(ctx context.Context, modelID string) error {
	ctx, cancel := s.p.callContext(ctx)
	defer cancel()
	if _, err := s.p.tap.call(ctx, "session/set_model", map[string]string{"sessionId": s.ID, "modelId": modelID}); err != nil {
		return s.p.callError("session/set_model", err)
	}
	return nil
}
