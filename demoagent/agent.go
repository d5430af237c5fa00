package demoagent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	acp "github.com/coder/acp-go-sdk"
)

// agent implements the SDK's Agent interface. Run owns it.
type agent struct {
	log     *slog.Logger
	store   store
	authEnv string
	noLoad  bool
	// noResume: session/resume is not advertised (Options.NoResume).
	noResume bool
	legacy   bool   // no config options, modes only (Options.LegacyModes)
	gemini   bool   // models and modes as Gemini CLI (Options.LikeGemini)
	login    string // Options.LoginMessage
	// noImages: image prompts are not advertised, and refused.
	noImages bool
	getenv   func(string) string
	life     context.Context // ends when Run stops
	wire     *wire
	conn     *acp.AgentSideConnection // set before the first frame is read

	authed    atomic.Bool
	crashOnce sync.Once
	crashed   chan struct{} // closed by crash
	handlers  sync.WaitGroup

	mu       sync.Mutex // guards the fields below
	closing  bool
	sessions map[acp.SessionId]*session
}

var (
	_ acp.Agent       = (*agent)(nil)
	_ acp.AgentLoader = (*agent)(nil)
)

// Session modes.
const (
	modeDefault = "default"
	modePlan    = "plan"
)

func validMode(m string) bool { return m == modeDefault || m == modePlan }

// modeYolo is the mode the agent offers and refuses with LikeGemini (as
// Gemini does in a folder it does not trust).
const modeYolo = "yolo"

func modeState(current string) *acp.SessionModeState {
	return &acp.SessionModeState{
		CurrentModeId: acp.SessionModeId(current),
		AvailableModes: []acp.SessionMode{
			{Id: modeDefault, Name: "Default", Description: acp.Ptr("Run the scripted scenarios")},
			{Id: modePlan, Name: "Plan", Description: acp.Ptr("Same scenarios; the mode is only remembered")},
		},
	}
}

// modes is the mode state the session/new and session/load results carry.
func (a *agent) modes(current string) *acp.SessionModeState {
	m := modeState(current)
	if a.gemini {
		m.AvailableModes = append(m.AvailableModes, acp.SessionMode{Id: modeYolo, Name: "YOLO", Description: acp.Ptr("Refused, as in an untrusted folder")})
	}
	return m
}

// resourceNotFound is ACP's error for an unknown session. The SDK has no
// constructor for it (v0.13.0), so it is built here with the protocol's code.
func resourceNotFound(id acp.SessionId) *acp.RequestError {
	return &acp.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"sessionId": string(id)}}
}

func invalidParams(msg string) *acp.RequestError {
	return acp.NewInvalidParams(map[string]any{"error": msg})
}

// Initialize answers with protocol version 1, session loading, plain
// prompts, and the env-token method when authentication is configured.
func (a *agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.InitializeResponse{}, err
	}
	defer done()
	methods := []acp.AuthMethod{}
	if a.authEnv != "" {
		methods = append(methods, acp.AuthMethod{Agent: &acp.AuthMethodAgent{
			Id:          AuthMethodID,
			Name:        "Environment token",
			Description: acp.Ptr("set $" + a.authEnv),
		}})
	}
	caps := acp.SessionCapabilities{List: &acp.SessionListCapabilities{}, Close: &acp.SessionCloseCapabilities{}, Delete: &acp.SessionDeleteCapabilities{}}
	if !a.noLoad && !a.noResume && !a.gemini { // Gemini CLI has no session/resume
		caps.Resume = &acp.SessionResumeCapabilities{}
	}
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: "gateway-demo-agent", Title: acp.Ptr("Gateway demo agent"), Version: "1"},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         !a.noLoad,
			PromptCapabilities:  acp.PromptCapabilities{Image: !a.noImages},
			SessionCapabilities: caps,
		},
		AuthMethods: methods,
	}, nil
}

// Authenticate succeeds for the env-token method when the configured
// variable is non-empty in the agent's environment.
func (a *agent) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.AuthenticateResponse{}, err
	}
	defer done()
	if a.authEnv == "" || p.MethodId != AuthMethodID {
		return acp.AuthenticateResponse{}, invalidParams(fmt.Sprintf("unknown auth method %q", p.MethodId))
	}
	if a.getenv(a.authEnv) == "" {
		return acp.AuthenticateResponse{}, acp.NewAuthRequired(map[string]any{"error": "$" + a.authEnv + " is not set"})
	}
	a.authed.Store(true)
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) authRequired() error {
	if a.login != "" {
		return &acp.RequestError{Code: -32000, Message: a.login}
	}
	if a.authed.Load() {
		return nil
	}
	return acp.NewAuthRequired(map[string]any{"authMethods": []string{AuthMethodID}})
}

