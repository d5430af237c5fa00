package owner

// The owner's side of the gateway's commands other than the choices
// (choices.go): /agent, /attach, /sessions, /help, /status, /new and the
// suggestions of a command's argument.

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// commandState is what the owner keeps for the commands.
type commandState struct {
	agent string               // the agent's name, "" until it started
	opts  []agent.ConfigOption // the session's config options, last known
	modes *agent.Modes         // the legacy modes, last known
	// models are the unstable models of an agent without a model config
	// option (agent.Session.LegacyModels), last known; nil otherwise.
	models *agent.Models
	// choiceSeq numbers the choices shown (showChoices); pickKey is the
	// lane key of the choices whose pick is being applied ("" none): the
	// confirmation replaces them.
	choiceSeq int
	pickKey   string
}

type (
	// commandEv is a gateway command the router let in.
	commandEv struct {
		in  channels.Inbound
		acc Access
	}
	// attachedEv: the store's answer to /attach (attach).
	attachedEv struct {
		in  channels.Inbound
		id  string
		say sysmsg.Notice // the refusal, or nil: attached
	}
	// sessionsEv: the agent listed its sessions.
	sessionsEv struct {
		in   channels.Inbound
		list []agent.SessionInfo
		err  error
	}
	// optionSetEv: the agent answered the change of an option.
	optionSetEv struct {
		in          channels.Inbound
		label, name string
		// key and value are the choice, stored once the agent took it.
		key, value string
		pickKey    string
		opts       []agent.ConfigOption
		err        error
	}
)

// MayOperate reports whether the author may change the session (/new,
// /model, …): the platform's operators, else its approvers.
func (a Access) MayOperate(in channels.Inbound) bool {
	if !a.MayPrompt(in) {
		return false
	}
	if len(a.Rule.Operators) == 0 {
		return a.MayApprove(in)
	}
	return slices.Contains(a.Rule.Operators, in.Author.ID) || hasAny(in.Author.Roles, a.Rule.Operators)
}

// categoryOf returns the config option category of command name and how
// sentences call it.
func categoryOf(name string) (category, label string) {
	switch name {
	case channels.CommandModel:
		return "model", "model"
	case channels.CommandMode:
		return "mode", "mode"
	case channels.CommandEffort:
		return "thought_level", "effort"
	}
	return "", ""
}

// runCommand performs RunCommand.
func (t *Thread) runCommand(in channels.Inbound) {
	c := in.Command
	switch c.Name {
	case channels.CommandAgent:
		t.switchAgent(in)
	case channels.CommandSessions:
		t.listSessions(in)
	case channels.CommandAttach:
		if in.Command.Args == "" {
			t.listSessions(in)
			break
		}
		t.attach(in)
	case channels.CommandHelp:
		t.reply(in, t.help())
	case channels.CommandModel, channels.CommandMode, channels.CommandEffort:
		cat, label := categoryOf(c.Name)
		t.option(in, t.optionBy(func(o agent.ConfigOption) bool { return o.Category == cat }), label, cat, c.Args)
	case channels.CommandSet:
		id, value := c.Args, ""
		if i := strings.IndexFunc(id, unicode.IsSpace); i >= 0 {
			id, value = id[:i], strings.TrimSpace(id[i:])
		}
		if id == "" {
			ids := make([]string, 0, len(t.cmd.opts))
			for _, o := range t.cmd.opts {
				ids = append(ids, o.ID)
			}
			t.reply(in, sysmsg.BadValue{Value: id, Values: ids})
			return
		}
		o := t.optionBy(func(o agent.ConfigOption) bool { return strings.EqualFold(o.ID, id) })
		if o == nil && len(t.cmd.opts) > 0 {
			ids := make([]string, 0, len(t.cmd.opts))
			for _, o := range t.cmd.opts {
				ids = append(ids, o.ID)
			}
			t.reply(in, sysmsg.BadValue{Value: id, Values: ids})
			return
		}
		label := id
		if o != nil {
			label = o.ID
			if o.Kind == "boolean" {
				label = cmp.Or(o.Name, o.ID) // a switch reads by its name
			}
		}
		t.option(in, o, label, "", value)
	}
}

