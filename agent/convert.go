package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

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

// DecodePermissionRequest reads the params of a recorded
// session/request_permission (an event log's), converted as a live
// request is (`gateway replay` shows it as the gateway would).
func DecodePermissionRequest(params []byte) (PermissionRequest, error) {
	var r acp.RequestPermissionRequest
	if err := json.Unmarshal(params, &r); err != nil {
		return PermissionRequest{}, fmt.Errorf("session/request_permission params: %w", err)
	}
	return permissionRequest(r, slog.New(slog.DiscardHandler)), nil
}

// DecodePermissionOutcome reads the result of a recorded
// session/request_permission: the option chosen, or ok false when the
// answer was "cancelled".
func DecodePermissionOutcome(result []byte) (optionID string, ok bool, err error) {
	var r acp.RequestPermissionResponse
	if err := json.Unmarshal(result, &r); err != nil {
		return "", false, fmt.Errorf("session/request_permission result: %w", err)
	}
	if s := r.Outcome.Selected; s != nil {
		return string(s.OptionId), true, nil
	}
	return "", false, nil
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

func modes(m *acp.SessionModeState) *Modes {
	if m == nil {
		return nil
	}
	out := &Modes{Current: string(m.CurrentModeId)}
	for _, md := range m.AvailableModes {
		out.Available = append(out.Available, Mode{ID: string(md.Id), Name: md.Name, Description: deref(md.Description)})
	}
	return out
}

// modelsOf derives the models from the config option of category "model":
// since SDK v0.13.5 the session/new and session/load results carry models
// only as config options (the unstable "models" field is gone).
func modelsOf(config []ConfigOption) *Models {
	for _, c := range config {
		if c.Category != "model" || c.Kind != "select" {
			continue
		}
		out := &Models{Current: c.Value}
		for _, v := range c.Values {
			out.Available = append(out.Available, Model{ID: v.ID, Name: v.Name, Description: v.Description})
		}
		return out
	}
	return nil
}

// configOptions converts the config options of session/new or
// session/load; a variant the SDK could not tell (neither select nor
// boolean) is left out.
func configOptions(opts []acp.SessionConfigOption) []ConfigOption {
	var out []ConfigOption
	for _, o := range opts {
		switch {
		case o.Select != nil:
			s := o.Select
			c := ConfigOption{ID: string(s.Id), Name: s.Name, Description: deref(s.Description), Kind: "select", Value: string(s.CurrentValue)}
			if s.Category != nil {
				c.Category = string(*s.Category)
			}
			if s.Options.Ungrouped != nil {
				for _, v := range *s.Options.Ungrouped {
					c.Values = append(c.Values, ConfigValue{ID: string(v.Value), Name: v.Name, Description: deref(v.Description)})
				}
			}
			if s.Options.Grouped != nil {
				for _, g := range *s.Options.Grouped {
					for _, v := range g.Options {
						c.Values = append(c.Values, ConfigValue{ID: string(v.Value), Name: v.Name, Description: deref(v.Description), Group: g.Name})
					}
				}
			}
			out = append(out, c)
		case o.Boolean != nil:
			b := o.Boolean
			c := ConfigOption{ID: string(b.Id), Name: b.Name, Description: deref(b.Description), Kind: "boolean", Value: strconv.FormatBool(b.CurrentValue)}
			if b.Category != nil {
				c.Category = string(*b.Category)
			}
			out = append(out, c)
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sessionInfos(in []acp.SessionInfo) []SessionInfo {
	out := make([]SessionInfo, 0, len(in))
	for _, s := range in {
		out = append(out, SessionInfo{ID: string(s.SessionId), Cwd: s.Cwd, Title: deref(s.Title), UpdatedAt: deref(s.UpdatedAt)})
	}
	return out
}
