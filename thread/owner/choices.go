package owner

// The choices people make in a thread: a config option, legacy mode or
// unstable model shown, picked or set, kept for every new session of the
// thread (applyChoices), and forgotten when the agent refuses one.

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

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// legacyMode is the key of a choice of the agent's legacy mode
// (session/set_mode), which is no config option.
const legacyMode = "\x00mode"

// legacyModel is the key of a choice of the agent's unstable model
// (session/set_model), for an agent with no config option of category
// model.
const legacyModel = "\x00model"

func (t *Thread) optionBy(ok func(agent.ConfigOption) bool) *agent.ConfigOption {
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
func (t *Thread) option(in channels.Inbound, o *agent.ConfigOption, label, cat string, arg string) {
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
		t.reply(in, sysmsg.NoOption{Option: label, NotStarted: t.cmd.opts == nil && t.cmd.modes == nil && t.cmd.models == nil})
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
		t.reply(in, sysmsg.BadValue{Option: label, Value: arg, Values: ids})
		return
	}
	value, name := ids[i], names[i]
	sess, pickKey := t.sess, t.cmd.pickKey
	if sess == nil {
		// Stored now: the thread's next session gets it (applyChoices),
		// also after a restart.
		t.storeChoice(key, value)
		t.confirm(pickKey, sysmsg.OptionSet{Option: label, Value: name, By: thread.DisplayName(in.Author), Later: true})
		return
	}
	t.d.WG.Go(func() {
		ctx, cancel := context.WithTimeout(t.d.Ctx, 30*time.Second)
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
func (t *Thread) storeChoice(key, value string) {
	st, ref, log := t.d.Store, t.ref, t.d.Log
	t.saves.write("choice "+key, "the choice", func(ctx context.Context) error { return st.SetChoice(ctx, ref, key, value) },
		func(err error) {
			log.Error("cannot save the thread's choice", "thread", ref, "option", key, "err", err)
		})
}

// optionSet is the agent's answer to a change of an option. A choice the
// agent refused is not kept; one it took is, and is the session's current
// value from now on, whether or not the agent says so in an update (a
// legacy mode: Gemini sends no current_mode_update).
func (t *Thread) optionSet(e optionSetEv) {
	if e.err != nil {
		t.d.Log.Warn("cannot set a session option", "thread", t.ref, "option", e.label, "err", e.err)
		n := sysmsg.SetFailed{Option: e.label, Err: e.err.Error()}
		var ce *agent.CallError
		if errors.As(e.err, &ce) {
			n.Code, n.AgentSays = ce.Code, ce.Says
		}
		t.reply(e.in, n)
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
	t.confirm(e.pickKey, sysmsg.OptionSet{Option: e.label, Value: e.name, By: thread.DisplayName(e.in.Author)})
	t.showSession()
}

// confirm tells the thread n; a pick's choices (key) become that line.
func (t *Thread) confirm(key string, n sysmsg.Notice) {
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
func (t *Thread) forgetRefused(refused []refusedChoice) {
	st, ref, log := t.d.Store, t.ref, t.d.Log
	for _, c := range refused {
		t.saves.write("choice "+c.key, "the refused choice", func(ctx context.Context) error { return st.DropChoice(ctx, ref, c.key) },
			func(err error) {
				log.Error("cannot forget the thread's refused choice", "thread", ref, "option", c.label, "err", err)
			})
		t.laneNotice(sysmsg.SetFailed{Option: c.label, Err: c.err.Error(), Code: c.err.Code, AgentSays: c.err.Says})
	}
}

// noteOptions follows the agent's config_option_update and
// current_mode_update.
func (t *Thread) noteOptions(u projector.Update) {
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
func (t *Thread) showChoices(in channels.Inbound, c sysmsg.Choices, names []string) {
	if !t.runner.Caps().Prompt || len(c.Values) == 0 {
		t.reply(in, c)
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
		opts[i].ID = key + thread.OptionSep + c.Values[i]
	}
	c.Pick = true
	t.runner.Prompt(key, channels.Choice{Text: sysmsg.Text(c), Options: opts}, func(_ channels.Handle, err error) {
		if err != nil {
			t.d.Log.Warn("cannot show a command's choices", "thread", t.ref, "err", err)
		}
	})
}

// picked is a click on a value showChoices offered: the command with
// that value, as if typed.
func (t *Thread) picked(e choiceEv) bool {
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
	t.apply(thread.CommandIn{In: in, Operator: e.acc.MayOperate(in)})
	t.cmd.pickKey = ""
	return true
}