// checkSetup validates what session/new and session/load share.
func checkSetup(cwd string, mcp []acp.McpServer) error {
	if mcp == nil {
		return invalidParams("mcpServers must be an array, got null")
	}
	if !filepath.IsAbs(cwd) {
		return invalidParams(fmt.Sprintf("cwd must be an absolute path, got %q", cwd))
	}
	return nil
}

// NewSession creates and saves a session, then sends its available
// commands and current mode as session/update before answering. It writes
// the session file and two frames. Errors: auth required (-32000) before a
// successful authenticate, invalid params (-32602) for a null mcpServers or
// a relative cwd, internal error when the file cannot be written.
func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	defer done()
	if err := a.authRequired(); err != nil {
		return acp.NewSessionResponse{}, err
	}
	if err := checkSetup(p.Cwd, p.McpServers); err != nil {
		return acp.NewSessionResponse{}, err
	}
	rec := record{Version: recordVersion, ID: newSessionID(), Cwd: p.Cwd, Mode: modeDefault, History: []message{}}
	if err := a.store.save(rec); err != nil {
		return acp.NewSessionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	s := a.adopt(newSession(rec, a.store))
	s.setMCP(p.McpServers)
	ctx, cancel := a.join(ctx)
	defer cancel()
	for _, u := range []acp.SessionUpdate{
		{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{
			{Name: "help", Description: "List the demo scenarios"},
			{Name: "stop", Description: "Say that there is nothing to stop"},
		}}},
		{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: modeDefault}},
	} {
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: s.id, Update: u}); err != nil {
			return acp.NewSessionResponse{}, err
		}
	}
	a.log.Debug("session created", "session", s.id, "cwd", p.Cwd)
	return acp.NewSessionResponse{SessionId: s.id, Modes: a.modes(modeDefault), ConfigOptions: a.configOptions(rec), Meta: a.unstableModels(rec)}, nil
}

// LoadSession reads a session saved by this or an earlier process and
// replays its history, one update per message, before answering. Errors as
// for NewSession, plus resource not found (-32002) for an unknown or
// malformed id and internal error for an unreadable file.
func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	defer done()
	if err := a.authRequired(); err != nil {
		return acp.LoadSessionResponse{}, err
	}
	if err := checkSetup(p.Cwd, p.McpServers); err != nil {
		return acp.LoadSessionResponse{}, err
	}
	s := a.lookup(p.SessionId)
	if s == nil {
		rec, err := a.store.load(string(p.SessionId))
		if errors.Is(err, errNoSession) {
			return acp.LoadSessionResponse{}, resourceNotFound(p.SessionId)
		}
		if err != nil {
			return acp.LoadSessionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
		}
		s = a.adopt(newSession(rec, a.store))
	}
	s.setMCP(p.McpServers)
	rec := s.snapshot()
	ctx, cancel := a.join(ctx)
	defer cancel()
	for _, m := range rec.History {
		u := acp.UpdateAgentMessageText(m.Text)
		if m.Role == roleUser {
			u = acp.UpdateUserMessageText(m.Text)
		}
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: s.id, Update: u}); err != nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	a.log.Debug("session loaded", "session", s.id, "messages", len(rec.History))
	return acp.LoadSessionResponse{Modes: a.modes(rec.Mode), ConfigOptions: a.configOptions(rec), Meta: a.unstableModels(rec)}, nil
}

// SetSessionMode switches between the default and plan modes and saves it
// (file I/O). Errors: -32002 unknown session, -32602 unknown mode.
func (a *agent) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	defer done()
	s := a.lookup(p.SessionId)
	if s == nil {
		return acp.SetSessionModeResponse{}, resourceNotFound(p.SessionId)
	}
	if a.gemini && p.ModeId == modeYolo {
		return acp.SetSessionModeResponse{}, acp.NewInternalError(map[string]any{"details": "Cannot enable privileged approval modes in an untrusted folder."})
	}
	if !validMode(string(p.ModeId)) {
		return acp.SetSessionModeResponse{}, invalidParams(fmt.Sprintf("unknown mode %q", p.ModeId))
	}
	if err := s.change(func(r *record) { r.Mode = string(p.ModeId) }); err != nil {
		return acp.SetSessionModeResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	ctx, cancel := a.join(ctx)
	defer cancel()
	if a.gemini {
		// No current_mode_update: a text chunk outside any turn.
		return acp.SetSessionModeResponse{}, a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: s.id, Update: acp.UpdateAgentMessageText("[MODE_UPDATE] " + string(p.ModeId))})
	}
	// The mode is also a config option: say it changed.
	if err := a.announceOptions(ctx, s.id, a.configOptions(s.snapshot()), true, string(p.ModeId)); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	return acp.SetSessionModeResponse{}, nil
}

