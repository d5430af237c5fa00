package demoagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// The demo agent's config options: model, mode and effort, one of each
// category the gateway knows. The mode option and the legacy session mode
// are the same setting.
const (
	optModel  = "model"
	optMode   = "mode"
	optEffort = "effort"
)

type optionDef struct {
	id, name, about string
	category        acp.SessionConfigOptionCategory
	values          [][2]string // value id, name; the first is the default
}

var optionDefs = []optionDef{
	{optModel, "Model", "Which pretend model answers", acp.SessionConfigOptionCategoryModel,
		[][2]string{{"demo-fast", "Demo Fast"}, {"demo-smart", "Demo Smart"}}},
	{optMode, "Mode", "Plan only remembers the choice", acp.SessionConfigOptionCategoryMode,
		[][2]string{{modeDefault, "Default"}, {modePlan, "Plan"}}},
	{optEffort, "Effort", "How hard it pretends to think", acp.SessionConfigOptionCategoryThoughtLevel,
		[][2]string{{"medium", "Medium"}, {"low", "Low"}, {"high", "High"}}},
}

func findOption(id string) (optionDef, bool) {
	i := slices.IndexFunc(optionDefs, func(d optionDef) bool { return d.id == id })
	if i < 0 {
		return optionDef{}, false
	}
	return optionDefs[i], true
}

func validValue(option, value string) bool {
	d, ok := findOption(option)
	return ok && slices.ContainsFunc(d.values, func(v [2]string) bool { return v[0] == value })
}

// optionValue returns the record's value of option, or the default.
func optionValue(r record, option string) string {
	v := map[string]string{optModel: r.Model, optMode: r.Mode, optEffort: r.Effort}[option]
	if v == "" {
		d, _ := findOption(option)
		v = d.values[0][0]
	}
	return v
}

// configOptions returns the options with the record's current values.
func configOptions(r record) []acp.SessionConfigOption {
	out := make([]acp.SessionConfigOption, 0, len(optionDefs))
	for _, d := range optionDefs {
		vals := make(acp.SessionConfigSelectOptionsUngrouped, 0, len(d.values))
		for _, v := range d.values {
			vals = append(vals, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(v[0]), Name: v[1]})
		}
		out = append(out, acp.SessionConfigOption{Select: &acp.SessionConfigOptionSelect{
			Id: acp.SessionConfigId(d.id), Name: d.name, Description: acp.Ptr(d.about), Category: acp.Ptr(d.category),
			Type: "select", CurrentValue: acp.SessionConfigValueId(optionValue(r, d.id)),
			Options: acp.SessionConfigSelectOptions{Ungrouped: &vals},
		}})
	}
	// A switch (ACP 1.33's boolean config option).
	out = append(out, acp.SessionConfigOption{Boolean: &acp.SessionConfigOptionBoolean{
		Id: optFast, Name: "Fast mode", Description: acp.Ptr("Answers sooner; refused with high effort"),
		Type: "boolean", CurrentValue: r.Fast,
	}})
	return out
}

// optFast is the demo agent's boolean config option.
const optFast = "fast"

// setFast sets the switch fast of session s to on; turning it on is
// refused while the effort is high.
func (a *agent) setFast(ctx context.Context, b *acp.SetSessionConfigOptionBoolean) (acp.SetSessionConfigOptionResponse, error) {
	s := a.lookup(b.SessionId)
	if s == nil {
		return acp.SetSessionConfigOptionResponse{}, resourceNotFound(b.SessionId)
	}
	if string(b.ConfigId) != optFast {
		return acp.SetSessionConfigOptionResponse{}, invalidParams(fmt.Sprintf("config option %q is no switch", b.ConfigId))
	}
	if b.Value && optionValue(s.snapshot(), optEffort) == "high" {
		return acp.SetSessionConfigOptionResponse{}, invalidParams("fast mode does not go with high effort: lower the effort first")
	}
	if err := s.change(func(r *record) { r.Fast = b.Value }); err != nil {
		return acp.SetSessionConfigOptionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	opts := configOptions(s.snapshot())
	ctx, cancel := a.join(ctx)
	defer cancel()
	if err := a.announceOptions(ctx, s.id, opts, false, ""); err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

// configOptions returns the session's config options, none for an agent
// with legacy modes only.
func (a *agent) configOptions(r record) []acp.SessionConfigOption {
	if a.legacy {
		return nil
	}
	return configOptions(r)
}

// SetSessionConfigOption sets model, mode or effort, saves it, sends a
// config_option_update (and a current_mode_update for the mode) and
// answers with all the options; the switch fast takes a boolean value
// (setFast). Errors: -32002 unknown session, -32602 unknown option or
// value, a value of the wrong type, fast on with high effort.
func (a *agent) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	defer done()
	if a.legacy {
		return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
	}
	if p.Boolean != nil {
		return a.setFast(ctx, p.Boolean)
	}
	if p.ValueId == nil {
		return acp.SetSessionConfigOptionResponse{}, invalidParams("a value of no known type")
	}
	v := p.ValueId
	s := a.lookup(v.SessionId)
	if s == nil {
		return acp.SetSessionConfigOptionResponse{}, resourceNotFound(v.SessionId)
	}
	id, value := string(v.ConfigId), string(v.Value)
	if _, ok := findOption(id); !ok {
		return acp.SetSessionConfigOptionResponse{}, invalidParams(fmt.Sprintf("unknown config option %q", id))
	}
	if !validValue(id, value) {
		return acp.SetSessionConfigOptionResponse{}, invalidParams(fmt.Sprintf("unknown value %q for config option %q", value, id))
	}
	if err := s.change(func(r *record) {
		switch id {
		case optModel:
			r.Model = value
		case optMode:
			r.Mode = value
		case optEffort:
			r.Effort = value
		}
	}); err != nil {
		return acp.SetSessionConfigOptionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	opts := configOptions(s.snapshot())
	ctx, cancel := a.join(ctx)
	defer cancel()
	if err := a.announceOptions(ctx, s.id, opts, id == optMode, value); err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

// announceOptions sends config_option_update, and current_mode_update
// when the mode changed.
func (a *agent) announceOptions(ctx context.Context, id acp.SessionId, opts []acp.SessionConfigOption, mode bool, value string) error {
	var us []acp.SessionUpdate
	if !a.legacy {
		us = append(us, acp.SessionUpdate{ConfigOptionUpdate: &acp.SessionConfigOptionUpdate{ConfigOptions: opts}})
	}
	if mode {
		us = append(us, acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: acp.SessionModeId(value)}})
	}
	for _, u := range us {
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: id, Update: u}); err != nil {
			return err
		}
	}
	return nil
}

