package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	acp "github.com/coder/acp-go-sdk"
)

// This file holds the calls that steer a session besides prompting it:
// config options, legacy modes, listing, closing and resuming sessions.

// ErrUnsupported is wrapped by a call the agent did not advertise.
var ErrUnsupported = errors.New("the agent does not support this")

// CanList reports whether the agent lists its sessions (session/list).
func (p *Process) CanList() bool { return p.info.AgentCapabilities.SessionCapabilities.List != nil }

// CanClose reports whether the agent closes sessions (session/close).
func (p *Process) CanClose() bool { return p.info.AgentCapabilities.SessionCapabilities.Close != nil }

// CanResume reports whether the agent resumes sessions without replaying
// their history (session/resume).
func (p *Process) CanResume() bool {
	return p.info.AgentCapabilities.SessionCapabilities.Resume != nil
}

// SessionInfo is one session the agent lists.
type SessionInfo struct {
	ID, Cwd, Title string
	// UpdatedAt is the agent's ISO 8601 time of the last change, "" if
	// it gave none.
	UpdatedAt string
}

// maxListPages bounds the pages ListSessions follows, against an agent
// whose cursor never ends.
const maxListPages = 64

// ListSessions runs session/list, following the agent's pages. cwd, if not
// "", asks only for the sessions of that directory. It returns an error
// wrapping ErrUnsupported when the agent does not advertise listing.
func (p *Process) ListSessions(ctx context.Context, cwd string) ([]SessionInfo, error) {
	if !p.CanList() {
		return nil, fmt.Errorf("session/list: agent %q: %w", p.spec.Name, ErrUnsupported)
	}
	ctx, cancel := p.callContext(ctx)
	defer cancel()
	req := acp.ListSessionsRequest{}
	if cwd != "" {
		req.Cwd = &cwd
	}
	var out []SessionInfo
	for range maxListPages {
		resp, err := request[acp.ListSessionsResponse](ctx, p.tap, acp.AgentMethodSessionList, req)
		if err != nil {
			return nil, p.callError("session/list", err)
		}
		out = append(out, sessionInfos(resp.Sessions)...)
		if resp.NextCursor == nil || *resp.NextCursor == "" || (req.Cursor != nil && *req.Cursor == *resp.NextCursor) {
			return out, nil
		}
		req.Cursor = resp.NextCursor
	}
	p.log.Warn("session/list: too many pages; the rest is left out", "pages", maxListPages)
	return out, nil
}

// SetConfigOption sets the config option id to value with
// session/set_config_option and returns all the options as the agent
// reports them after the change. value is a value id of a select, or
// "true"/"false" for a boolean option (as Session.Config says). The agent
// also sends config_option_update to the Handler when it changes.
func (s *Session) SetConfigOption(ctx context.Context, id, value string) ([]ConfigOption, error) {
	ctx, cancel := s.p.callContext(ctx)
	defer cancel()
	var req acp.SetSessionConfigOptionRequest
	if s.optionKind(id) == "boolean" {
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("config option %q is a switch: the value must be true or false, not %q", id, value)
		}
		req.Boolean = &acp.SetSessionConfigOptionBoolean{SessionId: acp.SessionId(s.ID), ConfigId: acp.SessionConfigId(id), Type: "boolean", Value: b}
	} else {
		req.ValueId = &acp.SetSessionConfigOptionValueId{SessionId: acp.SessionId(s.ID), ConfigId: acp.SessionConfigId(id), Value: acp.SessionConfigValueId(value)}
	}
	resp, err := request[acp.SetSessionConfigOptionResponse](ctx, s.p.tap, acp.AgentMethodSessionSetConfigOption, req)
	if err != nil {
		return nil, s.p.callError("session/set_config_option", err)
	}
	return configOptions(resp.ConfigOptions), nil
}

func (s *Session) optionKind(id string) string {
	for _, c := range s.Config {
		if c.ID == id {
			return c.Kind
		}
	}
	return ""
}

