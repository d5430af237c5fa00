package agent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgw/gateway/projector"
)

// Handler receives what the agent sends for one session.
type Handler interface {
	// Update receives the session's updates in wire order, on the tap's
	// goroutine. It must not block (hand the update to a queue). history
	// is true for updates the agent replays while session/load runs.
	Update(u projector.Update, history bool)
	// Permission asks people to choose one of r.Options. It runs on its
	// own goroutine and blocks until answered; it returns ok=false to
	// answer "cancelled" (the turn was stopped, the prompt expired without
	// a reject option, or ctx ended).
	Permission(ctx context.Context, r PermissionRequest) (optionID string, ok bool)
}

// PermissionRequest is a session/request_permission from the agent.
type PermissionRequest struct {
	SessionID string
	// Subagent is the child session asking, when SessionID is one of a
	// subagent the session announced (subagent.go); "" when the session
	// asks itself.
	Subagent string
	// Tool is the tool call the request is about, as the request carries
	// it (title, kind, input, content with diffs): it renders fully even
	// when it arrives before the tool_call notification.
	Tool    projector.ToolUpdate
	Options []PermissionOption
}

// PermissionOption is one answer the agent offers.
type PermissionOption struct {
	ID   string
	Name string
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string
}

// Modes are the session modes an agent offers and the one in use.
type Modes struct {
	Current   string
	Available []Mode
}

// Mode is one session mode ("ask", "code", …).
type Mode struct {
	ID, Name, Description string
}

// Models are the models an agent offers and the one in use.
type Models struct {
	Current   string
	Available []Model
}

// Model is one model an agent offers.
type Model struct {
	ID, Name, Description string
}

// ConfigOption is one of a session's configuration options: a selector
// (such as the model or the thinking level) or a switch.
type ConfigOption struct {
	ID, Name, Description string
	// Category is the agent's hint of what the option is about ("mode",
	// "model", "thought_level", or another word), "" when it gave none.
	Category string
	// Kind is "select" or "boolean".
	Kind string
	// Value is the current value: a select's value id, or "true" or
	// "false".
	Value string
	// Values are a select's choices in the agent's order.
	Values []ConfigValue
}

// ConfigValue is one choice of a select ConfigOption.
type ConfigValue struct {
	ID, Name, Description string
	// Group is the name of the group the agent put the choice in, if any.
	Group string
}

// ErrBusy is returned by Prompt while another prompt of the same session is
// in flight.
var ErrBusy = errors.New("a prompt is already running in this session")

// Session is one ACP session of a Process.
type Session struct {
	// ID is the agent's session id.
	ID string
	// Modes, Models and Config are what session/new or session/load
	// reported; nil when the agent reported none. Models come from the
	// config option of category model, else from the results' unstable
	// "models" (LegacyModels).
	Modes  *Modes
	Models *Models
	Config []ConfigOption

	p        *Process
	h        Handler
	children map[string]*child // its subagents, guarded by p.mu (subagent.go)
	loading  atomic.Bool
	// asking is set (under p.mu) from a prompt's start until its answer
	// came, before its caller is told: a prompt asked meanwhile gets
	// ErrBusy. prompt is held until the prompt's last steps are done (the
	// held updates handed over): a prompt its caller starts on hearing the
	// end (a queued message) waits for those rather than failing.
	asking bool
	prompt sync.Mutex
	// holding is set (under p.mu) when the agent's answer to a prompt
	// passed the tap and its caller has not yet been told: the updates
	// meanwhile wait in held, so that they come after the turn's end.
	holding  bool
	held     []projector.Update
	inFlight bool // a PromptThen waits for its answer (p.mu)
}

// maxEarly bounds the updates kept for one session id that is not
// registered yet.
const maxEarly = 1 << 16

// update is the tap's callback for every session/update.
func (p *Process) update(u projector.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.sessions[u.SessionID]; s != nil {
		if u.Tag != projector.TagSubagent {
			s.handLocked(u)
			return
		}
		if id, ok := p.announced(s, u.Subagent); ok {
			s.handLocked(u)
			p.flushChild(id)
		}
		return
	}
	if c := p.children[u.SessionID]; c != nil {
		c.deliver(u)
		return
	}
	if p.closed[u.SessionID] {
		return
	}
	q := p.early[u.SessionID]
	if len(q) >= maxEarly {
		p.log.Warn("too many updates for an unknown session; dropped", "session", u.SessionID)
		return
	}
	p.early[u.SessionID] = append(q, u)
}

// handLocked passes u to the session's handler, or keeps it while the
// answer to a prompt is on its way to the prompt's caller (p.mu held).
func (s *Session) handLocked(u projector.Update) {
	if !s.holding {
		s.h.Update(u, s.loading.Load())
		return
	}
	if len(s.held) >= maxEarly {
		s.p.log.Warn("too many updates after a prompt's answer; dropped", "session", s.ID)
		return
	}
	s.held = append(s.held, u)
}