// ListSessions lists the saved sessions (of this and earlier processes),
// newest first, those of p.Cwd only when it is set. One page: no cursor.
func (a *agent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.ListSessionsResponse{}, err
	}
	defer done()
	recs, err := a.store.list()
	if err != nil {
		return acp.ListSessionsResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	out := []acp.SessionInfo{}
	for _, r := range recs {
		if p.Cwd != nil && *p.Cwd != r.rec.Cwd {
			continue
		}
		info := acp.SessionInfo{SessionId: acp.SessionId(r.rec.ID), Cwd: r.rec.Cwd, UpdatedAt: acp.Ptr(r.mod.UTC().Format(time.RFC3339Nano))}
		if r.rec.Title != "" {
			info.Title = acp.Ptr(r.rec.Title)
		}
		out = append(out, info)
	}
	return acp.ListSessionsResponse{Sessions: out}, nil
}

// CloseSession cancels the session's turn and forgets it in this process;
// its file stays, so session/load can open it again. Errors: -32002
// unknown session.
func (a *agent) CloseSession(ctx context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.CloseSessionResponse{}, err
	}
	defer done()
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	if s == nil {
		return acp.CloseSessionResponse{}, resourceNotFound(p.SessionId)
	}
	s.cancelAll()
	a.log.Debug("session closed", "session", p.SessionId)
	return acp.CloseSessionResponse{}, nil
}

// UnstableDeleteSession forgets the session for good: its turn is
// cancelled and its file removed, so neither session/list nor
// session/load finds it again. Errors: -32002 unknown session.
func (a *agent) UnstableDeleteSession(ctx context.Context, p acp.UnstableDeleteSessionRequest) (acp.UnstableDeleteSessionResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.UnstableDeleteSessionResponse{}, err
	}
	defer done()
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	if s != nil {
		s.cancelAll()
	}
	err = a.store.remove(string(p.SessionId))
	if errors.Is(err, errNoSession) && s != nil {
		err = nil // never saved: nothing on disk to remove
	}
	if errors.Is(err, errNoSession) {
		return acp.UnstableDeleteSessionResponse{}, resourceNotFound(p.SessionId)
	}
	if err != nil {
		return acp.UnstableDeleteSessionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	a.log.Debug("session deleted", "session", p.SessionId)
	return acp.UnstableDeleteSessionResponse{}, nil
}

// ResumeSession opens a saved session like LoadSession but replays no
// history. mcpServers may be absent (the SDK omits an empty list). Errors
// as for LoadSession.
func (a *agent) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	done, err := a.enter()
	if err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	defer done()
	if err := a.authRequired(); err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	mcp := p.McpServers
	if mcp == nil {
		mcp = []acp.McpServer{}
	}
	if err := checkSetup(p.Cwd, mcp); err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	s := a.lookup(p.SessionId)
	if s == nil {
		rec, err := a.store.load(string(p.SessionId))
		if errors.Is(err, errNoSession) {
			return acp.ResumeSessionResponse{}, resourceNotFound(p.SessionId)
		}
		if err != nil {
			return acp.ResumeSessionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
		}
		s = a.adopt(newSession(rec, a.store))
	}
	s.setMCP(mcp)
	rec := s.snapshot()
	a.log.Debug("session resumed", "session", s.id)
	return acp.ResumeSessionResponse{Modes: modeState(rec.Mode), ConfigOptions: a.configOptions(rec), Meta: a.unstableModels(rec)}, nil
}

type listed struct {
	rec record
	mod time.Time
}

// list reads every session file, newest first; unreadable ones are left
// out.
func (s store) list() ([]listed, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []listed
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validSessionID(id) {
			continue
		}
		r, err := s.load(id)
		if err != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, listed{r, fi.ModTime()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].mod.After(out[j].mod) })
	return out, nil
}
