package agent

import (
	"encoding/json"
	"log/slog"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/projector"
)

// This file is the one place where SDK types become gateway types.

// permissionRequest converts a session/request_permission. The tool call it
// carries is re-encoded as a tool_call_update and read by acpwire, so that
// the tool state is decoded exactly as the same fields in a session/update.
func permissionRequest(r acp.RequestPermissionRequest, log *slog.Logger) PermissionRequest {
	out := PermissionRequest{SessionID: string(r.SessionId)}
	for _, o := range r.Options {
		out.Options = append(out.Options, PermissionOption{ID: string(o.OptionId), Name: o.Name, Kind: string(o.Kind)})
	}
	out.Tool = toolState(r.ToolCall, log)
	return out
}

func toolState(tc acp.ToolCallUpdate, log *slog.Logger) projector.ToolUpdate {
	fallback := projector.ToolUpdate{ID: projector.ToolCallID(tc.ToolCallId)}
	if tc.Title != nil {
		fallback.Title, fallback.HasTitle = *tc.Title, true
	}
	if tc.Kind != nil {
		fallback.Kind = string(*tc.Kind)
	}
	body, err := json.Marshal(tc)
	if err != nil {
		log.Warn("cannot re-encode a permission request's tool call", "err", err)
		return fallback
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return fallback
	}
	obj["sessionUpdate"] = json.RawMessage(`"tool_call_update"`)
	update, _ := json.Marshal(obj)
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"","update":`)
	line = append(append(line, update...), "}}"...)
	var f acpwire.Frame
	if err := acpwire.Decode(line, &f); err != nil {
		log.Warn("cannot decode a permission request's tool call", "err", err)
		return fallback
	}
	return f.Update.Tool
}