// answered is the tap's callback for an answer to session id's prompt.
func (p *Process) answered(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.sessions[id]; s != nil && s.inFlight {
		s.holding = true
	}
}

// release hands over the updates held after a prompt's answer.
func (s *Session) release() {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.holding, s.inFlight = false, false
	held := s.held
	s.held = nil
	for _, u := range held {
		s.h.Update(u, s.loading.Load())
	}
}

// register makes s receive its updates, first those that arrived before.
func (p *Process) register(s *Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, u := range p.early[s.ID] {
		s.h.Update(u, s.loading.Load())
	}
	delete(p.early, s.ID)
	delete(p.closed, s.ID)
	p.forgetChild(s.ID) // a session of its own now
	p.sessions[s.ID] = s
}

// NewSession runs session/new in cwd and registers h for its updates. When
// the agent answers "authentication required", it authenticates with the
// Spec's method (or the first offered) and tries once more. The agent is
// given the MCP servers mcp unless its Spec has NoMCP.
func (p *Process) NewSession(ctx context.Context, cwd string, h Handler, mcp ...MCPServer) (*Session, error) {
	ctx, cancel := p.callContext(ctx)
	defer cancel()
	req := acp.NewSessionRequest{Cwd: cwd, McpServers: p.mcpServers(mcp), Meta: p.sessionMeta(mcp)}
	resp, err := request[acp.NewSessionResponse](ctx, p.tap, acp.AgentMethodSessionNew, req)
	if isAuthRequired(err) {
		if aerr := p.authenticate(ctx, p.callError("session/new", err)); aerr != nil {
			return nil, aerr
		}
		resp, err = request[acp.NewSessionResponse](ctx, p.tap, acp.AgentMethodSessionNew, req)
	}
	if err != nil {
		return nil, p.callError("session/new", err)
	}
	config := configOptions(resp.ConfigOptions)
	s := &Session{ID: string(resp.SessionId), Modes: modes(resp.Modes), Config: config, p: p, h: h}
	s.Models = p.models(s.ID, config)
	p.register(s)
	return s, nil
}

// LoadSession resumes session id with session/load. The updates the agent
// replays before answering reach h with history=true. The agent is given
// the MCP servers mcp as for NewSession.
func (p *Process) LoadSession(ctx context.Context, id, cwd string, h Handler, mcp ...MCPServer) (*Session, error) {
	if !p.CanLoad() {
		return nil, fmt.Errorf("agent %q cannot load sessions", p.spec.Name)
	}
	ctx, cancel := p.callContext(ctx)
	defer cancel()
	s := &Session{ID: id, p: p, h: h}
	s.loading.Store(true)
	p.register(s)
	req := acp.LoadSessionRequest{SessionId: acp.SessionId(id), Cwd: cwd, McpServers: p.mcpServers(mcp), Meta: p.sessionMeta(mcp)}
	resp, err := request[acp.LoadSessionResponse](ctx, p.tap, acp.AgentMethodSessionLoad, req)
	if isAuthRequired(err) {
		if aerr := p.authenticate(ctx, p.callError("session/load", err)); aerr != nil {
			p.unregister(id)
			return nil, aerr
		}
		resp, err = request[acp.LoadSessionResponse](ctx, p.tap, acp.AgentMethodSessionLoad, req)
	}
	if err != nil {
		p.unregister(id)
		return nil, p.callError("session/load", err)
	}
	s.Config = configOptions(resp.ConfigOptions)
	s.Modes, s.Models = modes(resp.Modes), p.models(id, s.Config)
	s.loading.Store(false)
	return s, nil
}

// models are the models of session id: from its config option of
// category model, else from the unstable "models" of the result of its
// session/new or session/load (set with Session.SetModel).
func (p *Process) models(id string, config []ConfigOption) *Models {
	raw := p.tap.takeModels(id)
	if m := modelsOf(config); m != nil {
		return m
	}
	return unstableModels(raw)
}

// LegacyModels reports whether the session's models are the unstable
// ones, set with SetModel, as the agent offers no config option of
// category model.
func (s *Session) LegacyModels() bool {
	return s.Models != nil && modelsOf(s.Config) == nil
}

func (p *Process) unregister(id string) {
	p.mu.Lock()
	if s := p.sessions[id]; s != nil {
		p.forgetChildren(s)
	}
	delete(p.sessions, id)
	p.mu.Unlock()
}

func isAuthRequired(err error) bool {
	var re *acp.RequestError
	return errors.As(err, &re) && re.Code == -32000
}

