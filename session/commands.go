package session

// The owner's side of the gateway's commands: the session's options it
// keeps (from the session's start, config_option_update and
// current_mode_update), the choices people made in the thread (applied
// again to every new session of the thread's agent), and the answers.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// legacyMode is the key of a choice of the agent's legacy mode
// (session/set_mode), which is no config option.
const legacyMode = "\x00mode"

// legacyModel is the key of a choice of the agent's unstable model
// (session/set_model), for an agent with no config option of category
// model.
const legacyModel = "\x00model"

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
		acc access
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

// mayOperate reports whether the author may change the session (/new,
// /model, …): the platform's operators, else its approvers.
func (a access) mayOperate(in channels.Inbound) bool {
	if !a.mayPrompt(in) {
		return false
	}
	if len(a.rule.Operators) == 0 {
		return a.mayApprove(in)
	}
	return slices.Contains(a.rule.Operators, in.Author.ID) || hasAny(in.Author.Roles, a.rule.Operators)
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
func (t *thread) runCommand(in channels.Inbound) {
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
		t.r.reply(context.Background(), t.ad, in, t.help())
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
			t.r.reply(context.Background(), t.ad, in, sysmsg.BadValue{Value: id, Values: ids})
			return
		}
		o := t.optionBy(func(o agent.ConfigOption) bool { return strings.EqualFold(o.ID, id) })
		if o == nil && len(t.cmd.opts) > 0 {
			ids := make([]string, 0, len(t.cmd.opts))
			for _, o := range t.cmd.opts {
				ids = append(ids, o.ID)
			}
			t.r.reply(context.Background(), t.ad, in, sysmsg.BadValue{Value: id, Values: ids})
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

func (t *thread) optionBy(ok func(agent.ConfigOption) bool) *agent.ConfigOption {
	for i := range t.cmd.opts {
		if ok(t.cmd.opts[i]) {
			return &t.cmd.opts[i]
		}
	}
	return nil
}

// option shows option o's values (arg ""), or sets it to arg. Without
// an option, category mode falls back to the agent's legacy modes, and
// model to its unstable models.
func (t *thread) option(in channels.Inbound, o *agent.ConfigOption, label, cat string, arg string) {
	ctx := context.Background()
	var ids, names []string
	var current, key string
	switch {
	case o != nil && o.Kind == "boolean":
		// A switch: on or off (true and false work too).
		ids, names, current, key = []string{"true", "false"}, []string{sysmsg.SwitchOn, sysmsg.SwitchOff}, o.Value, o.ID
	case o != nil:
		for _, v := range o.Values {
			ids, names = append(ids, v.ID), append(names, v.Name)
		}
		current, key = o.Value, o.ID
	case cat == "mode" && t.cmd.modes != nil && len(t.cmd.modes.Available) > 0:
		for _, v := range t.cmd.modes.Available {
			ids, names = append(ids, v.ID), append(names, cmp.Or(v.Name, v.ID))
		}
		current, key = t.cmd.modes.Current, legacyMode
	case cat == "model" && t.cmd.models != nil && len(t.cmd.models.Available) > 0:
		for _, v := range t.cmd.models.Available {
			ids, names = append(ids, v.ID), append(names, cmp.Or(v.Name, v.ID))
		}
		current, key = t.cmd.models.Current, legacyModel
	default:
		t.r.reply(ctx, t.ad, in, sysmsg.NoOption{Option: label, NotStarted: t.cmd.opts == nil && t.cmd.modes == nil && t.cmd.models == nil})
		return
	}
	if arg == "" {
		t.showChoices(in, sysmsg.Choices{Option: label, Command: "/" + in.Command.Name, Current: current, Values: ids, Names: names}, names)
		return
	}
	i := slices.IndexFunc(ids, func(id string) bool { return strings.EqualFold(id, arg) })
	if i < 0 {
		i = slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, arg) })
	}
	if i < 0 {
		t.r.reply(ctx, t.ad, in, sysmsg.BadValue{Option: label, Value: arg, Values: ids})
		return
	}
	value, name := ids[i], names[i]
	sess, pickKey := t.sess, t.cmd.pickKey
	if sess == nil {
		// Stored now: the thread's next session gets it (applyChoices),
		// also after a restart.
		t.storeChoice(key, value)
		t.confirm(pickKey, sysmsg.OptionSet{Option: label, Value: name, By: displayName(in.Author), Later: true})
		return
	}
	t.r.wg.Go(func() {
		ctx, cancel := context.WithTimeout(t.r.ctx, 30*time.Second)
		defer cancel()
		var opts []agent.ConfigOption
		var err error
		switch key {
		case legacyMode:
			err = sess.SetMode(ctx, value)
		case legacyModel:
			err = sess.SetModel(ctx, value)
		default:
			opts, err = sess.SetConfigOption(ctx, key, value)
		}
		t.inbox.send(optionSetEv{in: in, label: label, name: name, key: key, value: value, pickKey: pickKey, opts: opts, err: err})
	})
}