// switchAgent answers /agent: the agents this thread may move to, or a
// move to one of them (SwitchAgent).
func (t *Thread) switchAgent(in channels.Inbound) {
	allowed := t.d.Host.PolicyFor(t.ref, t.space).Agents
	current := t.cmd.agent
	if current == "" {
		current = t.policy.Agent
	}
	name := in.Command.Args
	if name == "" {
		values := allowed
		if len(values) == 0 {
			values = []string{current}
		}
		t.showChoices(in, sysmsg.Choices{Option: "agent", Command: "/" + channels.CommandAgent, Current: current, Values: values}, values)
		return
	}
	_, known := t.d.Host.AgentSpec(name)
	if !known || (len(allowed) > 0 && !slices.Contains(allowed, name)) {
		t.reply(in, sysmsg.NoSuchAgent{Name: name, Allowed: allowed})
		return
	}
	t.apply(thread.SwitchAgent{By: in.Author, Agent: name})
}

// attach checks the session /attach names: one no thread of this
// gateway is bound to (a hand-over from a terminal or an editor); then
// AttachSession. The store is read and written on a child goroutine,
// once what the live threads queued is written (a thread that let the
// session go with /new a moment ago no longer holds it); attached
// takes its answer.
func (t *Thread) attach(in channels.Inbound) {
	ctx, h, ref := t.ctx, t.d.Host, t.ref
	id := in.Command.Args
	name := t.cmd.agent
	if name == "" {
		name = t.policy.Agent
	}
	t.d.WG.Go(func() {
		h.FlushSaves(ctx)
		t.inbox.send(attachedEv{in: in, id: id, say: h.ClaimSession(ctx, ref, name, id)})
	})
}

// attached is the store's answer to /attach: the refusal said, or the
// session taken up.
func (t *Thread) attached(e attachedEv) {
	if e.say != nil {
		t.reply(e.in, e.say)
		return
	}
	t.apply(thread.AttachSession{By: e.in.Author, ID: e.id})
}

// listSessions answers /sessions (and /attach without an id): the live
// agent's sessions, asked on a child goroutine (sessionsEv).
func (t *Thread) listSessions(in channels.Inbound) {
	proc, cwd := t.proc, t.cwd
	if proc == nil {
		t.reply(in, sysmsg.Sessions{NotStarted: true})
		return
	}
	if !proc.CanList() {
		t.reply(in, sysmsg.Sessions{Unsupported: true})
		return
	}
	t.d.WG.Go(func() {
		ctx, cancel := context.WithTimeout(t.d.Ctx, 30*time.Second)
		defer cancel()
		list, err := proc.ListSessions(ctx, cwd)
		if err == nil {
			t.d.Host.FlushSaves(ctx) // the bindings the live threads queued
			list, err = t.attachable(ctx, list)
		}
		t.inbox.send(sessionsEv{in: in, list: list, err: err})
	})
}

// attachable keeps, of the agent's sessions, this thread's and those no
// other thread is bound to and no deleted thread had: another thread's
// sessions are not this thread's to see.
func (t *Thread) attachable(ctx context.Context, list []agent.SessionInfo) ([]agent.SessionInfo, error) {
	st := t.d.Store
	bs, err := st.Bindings(ctx)
	if err != nil {
		return nil, err
	}
	others := map[string]bool{}
	for _, b := range bs {
		if b.Thread != t.ref && b.SessionID != "" {
			others[b.SessionID] = true
		}
	}
	var out []agent.SessionInfo
	for _, l := range list {
		if others[l.ID] {
			continue
		}
		gone, err := st.SessionGone(ctx, l.ID)
		if err != nil {
			return nil, err
		}
		if !gone {
			out = append(out, l)
		}
	}
	return out, nil
}

// sessionsListed answers /sessions with the agent's list.
func (t *Thread) sessionsListed(e sessionsEv) {
	if e.err != nil {
		t.d.Log.Warn("session/list failed", "thread", t.ref, "err", e.err)
		t.reply(e.in, sysmsg.Sessions{Unsupported: true})
		return
	}
	var s sysmsg.Sessions
	for _, l := range e.list {
		s.List = append(s.List, sysmsg.SessionLine{ID: l.ID, Title: l.Title, Updated: l.UpdatedAt})
	}
	t.reply(e.in, s)
}

// help answers /help.
func (t *Thread) help() sysmsg.Help {
	var h sysmsg.Help
	for _, c := range channels.Commands() {
		l := sysmsg.HelpLine{Name: c.Name, Description: c.Description}
		if c.Arg != nil {
			l.Arg = c.Arg.Name
		}
		h.Gateway = append(h.Gateway, l)
	}
	for _, c := range t.proj.Commands() {
		l := sysmsg.HelpLine{Name: c.Name, Description: c.Description}
		if channels.ParseCommand("/"+c.Name) != nil {
			// Typed, it is the gateway's command.
			h.Hidden = append(h.Hidden, l)
			continue
		}
		h.Agent = append(h.Agent, l)
	}
	return h
}