// authenticate runs authenticate with the configured or best method;
// asked is the agent's answer that asked for it, kept in the error when
// there is no method (its words say what to do instead).
func (p *Process) authenticate(ctx context.Context, asked error) error {
	id := p.spec.AuthMethod
	if id == "" {
		id = p.pickAuthMethod()
	}
	if id == "" {
		return &NoAuthError{Agent: p.spec.Name, err: asked}
	}
	p.log.Info("authenticating", "method", id)
	if _, err := p.tap.call(ctx, acp.AgentMethodAuthenticate, acp.AuthenticateRequest{MethodId: id}); err != nil {
		return p.callError("authenticate", err)
	}
	return nil
}

// pickAuthMethod prefers an env-var method whose variables are all set
// for the agent (a headless gateway cannot do a browser login), then the
// first method offered.
func (p *Process) pickAuthMethod() string {
	set := func(name string) bool {
		for _, kv := range p.env {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v != ""
			}
		}
		return false
	}
	for _, m := range p.info.AuthMethods {
		if m.EnvVar == nil || len(m.EnvVar.Vars) == 0 {
			continue
		}
		all := true
		for _, v := range m.EnvVar.Vars {
			all = all && set(v.Name)
		}
		if all {
			return m.EnvVar.Id
		}
	}
	for _, m := range p.info.AuthMethods {
		if id := authMethodID(m); id != "" {
			return id
		}
	}
	return ""
}

func authMethodID(m acp.AuthMethod) string {
	switch {
	case m.EnvVar != nil:
		return m.EnvVar.Id
	case m.Agent != nil:
		return m.Agent.Id
	case m.Terminal != nil:
		return m.Terminal.Id
	}
	return ""
}

// Prompt sends text (and images, after it) as one prompt turn and blocks
// until the agent answers with a stop reason. Every update the agent sent
// before its answer has been passed to the Handler when Prompt returns.
// To stop a turn use Cancel and keep waiting: cancelling ctx makes the gateway
// drop the agent's reply. It returns ErrBusy if a prompt is in flight, and
// an error wrapping ErrExited when the process died.
func (s *Session) Prompt(ctx context.Context, text string, images ...Image) (stopReason string, err error) {
	s.PromptThen(ctx, text, images, func(stop string, e error) { stopReason, err = stop, e })
	return stopReason, err
}

// PromptThen is Prompt that tells done its outcome before any update the
// agent sent after its answer reaches the Handler: a caller that queues
// the turn's end in done sees the session's events in wire order.
func (s *Session) PromptThen(ctx context.Context, text string, images []Image, done func(stopReason string, err error)) {
	s.p.mu.Lock()
	busy := s.asking
	s.asking = true
	s.p.mu.Unlock()
	if busy {
		done("", ErrBusy)
		return
	}
	if !s.prompt.TryLock() {
		if testHookPromptWaits != nil {
			testHookPromptWaits()
		}
		s.prompt.Lock()
	}
	defer s.prompt.Unlock()
	s.p.mu.Lock()
	s.inFlight = true
	s.p.mu.Unlock()
	stop, err := s.ask(ctx, text, images)
	s.p.mu.Lock()
	s.asking = false
	s.p.mu.Unlock()
	done(stop, err)
	s.release()
}

// testHookPromptWaits, when set (tests), is called when a prompt waits
// for the last steps of the one before it.
var testHookPromptWaits func()

// ask sends the prompt and waits for its answer.
func (s *Session) ask(ctx context.Context, text string, images []Image) (stopReason string, err error) {
	ctx, cancel := s.p.callContext(ctx)
	defer cancel()
	blocks := []acp.ContentBlock{acp.TextBlock(text)}
	for _, im := range images {
		blocks = append(blocks, acp.ImageBlock(base64.StdEncoding.EncodeToString(im.Data), im.MimeType))
	}
	resp, err := request[acp.PromptResponse](ctx, s.p.tap, acp.AgentMethodSessionPrompt, acp.PromptRequest{
		SessionId: acp.SessionId(s.ID),
		Prompt:    blocks,
	})
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up on the turn: the agent is told to stop it.
			_ = s.p.tap.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionId: acp.SessionId(s.ID)})
		}
		return "", s.p.callError("session/prompt", err)
	}
	return string(resp.StopReason), nil
}

// Image is an image to send with a prompt, to agents that take images
// (Process.TakesImages).
type Image struct {
	MimeType string
	Data     []byte
}

// Cancel sends session/cancel, and then the same for each subagent of
// the session that can be cancelled and is at work (the parent's cancel
// usually stops them too; told twice is harmless). It does not wait for
// the turn to end.
func (s *Session) Cancel(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return s.p.callError("session/cancel", err)
	}
	if err := s.p.tap.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionId: acp.SessionId(s.ID)}); err != nil {
		return s.p.callError("session/cancel", err)
	}
	for _, id := range s.p.cancellableChildren(s) {
		if err := s.p.tap.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionId: acp.SessionId(id)}); err != nil {
			return s.p.callError("session/cancel", err)
		}
	}
	return nil
}

// Process returns the process the session runs in.
func (s *Session) Process() *Process { return s.p }