// storeChoice keeps the thread's choice of key: every new session of the
// thread gets it (applyChoices), also after a restart.
func (t *thread) storeChoice(key, value string) {
	st := t.r.o.Store
	if err := t.r.persist(context.Background(), t.ref, "the choice", func(ctx context.Context) error { return st.SetChoice(ctx, t.ref, key, value) }); err != nil {
		t.r.log.Error("cannot save the thread's choice", "thread", t.ref, "option", key, "err", err)
	}
}

// optionSet is the agent's answer to a change of an option. A choice the
// agent refused is not kept; one it took is, and is the session's current
// value from now on, whether or not the agent says so in an update (a
// legacy mode: Gemini sends no current_mode_update).
func (t *thread) optionSet(e optionSetEv) {
	if e.err != nil {
		t.r.log.Warn("cannot set a session option", "thread", t.ref, "option", e.label, "err", e.err)
		n := sysmsg.SetFailed{Option: e.label, Err: e.err.Error()}
		var ce *agent.CallError
		if errors.As(e.err, &ce) {
			n.Code, n.AgentSays = ce.Code, ce.Says
		}
		t.r.reply(context.Background(), t.ad, e.in, n)
		return
	}
	t.storeChoice(e.key, e.value)
	switch {
	case e.key == legacyMode && t.cmd.modes != nil:
		t.cmd.modes.Current = e.value
	case e.key == legacyModel && t.cmd.models != nil:
		t.cmd.models.Current = e.value
	case e.opts != nil:
		t.cmd.opts = e.opts
	default:
		if o := t.optionBy(func(o agent.ConfigOption) bool { return o.ID == e.key }); o != nil {
			o.Value = e.value
		}
	}
	t.confirm(e.pickKey, sysmsg.OptionSet{Option: e.label, Value: e.name, By: displayName(e.in.Author)})
	t.showSession()
}

// confirm tells the thread n; a pick's choices (key) become that line.
func (t *thread) confirm(key string, n sysmsg.Notice) {
	if key == "" {
		t.notice(n)
		return
	}
	t.runner.Resolve(key, sysmsg.Text(n))
}

// applyChoices sets the thread's choices on sess, a session just made or
// loaded (on the start's goroutine, before its first prompt); it returns
// sess's options after them. A choice the agent does not offer (any
// more) is left out. It returns the choices the agent refused (answered
// with an error of its own), which the thread forgets.
func applyChoices(ctx context.Context, sess *agent.Session, choices map[string]string, log *slog.Logger) []refusedChoice {
	var refused []refusedChoice
	note := func(key, label string, err error) {
		var ce *agent.CallError
		if errors.As(err, &ce) {
			refused = append(refused, refusedChoice{key: key, label: label, err: ce})
		}
	}
	for _, key := range slices.Sorted(maps.Keys(choices)) {
		value := choices[key]
		if key == legacyMode {
			if sess.Modes != nil && sess.Modes.Current != value {
				if err := sess.SetMode(ctx, value); err != nil {
					log.Warn("cannot apply the thread's mode", "mode", value, "err", err)
					note(key, "mode", err)
				} else {
					sess.Modes.Current = value
				}
			}
			continue
		}
		if key == legacyModel {
			if sess.LegacyModels() && sess.Models.Current != value {
				if err := sess.SetModel(ctx, value); err != nil {
					log.Warn("cannot apply the thread's model", "model", value, "err", err)
					note(key, "model", err)
				} else {
					sess.Models.Current = value
				}
			}
			continue
		}
		i := slices.IndexFunc(sess.Config, func(o agent.ConfigOption) bool { return o.ID == key })
		if i < 0 || sess.Config[i].Value == value {
			continue
		}
		opts, err := sess.SetConfigOption(ctx, key, value)
		if err != nil {
			log.Warn("cannot apply the thread's choice", "option", key, "value", value, "err", err)
			note(key, cmp.Or(sess.Config[i].Name, key), err)
			continue
		}
		if opts != nil {
			sess.Config = opts
		} else {
			sess.Config[i].Value = value
		}
	}
	return refused
}