// showStatus answers /status.
func (t *Thread) showStatus(f thread.ShowStatus) {
	s := sysmsg.Status{Agent: t.cmd.agent, Running: t.proc != nil, Turn: f.Turn, Starting: f.Starting, TurnBy: f.By, Queued: f.Queued}
	if s.Agent == "" {
		s.Agent = t.policy.Agent
	}
	if f.Turn {
		s.TurnFor = time.Since(f.Since)
	}
	name := func(o *agent.ConfigOption) string {
		if o == nil {
			return ""
		}
		for _, v := range o.Values {
			if v.ID == o.Value {
				return v.Name
			}
		}
		return o.Value
	}
	s.Model = name(t.optionBy(func(o agent.ConfigOption) bool { return o.Category == "model" }))
	s.Mode = name(t.optionBy(func(o agent.ConfigOption) bool { return o.Category == "mode" }))
	if s.Mode == "" {
		s.Mode = t.legacyModeName()
	}
	if s.Model == "" {
		s.Model = t.legacyModelName()
	}
	s.Effort = name(t.optionBy(func(o agent.ConfigOption) bool { return o.Category == "thought_level" }))
	for _, o := range t.cmd.opts {
		if o.Kind == "boolean" {
			s.Switches = append(s.Switches, sysmsg.Switch{Name: cmp.Or(o.Name, o.ID), On: o.Value == "true"})
		}
	}
	u := t.proj.LastUsage()
	s.ContextUsed, s.ContextSize, s.ContextKnown = u.Used, u.Size, u.UsedKnown && u.SizeKnown
	s.Cost, s.Currency, s.CostKnown = u.Cost, u.Currency, u.CostKnown
	t.reply(f.In, s)
}

// endSession performs EndSession (/new): the session is closed where the
// agent supports it, the process stopped, and the binding forgets the
// session; the thread is told.
func (t *Thread) endSession(f thread.EndSession) {
	proc, sess := t.proc, t.sess
	w := t.dropProcess()
	if proc != nil {
		t.d.WG.Go(func() {
			ctx, cancel := context.WithTimeout(t.d.Ctx, 10*time.Second)
			if sess != nil && f.Attach == "" {
				if _, err := sess.Close(ctx); err != nil {
					t.d.Log.Warn("session/close failed", "thread", t.ref, "err", err)
				}
			}
			cancel()
			t.stopProcess(proc, w)
		})
	}
	st, ref, log := t.d.Store, t.ref, t.d.Log
	if f.Agent != "" {
		t.pick, t.cmd.agent, t.cmd.opts, t.cmd.modes, t.cmd.models = f.Agent, f.Agent, nil, nil, nil
		// The choices were another agent's options.
		t.saves.write("", "the choices", func(ctx context.Context) error { return st.ClearChoices(ctx, ref) },
			func(err error) { log.Error("cannot forget the thread's choices", "thread", ref, "err", err) })
	}
	// A thread that never ran starts its binding with the attached
	// session.
	name := t.cmd.agent
	if name == "" {
		name = t.policy.Agent
	}
	t.saves.write("", "the binding", func(ctx context.Context) error {
		b, ok, err := st.Binding(ctx, ref)
		if err != nil {
			return err
		}
		if !ok && f.Attach != "" {
			b, ok = store.Binding{Thread: ref, Agent: name, Created: time.Now()}, true
		}
		if !ok {
			return nil
		}
		b.SessionID, b.Title, b.Updated = f.Attach, "", time.Now()
		if f.Agent != "" {
			b.Agent = f.Agent
		}
		return st.PutBinding(ctx, b)
	}, func(err error) { log.Error("cannot forget the thread's session", "thread", ref, "err", err) })
	t.confirm(t.cmd.pickKey, sysmsg.NewStarted{By: thread.DisplayName(f.By), Agent: f.Agent, Attach: f.Attach})
	t.showSession()
}

// suggestEv asks the thread for values of a command's argument.
type suggestEv struct{ in channels.Inbound }

// maxSuggestions is how many values a suggestion offers (Discord's
// limit).
const maxSuggestions = 25

