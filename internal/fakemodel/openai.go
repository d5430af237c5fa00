package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// textOf reads OpenAI message content: a string, or a list of parts whose
// text ones are joined.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// role maps an OpenAI role onto the fake's: developer and system
// messages are the system's, not the user's.
func role(r string) string {
	switch r {
	case "user", "assistant", "tool":
		return r
	}
	return "system"
}

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Stream       bool            `json:"stream"`
	Tools        []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Text struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// decodeResponses reads a POST /v1/responses body.
func decodeResponses(body []byte) (Request, error) {
	var r responsesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return Request{}, err
	}
	req := Request{API: "responses", Model: r.Model, Stream: r.Stream, System: r.Instructions}
	for _, t := range r.Tools {
		if t.Name != "" {
			req.Tools = append(req.Tools, t.Name)
		}
	}
	if r.Text.Format.Type == "json_schema" && len(r.Text.Format.Schema) > 0 {
		req.Schema = r.Text.Format.Schema
	}
	var s string
	if json.Unmarshal(r.Input, &s) == nil {
		req.Messages = []Message{{Role: "user", Text: s}}
		return req, nil
	}
	var items []responsesItem
	if len(r.Input) > 0 {
		if err := json.Unmarshal(r.Input, &items); err != nil {
			return Request{}, err
		}
	}
	for _, it := range items {
		switch it.Type {
		case "", "message":
			req.Messages = append(req.Messages, Message{Role: role(it.Role), Text: textOf(it.Content)})
		case "function_call":
			req.Messages = append(req.Messages, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: it.CallID, Name: it.Name, Args: it.Arguments}}})
		case "custom_tool_call":
			req.Messages = append(req.Messages, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: it.CallID, Name: it.Name, Args: it.Input}}})
		case "function_call_output", "custom_tool_call_output":
			req.Messages = append(req.Messages, Message{Role: "tool", ToolCallID: it.CallID, Output: textOf(it.Output)})
		}
	}
	return req, nil
}

// writeResponses answers with the step as a Response, or as its stream of
// events: response.created, a message item with its text deltas, a
// function_call or custom_tool_call item with its argument or input
// deltas, response.completed with usage.
func writeResponses(w http.ResponseWriter, _ *http.Request, req Request, st Step, callID string) {
	const respID = "resp_fake"
	var output []map[string]any
	msg := map[string]any{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}}
	var call map[string]any
	if st.Tool != "" && !st.Hold {
		if st.Custom {
			call = map[string]any{"type": "custom_tool_call", "id": "ctc_" + callID, "call_id": callID, "name": st.Tool, "input": st.Args, "status": "completed"}
		} else {
			call = map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": st.Tool, "arguments": string(jsonObject(st.Args)), "status": "completed"}
		}
	}
	if st.Text != "" {
		output = append(output, msg)
	}
	if call != nil {
		output = append(output, call)
	}
	response := func(status string, out []map[string]any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": req.Model, "output": out}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
				"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}
		}
		return r
	}
	if !req.Stream {
		writeJSON(w, response("completed", output))
		return
	}
	e := newSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": response("in_progress", []map[string]any{})})
	ev("response.in_progress", map[string]any{"response": response("in_progress", []map[string]any{})})
	index := 0
	if st.Text != "" {
		ev("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{
			"type": "message", "id": "msg_fake", "status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": "msg_fake", "output_index": index, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, p := range splitRunes(st.Text, st.Chunks) {
			ev("response.output_text.delta", map[string]any{"item_id": "msg_fake", "output_index": index, "content_index": 0, "delta": p})
		}
		if st.Hold {
			return
		}
		ev("response.output_text.done", map[string]any{"item_id": "msg_fake", "output_index": index, "content_index": 0, "text": st.Text})
		ev("response.content_part.done", map[string]any{"item_id": "msg_fake", "output_index": index, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}})
		ev("response.output_item.done", map[string]any{"output_index": index, "item": msg})
		index++
	}
	if st.Hold {
		return
	}
	if call != nil {
		added := map[string]any{}
		for k, v := range call {
			added[k] = v
		}
		added["status"] = "in_progress"
		id := call["id"]
		if st.Custom {
			added["input"] = ""
			ev("response.output_item.added", map[string]any{"output_index": index, "item": added})
			for _, p := range splitRunes(st.Args, 2) {
				ev("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": index, "delta": p})
			}
			ev("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": index, "input": st.Args})
		} else {
			args := call["arguments"].(string)
			added["arguments"] = ""
			ev("response.output_item.added", map[string]any{"output_index": index, "item": added})
			for _, p := range splitRunes(args, 2) {
				ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": index, "delta": p})
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": index, "arguments": args})
		}
		ev("response.output_item.done", map[string]any{"output_index": index, "item": call})
	}
	ev("response.completed", map[string]any{"response": response("completed", output)})
}

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// decodeChat reads a POST /v1/chat/completions body.
func decodeChat(body []byte) (Request, error) {
	var c chatRequest
	if err := json.Unmarshal(body, &c); err != nil {
		return Request{}, err
	}
	req := Request{API: "chat", Model: c.Model, Stream: c.Stream}
	for _, t := range c.Tools {
		if t.Function.Name != "" {
			req.Tools = append(req.Tools, t.Function.Name)
		}
	}
	switch c.ResponseFormat.Type {
	case "json_schema":
		req.Schema = c.ResponseFormat.JSONSchema.Schema
	case "json_object":
		req.Schema = json.RawMessage(`{"type":"object"}`)
	}
	var system []string
	for _, m := range c.Messages {
		msg := Message{Role: role(m.Role), Text: textOf(m.Content)}
		if msg.Role == "system" {
			system = append(system, msg.Text)
			continue
		}
		if msg.Role == "tool" {
			msg.ToolCallID, msg.Output, msg.Text = m.ToolCallID, msg.Text, ""
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	return req, nil
}

// writeChat answers with the step as a chat completion, or its stream of
// chunks: the role, the text deltas, the tool call (name, then its
// arguments in two pieces), the finish reason, usage, [DONE].
func writeChat(w http.ResponseWriter, _ *http.Request, req Request, st Step, callID string) {
	finish := "stop"
	var calls []map[string]any
	args := string(jsonObject(st.Args))
	if st.Tool != "" && !st.Hold {
		finish = "tool_calls"
		calls = []map[string]any{{"id": callID, "type": "function", "function": map[string]any{"name": st.Tool, "arguments": args}}}
	}
	usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	created := time.Now().Unix()
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": st.Text}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	e := newSSE(w)
	chunk := func(delta map[string]any, finish any) {
		e.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range splitRunes(st.Text, st.Chunks) {
		chunk(map[string]any{"content": p}, nil)
	}
	if st.Hold {
		return
	}
	if calls != nil {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": callID, "type": "function",
			"function": map[string]any{"name": st.Tool, "arguments": ""}}}}, nil)
		for _, p := range splitRunes(args, 2) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	e.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": req.Model,
		"choices": []any{}, "usage": usage})
	io := e.w
	_, _ = io.Write([]byte("data: [DONE]\n\n"))
	if e.fl != nil {
		e.fl.Flush()
	}
}