// refusedChoice is a stored choice the agent refused when a new session
// of the thread was given it.
type refusedChoice struct {
	key, label string
	err        *agent.CallError
}

// forgetRefused drops the choices the agent refused at the start of a
// session, so that no later session is given them again, and says each
// in the thread with the agent's words.
func (t *thread) forgetRefused(refused []refusedChoice) {
	st := t.r.o.Store
	for _, c := range refused {
		if err := t.r.persist(context.Background(), t.ref, "the refused choice", func(ctx context.Context) error { return st.DropChoice(ctx, t.ref, c.key) }); err != nil {
			t.r.log.Error("cannot forget the thread's refused choice", "thread", t.ref, "option", c.label, "err", err)
		}
		t.laneNotice(sysmsg.SetFailed{Option: c.label, Err: c.err.Error(), Code: c.err.Code, AgentSays: c.err.Says})
	}
}

// noteOptions follows the agent's config_option_update and
// current_mode_update.
func (t *thread) noteOptions(u projector.Update) {
	switch u.Tag {
	case projector.TagConfigOption:
		for _, c := range u.Config {
			if o := t.optionBy(func(o agent.ConfigOption) bool { return o.ID == c.ID }); o != nil {
				o.Value = c.Value
			}
		}
	case projector.TagCurrentMode:
		if t.cmd.modes != nil {
			t.cmd.modes.Current = u.ModeID
		}
	}
}

// choicePrefix starts the prompt id of a command's choices (showChoices):
// a pick is that command with the value.
const choicePrefix = "cmd-"

// showChoices shows the values of c (their ids, and names as labels) as
// a prompt where the platform has buttons or a select; picking one gives
// the command with that value. Elsewhere it answers with c as text.
func (t *thread) showChoices(in channels.Inbound, c sysmsg.Choices, names []string) {
	if _, ok := t.ad.(channels.Prompter); !ok || len(c.Values) == 0 {
		t.r.reply(context.Background(), t.ad, in, c)
		return
	}
	opts := make([]channels.Option, len(c.Values))
	for i, v := range c.Values {
		opts[i] = channels.Option{Label: sysmsg.ChoiceLabel(names[i], v == c.Current)}
		if v == c.Current {
			opts[i].Style = "primary"
		}
	}
	t.cmd.choiceSeq++
	cmdName := in.Command.Name
	if cmdName == channels.CommandSet {
		// The click must name the option too (picked): set:ID.
		cmdName += ":" + in.Command.Args
	}
	key := fmt.Sprintf("%s%s-%d", choicePrefix, cmdName, t.cmd.choiceSeq)
	for i := range opts {
		opts[i].ID = key + optionSep + c.Values[i]
	}
	c.Pick = true
	t.runner.Prompt(key, channels.Choice{Text: sysmsg.Text(c), Options: opts}, func(_ channels.Handle, err error) {
		if err != nil {
			t.r.log.Warn("cannot show a command's choices", "thread", t.ref, "err", err)
		}
	})
}

// picked is a click on a value showChoices offered: the command with
// that value, as if typed.
func (t *thread) picked(e choiceEv) bool {
	rest, ok := strings.CutPrefix(e.promptID, choicePrefix)
	if !ok {
		return false
	}
	name := rest
	if i := strings.LastIndexByte(rest, '-'); i >= 0 {
		name = rest[:i]
	}
	args := e.optionID
	if cmd, id, ok := strings.Cut(name, ":"); ok { // set:ID (showChoices)
		name, args = cmd, channels.SetArgs(id, e.optionID)
	}
	in := e.in
	in.Choice = nil
	in.Command = &channels.Command{Name: name, Args: args}
	t.cmd.pickKey = e.promptID
	t.apply(CommandIn{In: in, Operator: e.acc.mayOperate(in)})
	t.cmd.pickKey = ""
	return true
}

// switchAgent answers /agent: the agents this thread may move to, or a
// move to one of them (SwitchAgent).
func (t *thread) switchAgent(in channels.Inbound) {
	ctx := context.Background()
	allowed := t.r.policyFor(t.ref, t.space).Agents
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
	_, known := t.r.agentSpec(name)
	if !known || (len(allowed) > 0 && !slices.Contains(allowed, name)) {
		t.r.reply(ctx, t.ad, in, sysmsg.NoSuchAgent{Name: name, Allowed: allowed})
		return
	}
	t.apply(SwitchAgent{By: in.Author, Agent: name})
}