// Cancel cancels the running prompt of the session (and any waiting one).
// A prompt in the ignore-cancel scenario carries on regardless.
func (a *agent) Cancel(ctx context.Context, p acp.CancelNotification) error {
	if s := a.lookup(p.SessionId); s != nil {
		s.cancelAll()
	}
	return nil
}

// Prompt runs the scenario named by the prompt's first word and saves the
// prompt and the reply in the session's history. It blocks for the whole
// turn. A new prompt makes the SDK cancel the session's running one, and
// waits for it to end (an ignore-cancel turn runs to its end first).
// Errors: -32002 unknown session; the error scenario's internal error; a
// cancelled turn answers stopReason cancelled, not an error.
func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.PromptResponse{}, err
	}
	defer done()
	s := a.lookup(p.SessionId)
	if s == nil {
		return acp.PromptResponse{}, resourceNotFound(p.SessionId)
	}
	ctx, cancel := a.join(ctx)
	defer cancel()
	defer s.onCancel(cancel)()

	select {
	case s.turn <- struct{}{}:
		defer func() { <-s.turn }()
	case <-ctx.Done():
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}

	text := promptText(p.Prompt)
	images, err := promptImages(p.Prompt)
	if err == nil && a.noImages && len(images) > 0 {
		err = errors.New("this agent does not take images")
	}
	if err != nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"prompt": err.Error()})
	}
	name, arg := parseCommand(text)
	sc := findScenario(name)
	rec := s.snapshot()
	t := &turn{a: a, id: s.id, ctx: ctx, life: a.life, seq: countUser(rec.History) + 1, cwd: rec.Cwd, images: images, mcp: s.mcpServers()}
	a.log.Debug("prompt", "session", s.id, "scenario", sc.name)
	stop, err := sc.run(t, arg)
	if errors.Is(err, errCrashed) {
		<-a.life.Done() // never answer: the process is going away
		return acp.PromptResponse{}, ErrCrash
	}
	switch {
	case errors.Is(err, errScripted):
	case err != nil && ctx.Err() != nil: // cancelled, superseded, or Run is stopping
		stop, err = acp.StopReasonCancelled, nil
	case err != nil:
		return acp.PromptResponse{}, err
	}
	if serr := s.change(func(r *record) {
		r.History = append(r.History, message{Role: roleUser, Text: text})
		if reply := t.reply.String(); reply != "" {
			r.History = append(r.History, message{Role: roleAgent, Text: reply})
		}
		if t.title != "" {
			r.Title = t.title
		}
	}); serr != nil {
		a.log.Warn("saving session history failed", "session", s.id, "err", serr)
	}
	if err != nil {
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: stop}, nil
}

// promptText joins the text blocks of a prompt; other blocks are ignored.
func promptText(blocks []acp.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Text != nil {
			b.WriteString(c.Text.Text)
		}
	}
	return b.String()
}

// image is what the agent learned of an image in a prompt.
type image struct {
	mimeType string
	size     int // bytes, decoded
}

// promptImages returns the prompt's images; their data must be base64.
func promptImages(blocks []acp.ContentBlock) ([]image, error) {
	var out []image
	for _, c := range blocks {
		if c.Image == nil {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(c.Image.Data)
		if err != nil {
			return nil, fmt.Errorf("an image's data is not base64: %w", err)
		}
		out = append(out, image{mimeType: c.Image.MimeType, size: len(data)})
	}
	return out, nil
}

func countUser(h []message) int {
	n := 0
	for _, m := range h {
		if m.Role == roleUser {
			n++
		}
	}
	return n
}

// The methods below are not advertised; they answer "method not found".

func (a *agent) unsupported(method string) error {
	done, err := a.enter()
	if err != nil {
		return err
	}
	defer done()
	return acp.NewMethodNotFound(method)
}

// Logout is not supported.
func (a *agent) Logout(context.Context, acp.LogoutRequest) (acp.LogoutResponse, error) {
	return acp.LogoutResponse{}, a.unsupported(acp.AgentMethodLogout)
}