// suggestions answers suggestEv: the values of the command's argument
// that match what was typed so far (by id or name, ignoring case).
func (t *Thread) suggestions(in channels.Inbound) {
	c := in.Command
	typed := strings.ToLower(strings.TrimSpace(c.Args))
	var out []channels.Option
	add := func(id, name string) {
		if len(out) < maxSuggestions && (strings.Contains(strings.ToLower(id), typed) || strings.Contains(strings.ToLower(name), typed)) {
			out = append(out, channels.Option{ID: id, Label: name})
		}
	}
	values := func(o *agent.ConfigOption) {
		if o == nil {
			return
		}
		for _, v := range o.Values {
			add(v.ID, v.Name)
		}
	}
	switch c.Name {
	case channels.CommandModel, channels.CommandMode, channels.CommandEffort:
		cat, _ := categoryOf(c.Name)
		o := t.optionBy(func(o agent.ConfigOption) bool { return o.Category == cat })
		values(o)
		if o == nil && cat == "mode" && t.cmd.modes != nil {
			for _, m := range t.cmd.modes.Available {
				add(m.ID, cmp.Or(m.Name, m.ID))
			}
		}
		if o == nil && cat == "model" && t.cmd.models != nil {
			for _, m := range t.cmd.models.Available {
				add(m.ID, cmp.Or(m.Name, m.ID))
			}
		}
	case channels.CommandSet:
		for _, o := range t.cmd.opts {
			add(o.ID, o.Name)
		}
	case channels.CommandAgent:
		for _, a := range t.d.Host.PolicyFor(t.ref, t.space).Agents {
			add(a, a)
		}
	case channels.AgentCommandPicker:
		typed = strings.TrimPrefix(typed, "/")
		for _, ac := range t.proj.Commands() {
			add(ac.Name, sysmsg.AgentCommandLabel(ac.Name, ac.Description))
		}
	}
	t.d.Host.AnswerSuggest(in, out)
}

// legacyModeName is the name of the current legacy mode, "" when there is
// none.
func (t *Thread) legacyModeName() string {
	if m := t.cmd.modes; m != nil {
		return currentName(m.Current, m.Available)
	}
	return ""
}

// legacyModelName is the name of the current unstable model, "" when
// there is none.
func (t *Thread) legacyModelName() string {
	if m := t.cmd.models; m != nil {
		return currentName(m.Current, m.Available)
	}
	return ""
}

// currentName is the name of current among what the agent offers (its
// id when it has no name or is not offered), "" for none.
func currentName[T agent.Mode | agent.Model](current string, offered []T) string {
	if current == "" {
		return ""
	}
	for _, v := range offered {
		if o := agent.Mode(v); o.ID == current {
			return cmp.Or(o.Name, o.ID)
		}
	}
	return current
}

// showSession tells an adapter that shows the thread's session
// (channels.SessionShower) what it is now.
func (t *Thread) showSession() {
	if !t.runner.Caps().ShowSession {
		return
	}
	info := channels.SessionInfo{Agent: t.cmd.agent, Commands: channels.Commands()}
	if info.Agent == "" {
		info.Agent = t.policy.Agent
	}
	for _, o := range t.cmd.opts {
		s := channels.Setting{ID: o.ID, Category: o.Category, Name: o.Name, Current: o.Value}
		cur := o.Value
		if o.Kind == "boolean" {
			s.Values = []channels.Option{{ID: "true", Label: sysmsg.SwitchOn}, {ID: "false", Label: sysmsg.SwitchOff}}
		}
		for _, v := range o.Values {
			s.Values = append(s.Values, channels.Option{ID: v.ID, Label: v.Name})
			if v.ID == o.Value {
				cur = v.Name
			}
		}
		switch o.Category {
		case "model":
			info.Model = cur
		case "mode":
			info.Mode = cur
		case "thought_level":
			info.Effort = cur
		}
		info.Settings = append(info.Settings, s)
	}
	if info.Mode == "" {
		info.Mode = t.legacyModeName()
	}
	if info.Model == "" {
		info.Model = t.legacyModelName()
	}
	if u := t.proj.LastUsage(); u.UsedKnown && u.SizeKnown {
		info.ContextUsed, info.ContextSize = int(u.Used), int(u.Size)
	}
	if u := t.proj.LastUsage(); u.CostKnown {
		info.Cost, info.Currency = u.Cost, u.Currency
	}
	for _, c := range t.proj.Commands() {
		info.Commands = append(info.Commands, channels.CommandInfo{Name: c.Name, Description: c.Description, Agent: true})
	}
	t.runner.ShowSession(info)
}