// attach checks the session /attach names: one no thread of this
// gateway is bound to (a hand-over from a terminal or an editor); then
// AttachSession.
func (t *thread) attach(in channels.Inbound) {
	ctx := context.Background()
	id := in.Command.Args
	st := t.r.o.Store
	b, ok, err := st.Binding(ctx, t.ref)
	if err != nil {
		t.r.log.Error("cannot read the thread's binding", "thread", t.ref, "err", err)
		t.r.reply(ctx, t.ad, in, sysmsg.SetFailed{Option: "session", Err: err.Error()})
		return
	}
	if ok && b.SessionID == id {
		t.r.reply(ctx, t.ad, in, sysmsg.AttachBound{ID: id, Here: true})
		return
	}
	if !ok {
		name := t.cmd.agent
		if name == "" {
			name = t.policy.Agent
		}
		b = store.Binding{Thread: t.ref, Agent: name, Created: time.Now()}
	}
	// The claim: of two threads attaching the session at once, one wins.
	b.SessionID, b.Title, b.Updated = id, "", time.Now()
	err = st.AttachSession(ctx, b)
	switch {
	case errors.Is(err, store.ErrSessionGone):
		t.r.log.Warn("/attach of a deleted thread's session refused", "thread", t.ref, "session", id)
		t.r.reply(ctx, t.ad, in, sysmsg.AttachGone{ID: id})
		return
	case errors.Is(err, store.ErrSessionTaken):
		t.r.reply(ctx, t.ad, in, sysmsg.AttachBound{ID: id})
		return
	case err != nil:
		t.r.log.Error("cannot attach the session", "thread", t.ref, "session", id, "err", err)
		t.r.reply(ctx, t.ad, in, sysmsg.SetFailed{Option: "session", Err: err.Error()})
		return
	}
	t.apply(AttachSession{By: in.Author, ID: id})
}

// listSessions answers /sessions (and /attach without an id): the live
// agent's sessions, asked on a child goroutine (sessionsEv).
func (t *thread) listSessions(in channels.Inbound) {
	proc, cwd := t.proc, t.cwd
	if proc == nil {
		t.r.reply(context.Background(), t.ad, in, sysmsg.Sessions{NotStarted: true})
		return
	}
	if !proc.CanList() {
		t.r.reply(context.Background(), t.ad, in, sysmsg.Sessions{Unsupported: true})
		return
	}
	t.r.wg.Go(func() {
		ctx, cancel := context.WithTimeout(t.r.ctx, 30*time.Second)
		defer cancel()
		list, err := proc.ListSessions(ctx, cwd)
		if err == nil {
			list, err = t.attachable(ctx, list)
		}
		t.inbox.send(sessionsEv{in: in, list: list, err: err})
	})
}