// SetMode switches the session's legacy mode with session/set_mode, for
// agents that report Modes and no config option of category "mode". The
// agent confirms with a current_mode_update to the Handler.
func (s *Session) SetMode(ctx context.Context, modeID string) error {
	ctx, cancel := s.p.callContext(ctx)
	defer cancel()
	if _, err := s.p.tap.call(ctx, acp.AgentMethodSessionSetMode, acp.SetSessionModeRequest{SessionId: acp.SessionId(s.ID), ModeId: acp.SessionModeId(modeID)}); err != nil {
		return s.p.callError("session/set_mode", err)
	}
	return nil
}

// Close ends the session: its Handler receives nothing more (later
// updates for it are dropped, until it is loaded again), and the agent
// is sent session/close when it advertises it (it reports whether it was
// sent). An agent without session/close keeps the session; it goes when
// the process stops.
func (s *Session) Close(ctx context.Context) (sent bool, err error) {
	s.p.mu.Lock()
	s.p.forgetChildren(s)
	delete(s.p.sessions, s.ID)
	s.p.closed[s.ID] = true
	s.p.mu.Unlock()
	if !s.p.CanClose() {
		return false, nil
	}
	ctx, cancel := s.p.callContext(ctx)
	defer cancel()
	if _, err := s.p.tap.call(ctx, acp.AgentMethodSessionClose, acp.CloseSessionRequest{SessionId: acp.SessionId(s.ID)}); err != nil {
		return true, s.p.callError("session/close", err)
	}
	return true, nil
}

// CanDelete reports whether the agent deletes sessions from its list
// (session/delete, unstable in ACP).
func (p *Process) CanDelete() bool {
	return p.info.AgentCapabilities.SessionCapabilities.Delete != nil
}

// End ends the session for good: session/delete (the agent forgets it:
// no list shows it, no load brings it back) where the agent advertises
// it, then Close. An agent with neither keeps it.
func (s *Session) End(ctx context.Context) error {
	var derr error
	if s.p.CanDelete() {
		cctx, cancel := s.p.callContext(ctx)
		_, err := s.p.tap.call(cctx, acp.AgentMethodSessionDelete, acp.UnstableDeleteSessionRequest{SessionId: acp.SessionId(s.ID)})
		cancel()
		if err != nil {
			derr = s.p.callError("session/delete", err)
		}
	}
	_, cerr := s.Close(ctx)
	return errors.Join(derr, cerr)
}

// ResumeSession reopens session id with session/resume: unlike
// LoadSession the agent replays no history. It returns an error wrapping
// ErrUnsupported when the agent does not advertise resuming. The agent is
// given the MCP servers mcp unless its Spec has NoMCP, as by LoadSession.
func (p *Process) ResumeSession(ctx context.Context, id, cwd string, h Handler, mcp ...MCPServer) (*Session, error) {
	if !p.CanResume() {
		return nil, fmt.Errorf("session/resume: agent %q: %w", p.spec.Name, ErrUnsupported)
	}
	ctx, cancel := p.callContext(ctx)
	defer cancel()
	s := &Session{ID: id, p: p, h: h}
	p.register(s)
	req := acp.ResumeSessionRequest{SessionId: acp.SessionId(id), Cwd: cwd, McpServers: p.mcpServers(mcp), Meta: p.sessionMeta(mcp)}
	resp, err := request[acp.ResumeSessionResponse](ctx, p.tap, acp.AgentMethodSessionResume, req)
	if isAuthRequired(err) {
		if aerr := p.authenticate(ctx, p.callError("session/resume", err)); aerr != nil {
			p.unregister(id)
			return nil, aerr
		}
		resp, err = request[acp.ResumeSessionResponse](ctx, p.tap, acp.AgentMethodSessionResume, req)
	}
	if err != nil {
		p.unregister(id)
		return nil, p.callError("session/resume", err)
	}
	s.Config = configOptions(resp.ConfigOptions)
	s.Modes, s.Models = modes(resp.Modes), p.models(id, s.Config)
	return s, nil
}
