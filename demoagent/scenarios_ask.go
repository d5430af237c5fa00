package demoagent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// The question scenarios send elicitation/create (unstable in ACP). SDK
// v0.13.5 has no field for the session a question belongs to, so the
// scenario puts it in _meta and the wire moves it where the protocol has
// it (see sessionScope).

const metaSessionID = "sessionId"

// ask sends one question and waits for the answer, even after cancel (the
// client must answer it); only the end of Run stops the wait.
func (t *turn) ask(req acp.UnstableCreateElicitationRequest) (acp.UnstableCreateElicitationResponse, error) {
	meta := map[string]any{metaSessionID: string(t.id)}
	switch {
	case req.Form != nil:
		req.Form.Meta, req.Form.Mode = meta, "form"
	case req.Url != nil:
		req.Url.Meta, req.Url.Mode = meta, "url"
	}
	resp, err := t.a.conn.UnstableCreateElicitation(t.life, req)
	if err != nil {
		return resp, fmt.Errorf("elicitation/create: %w", err)
	}
	return resp, nil
}

// answerLine says what the person answered.
func (t *turn) answerLine(resp acp.UnstableCreateElicitationResponse, show func(map[string]any) string) (acp.StopReason, error) {
	switch {
	case resp.Accept != nil:
		return acp.StopReasonEndTurn, t.say(show(resp.Accept.Content))
	case resp.Decline != nil:
		return acp.StopReasonEndTurn, t.say("You declined to answer.")
	default:
		return acp.StopReasonEndTurn, t.say("The question was cancelled.")
	}
}

func runAskChoice(t *turn, _ string) (acp.StopReason, error) {
	resp, err := t.ask(acp.UnstableCreateElicitationRequest{Form: &acp.UnstableCreateElicitationForm{
		Message: "Which color should the button be?",
		RequestedSchema: acp.UnstableElicitationSchema{
			Type: acp.UnstableElicitationSchemaTypeObject,
			Properties: map[string]any{"color": map[string]any{
				"type": "string", "title": "Color",
				"oneOf": []any{
					map[string]any{"const": "red", "title": "Red"},
					map[string]any{"const": "green", "title": "Green"},
					map[string]any{"const": "blue", "title": "Blue"},
				},
			}},
			Required: []string{"color"},
		},
	}})
	if err != nil {
		return "", err
	}
	return t.answerLine(resp, func(c map[string]any) string { return fmt.Sprintf("You chose %v.", c["color"]) })
}

func runAskMulti(t *turn, _ string) (acp.StopReason, error) {
	resp, err := t.ask(acp.UnstableCreateElicitationRequest{Form: &acp.UnstableCreateElicitationForm{
		Message: "Which platforms should I test?",
		RequestedSchema: acp.UnstableElicitationSchema{
			Type: acp.UnstableElicitationSchemaTypeObject,
			Properties: map[string]any{"platforms": map[string]any{
				"type": "array", "title": "Platforms", "minItems": 1,
				"items": map[string]any{"type": "string", "enum": []string{"linux", "macos", "windows"}},
			}},
		},
	}})
	if err != nil {
		return "", err
	}
	return t.answerLine(resp, func(c map[string]any) string {
		var names []string
		if l, ok := c["platforms"].([]any); ok {
			for _, v := range l {
				names = append(names, fmt.Sprint(v))
			}
		}
		slices.Sort(names)
		return "You picked: " + strings.Join(names, ", ") + "."
	})
}

func runAskText(t *turn, _ string) (acp.StopReason, error) {
	resp, err := t.ask(acp.UnstableCreateElicitationRequest{Form: &acp.UnstableCreateElicitationForm{
		Message: "Tell me about the release.",
		RequestedSchema: acp.UnstableElicitationSchema{
			Type: acp.UnstableElicitationSchemaTypeObject,
			Properties: map[string]any{
				"name":    map[string]any{"type": "string", "title": "Release name", "minLength": 1, "maxLength": 40},
				"retries": map[string]any{"type": "integer", "title": "Retries", "minimum": 0, "maximum": 5, "default": 2},
			},
			Required: []string{"name"},
		},
	}})
	if err != nil {
		return "", err
	}
	return t.answerLine(resp, func(c map[string]any) string {
		return fmt.Sprintf("Release %v with %v retries.", c["name"], c["retries"])
	})
}

func runAskURL(t *turn, _ string) (acp.StopReason, error) {
	resp, err := t.ask(acp.UnstableCreateElicitationRequest{Url: &acp.UnstableCreateElicitationUrl{
		Message:       "Please sign in to the demo service.",
		Url:           "https://example.com/demo-login",
		ElicitationId: acp.UnstableElicitationId("login-" + string(t.id)),
	}})
	if err != nil {
		return "", err
	}
	return t.answerLine(resp, func(map[string]any) string { return "Thanks, you are signed in." })
}

// sessionScope moves params._meta.sessionId of an elicitation/create to
// params.sessionId, returning p unchanged for any other frame.
func sessionScope(p []byte) []byte {
	if !strings.Contains(string(p), `"method":"elicitation/create"`) {
		return p
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(p, &f) != nil {
		return p
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(f["params"], &params) != nil {
		return p
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(params["_meta"], &meta) != nil || meta[metaSessionID] == nil {
		return p
	}
	params["sessionId"] = meta[metaSessionID]
	delete(meta, metaSessionID)
	if len(meta) == 0 {
		delete(params, "_meta")
	} else {
		params["_meta"], _ = json.Marshal(meta)
	}
	f["params"], _ = json.Marshal(params)
	out, err := json.Marshal(f)
	if err != nil {
		return p
	}
	return append(out, '\n')
}