// attachable keeps, of the agent's sessions, this thread's and those no
// other thread is bound to and no deleted thread had: another thread's
// sessions are not this thread's to see.
func (t *thread) attachable(ctx context.Context, list []agent.SessionInfo) ([]agent.SessionInfo, error) {
	st := t.r.o.Store
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
func (t *thread) sessionsListed(e sessionsEv) {
	if e.err != nil {
		t.r.log.Warn("session/list failed", "thread", t.ref, "err", e.err)
		t.r.reply(context.Background(), t.ad, e.in, sysmsg.Sessions{Unsupported: true})
		return
	}
	var s sysmsg.Sessions
	for _, l := range e.list {
		s.List = append(s.List, sysmsg.SessionLine{ID: l.ID, Title: l.Title, Updated: l.UpdatedAt})
	}
	t.r.reply(context.Background(), t.ad, e.in, s)
}

// help answers /help.
func (t *thread) help() sysmsg.Help {
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
func (t *thread) showStatus(f ShowStatus) {
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
	t.r.reply(context.Background(), t.ad, f.In, s)
}

// endSession performs EndSession (/new): the session is closed where the
// agent supports it, the process stopped, and the binding forgets the
// session; the thread is told.
func (t *thread) endSession(f EndSession) {
	proc, sess := t.proc, t.sess
	w := t.dropProcess()
	if proc != nil {
		t.r.wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.r.ctx, 10*time.Second)
			if sess != nil && f.Attach == "" {
				if _, err := sess.Close(ctx); err != nil {
					t.r.log.Warn("session/close failed", "thread", t.ref, "err", err)
				}
			}
			cancel()
			t.stopProcess(proc, w)
		})
	}
	ctx := context.Background()
	st := t.r.o.Store
	if f.Agent != "" {
		t.pick, t.cmd.agent, t.cmd.opts, t.cmd.modes, t.cmd.models = f.Agent, f.Agent, nil, nil, nil
		// The choices were another agent's options.
		if err := t.r.persist(ctx, t.ref, "the choices", func(ctx context.Context) error { return st.ClearChoices(ctx, t.ref) }); err != nil {
			t.r.log.Error("cannot forget the thread's choices", "thread", t.ref, "err", err)
		}
	}
	b, ok, err := st.Binding(ctx, t.ref)
	if err == nil && !ok && f.Attach != "" {
		// A thread that never ran: its binding starts with the session.
		name := t.cmd.agent
		if name == "" {
			name = t.policy.Agent
		}
		b, ok = store.Binding{Thread: t.ref, Agent: name, Created: time.Now()}, true
	}
	if err == nil && ok {
		b.SessionID, b.Title, b.Updated = f.Attach, "", time.Now()
		if f.Agent != "" {
			b.Agent = f.Agent
		}
		if err := t.r.persist(ctx, t.ref, "the binding", func(ctx context.Context) error { return st.PutBinding(ctx, b) }); err != nil {
			t.r.log.Error("cannot forget the thread's session", "thread", t.ref, "err", err)
		}
	} else if err != nil {
		t.r.log.Error("cannot read the thread's binding", "thread", t.ref, "err", err)
	}
	t.confirm(t.cmd.pickKey, sysmsg.NewStarted{By: displayName(f.By), Agent: f.Agent, Attach: f.Attach})
	t.showSession()
}

// suggestEv asks the thread for values of a command's argument.
type suggestEv struct{ in channels.Inbound }

// maxSuggestions is how many values a suggestion offers (Discord's
// limit).
const maxSuggestions = 25

// suggest answers a request for suggestions (Inbound.Suggest): the
// thread's owner knows the values; a thread not in memory, or a person
// who may not prompt, gets none.
func (r *Router) suggest(in channels.Inbound, acc access) {
	r.mu.Lock()
	t := r.threads[in.Thread]
	r.mu.Unlock()
	if acc.mayPrompt(in) && t != nil && t.inbox.send(suggestEv{in: in}) {
		return
	}
	r.answerSuggest(in, nil)
}

// answerSuggest calls in.Suggest with opts on a goroutine of the router.
func (r *Router) answerSuggest(in channels.Inbound, opts []channels.Option) {
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithTimeout(r.ctx, 3*time.Second)
		defer cancel()
		if err := in.Suggest(ctx, opts); err != nil {
			r.log.Debug("cannot answer a request for suggestions", "thread", in.Thread, "err", err)
		}
	}()
}

// suggestions answers suggestEv: the values of the command's argument
// that match what was typed so far (by id or name, ignoring case).
func (t *thread) suggestions(in channels.Inbound) {
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
		for _, a := range t.r.policyFor(t.ref, t.space).Agents {
			add(a, a)
		}
	case channels.AgentCommandPicker:
		typed = strings.TrimPrefix(typed, "/")
		for _, ac := range t.proj.Commands() {
			add(ac.Name, sysmsg.AgentCommandLabel(ac.Name, ac.Description))
		}
	}
	t.r.answerSuggest(in, out)
}

// legacyModeName is the name of the current legacy mode, "" when there is
// none.
func (t *thread) legacyModeName() string {
	m := t.cmd.modes
	if m == nil || m.Current == "" {
		return ""
	}
	for _, v := range m.Available {
		if v.ID == m.Current {
			return cmp.Or(v.Name, v.ID)
		}
	}
	return m.Current
}

// legacyModelName is the name of the current unstable model, "" when
// there is none.
func (t *thread) legacyModelName() string {
	m := t.cmd.models
	if m == nil || m.Current == "" {
		return ""
	}
	for _, v := range m.Available {
		if v.ID == m.Current {
			return cmp.Or(v.Name, v.ID)
		}
	}
	return m.Current
}

// showSession tells an adapter that shows the thread's session
// (channels.SessionShower) what it is now.
func (t *thread) showSession() {
	ss, ok := t.ad.(channels.SessionShower)
	if !ok {
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
	ss.ShowSession(t.ref, info)
}
