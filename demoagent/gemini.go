package demoagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// Options.LikeGemini: the agent's models as Gemini CLI 0.61 gives them,
// in the unstable "models" of the session/new and session/load results
// and set with session/set_model. SDK v0.13.5 knows neither: the models
// go into _meta and the wire moves them (unstableModelsOut), and
// session/set_model is renamed, as it comes in, to an extension method
// the SDK hands to HandleExtensionMethod (unstableMethods).

// The demo's pretend Gemini models: id, name. The first is the default.
var geminiModels = [][2]string{{"auto", "Auto"}, {"gemini-pro", "Gemini Pro"}, {"gemini-flash", "Gemini Flash"}}

// geminiModel reports whether id is one of geminiModels.
func geminiModel(id string) bool {
	for _, m := range geminiModels {
		if m[0] == id {
			return true
		}
	}
	return false
}

// metaModels is the _meta key the models wait in for the wire.
const metaModels = "demo.unstableModels"

// setModelMethod is what session/set_model is called once renamed.
const setModelMethod = "_demo/session/set_model"

// unstableModels is the _meta of a session/new or session/load result:
// the models of r, nil without LikeGemini.
func (a *agent) unstableModels(r record) map[string]any {
	if !a.gemini {
		return nil
	}
	cur := r.Model
	if cur == "" {
		cur = geminiModels[0][0]
	}
	avail := make([]map[string]string, 0, len(geminiModels))
	for _, m := range geminiModels {
		avail = append(avail, map[string]string{"modelId": m[0], "name": m[1]})
	}
	return map[string]any{metaModels: map[string]any{"availableModels": avail, "currentModelId": cur}}
}

// HandleExtensionMethod serves session/set_model (renamed): it saves the
// model and answers {}, with no update, as Gemini does.
func (a *agent) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	done, err := a.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if method != setModelMethod || !a.gemini {
		return nil, acp.NewMethodNotFound(method)
	}
	var p struct {
		SessionID string `json:"sessionId"`
		ModelID   string `json:"modelId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	s := a.lookup(acp.SessionId(p.SessionID))
	if s == nil {
		return nil, resourceNotFound(acp.SessionId(p.SessionID))
	}
	if !geminiModel(p.ModelID) {
		return nil, invalidParams(fmt.Sprintf("unknown model %q", p.ModelID))
	}
	if err := s.change(func(r *record) { r.Model = p.ModelID }); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return map[string]any{}, nil
}

// unstableMethods renames session/set_model requests, line by line, for
// the SDK.
type unstableMethods struct {
	r   *bufio.Reader
	buf []byte
}

func (u *unstableMethods) Read(p []byte) (int, error) {
	if len(u.buf) == 0 {
		line, err := u.r.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		u.buf = bytes.Replace(line, []byte(`"session/set_model"`), []byte(`"`+setModelMethod+`"`), 1)
	}
	n := copy(p, u.buf)
	u.buf = u.buf[n:]
	return n, nil
}

var _ io.Reader = (*unstableMethods)(nil)

// unstableModelsOut moves the models a result keeps in _meta
// (unstableModels) to its "models", where Gemini has them.
func unstableModelsOut(p []byte) []byte {
	if !strings.Contains(string(p), metaModels) {
		return p
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(p, &f) != nil || f["result"] == nil {
		return p
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(f["result"], &res) != nil {
		return p
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(res["_meta"], &meta) != nil || meta[metaModels] == nil {
		return p
	}
	res["models"] = meta[metaModels]
	delete(meta, metaModels)
	if len(meta) == 0 {
		delete(res, "_meta")
	} else {
		res["_meta"], _ = json.Marshal(meta)
	}
	f["result"], _ = json.Marshal(res)
	out, err := json.Marshal(f)
	if err != nil {
		return p
	}
	return append(out, '\n')
}
