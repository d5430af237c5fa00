package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// geminiRequest is the part of a generateContent request the fake reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction json.RawMessage `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	Thought      bool   `json:"thought,omitempty"`
	FunctionCall *struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id,omitempty"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response,omitempty"`
	} `json:"functionResponse,omitempty"`
}

// decodeGemini reads a generateContent or streamGenerateContent body.
func decodeGemini(body []byte) (Request, error) {
	var g geminiRequest
	if err := json.Unmarshal(body, &g); err != nil {
		return Request{}, err
	}
	req := Request{API: "gemini", System: geminiSystem(g.SystemInstruction)}
	for _, t := range g.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	switch {
	case len(g.GenerationConfig.ResponseJSONSchema) > 0 && string(g.GenerationConfig.ResponseJSONSchema) != "null":
		req.Schema = g.GenerationConfig.ResponseJSONSchema
	case len(g.GenerationConfig.ResponseSchema) > 0 && string(g.GenerationConfig.ResponseSchema) != "null":
		req.Schema = g.GenerationConfig.ResponseSchema
	case g.GenerationConfig.ResponseMimeType == "application/json":
		req.Schema = json.RawMessage(`{"type":"object"}`)
	}
	for _, c := range g.Contents {
		var text []string
		var calls []ToolCall
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				req.Messages = append(req.Messages, Message{Role: "tool", ToolCallID: p.FunctionResponse.ID, Output: string(p.FunctionResponse.Response)})
			case p.FunctionCall != nil:
				calls = append(calls, ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: string(p.FunctionCall.Args)})
			case p.Text != "" && !p.Thought:
				text = append(text, p.Text)
			}
		}
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		if len(text) > 0 || len(calls) > 0 {
			req.Messages = append(req.Messages, Message{Role: role, Text: strings.Join(text, "\n"), ToolCalls: calls})
		}
	}
	return req, nil
}

// geminiSystem reads a system instruction: a content, or a bare string.
func geminiSystem(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var c geminiContent
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	var parts []string
	for _, p := range c.Parts {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n")
}

// jsonObject returns args if it is a JSON object, else {}.
func jsonObject(args string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// writeGemini answers with the step as a GenerateContentResponse, or a
// stream of them: a chunk per piece of text, then the function call, the
// last chunk with finishReason and usage.
func writeGemini(w http.ResponseWriter, _ *http.Request, req Request, st Step, _ string) {
	usage := map[string]int{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	chunk := func(parts []map[string]any, final bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		out := map[string]any{"candidates": []any{cand}, "modelVersion": req.Model, "responseId": "fake"}
		if final {
			cand["finishReason"] = "STOP"
			out["usageMetadata"] = usage
		}
		return out
	}
	var call []map[string]any
	if st.Tool != "" && !st.Hold {
		call = []map[string]any{{"functionCall": map[string]any{"name": st.Tool, "args": jsonObject(st.Args)}}}
	}
	if !req.Stream {
		var parts []map[string]any
		if st.Text != "" {
			parts = append(parts, map[string]any{"text": st.Text})
		}
		writeJSON(w, chunk(append(parts, call...), true))
		return
	}
	e := newSSE(w)
	pieces := splitRunes(st.Text, st.Chunks)
	for i, p := range pieces {
		final := i == len(pieces)-1 && call == nil && !st.Hold
		e.event("", chunk([]map[string]any{{"text": p}}, final))
	}
	if st.Hold {
		return
	}
	if call != nil || len(pieces) == 0 {
		if call == nil {
			call = []map[string]any{{"text": ""}}
		}
		e.event("", chunk(call, true))
	}
}
