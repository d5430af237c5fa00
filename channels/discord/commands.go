package discord

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// Discord's limits of application commands.
const (
	maxCommands    = 100 // commands of one scope (global, or one guild)
	maxCommandDesc = 100 // characters of a command's or option's description
	maxChoices     = 25  // autocomplete choices
	maxChoiceChars = 100 // characters of a choice's name and value
)

// commandName is what Discord takes as a chat command's or option's name.
var commandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)

// commandSet remembers the commands the adapter registered last, so that
// a new gateway session (a READY after the first) need not register them
// again, and which were set by SetCommands rather than taken from
// channels.Commands at the first READY.
type commandSet struct {
	mu  sync.Mutex // serialises registrations, and guards set
	set bool       // SetCommands registered commands
}

// SetCommands replaces the application commands of the adapter's guilds
// (Options.Guilds, where they appear at once) or, without guilds, the
// global ones with cmds. It waits for the first READY (the application id
// comes with it) and blocks on I/O. Commands whose names Discord does not
// take are left out (and logged); so are those beyond Discord's 100.
func (a *Adapter) SetCommands(ctx context.Context, cmds []channels.CommandInfo) error {
	a.commands.mu.Lock()
	defer a.commands.mu.Unlock()
	a.commands.set = true
	return a.registerLocked(ctx, cmds)
}

// registerLocked overwrites the registered commands with cmds; a.commands.mu
// is held.
func (a *Adapter) registerLocked(ctx context.Context, cmds []channels.CommandInfo) error {
	select {
	case <-a.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	a.mu.Lock()
	app := a.app
	a.mu.Unlock()
	body := a.appCommands(cmds)
	scopes := a.o.Guilds
	if len(scopes) == 0 {
		scopes = []string{""} // global
	}
	var errs []error
	for _, g := range scopes {
		if _, err := a.s.ApplicationCommandBulkOverwrite(app, g, body, requestOptions(ctx)...); err != nil {
			errs = append(errs, apiError("commands", err))
		}
	}
	return errors.Join(errs...)
}

// registerAtStart registers startCommands at the first READY, unless
// SetCommands was called before. It runs on its own lane.
func (a *Adapter) registerAtStart(ctx context.Context) {
	a.commands.mu.Lock()
	defer a.commands.mu.Unlock()
	if a.commands.set {
		return
	}
	if err := a.registerLocked(ctx, startCommands()); err != nil && ctx.Err() == nil {
		a.log.Warn("discord: cannot register the application commands", "err", err)
	}
}

// The agent's own commands (available_commands_update) are not
// registered one by one: they differ per agent and thread and change
// during a session, and Discord allows 200 command creations a day per
// guild. One command, /agent-command (channels.AgentCommandPicker), is
// registered once with the gateway's: its autocomplete offers the
// thread's agent commands with their descriptions, and it sends the one
// chosen, with its input, to the agent as the prompt "/name input", which
// the thread shows with who ran it.
const (
	pickerCommandOpt = "command"
	pickerInputOpt   = "input"
)

// startCommands are the commands registered at start: the gateway's,
// then the agent's commands' picker.
func startCommands() []channels.CommandInfo {
	return append(channels.Commands(), channels.CommandInfo{
		Name:        channels.AgentCommandPicker,
		Description: "Give the agent one of its own commands (/compact, …), picked from this thread's agent",
	})
}

// pickerOptions are the options of /agent-command: the command,
// autocompleted, and what to pass it.
func pickerOptions() []*discordgo.ApplicationCommandOption {
	return []*discordgo.ApplicationCommandOption{{
		Type:         discordgo.ApplicationCommandOptionString,
		Name:         pickerCommandOpt,
		Description:  "The agent's command; type to see this thread's agent's commands",
		Required:     true,
		Autocomplete: true,
	}, {
		Type:        discordgo.ApplicationCommandOptionString,
		Name:        pickerInputOpt,
		Description: "What to pass to the command, if it takes anything",
	}}
}

// appCommands returns Discord's application commands for cmds: a chat
// command each, with one string option for its argument, autocompleted
// when the gateway can suggest values (the agent's commands' picker has
// two: the command and its input).
func (a *Adapter) appCommands(cmds []channels.CommandInfo) []*discordgo.ApplicationCommand {
	out := []*discordgo.ApplicationCommand{}
	seen := map[string]bool{}
	for _, c := range cmds {
		if !commandName.MatchString(c.Name) || seen[c.Name] {
			a.log.Info("discord: a command Discord cannot register was left out", "command", c.Name)
			continue
		}
		if len(out) == maxCommands {
			a.log.Info("discord: more commands than Discord takes; the rest were left out", "max", maxCommands)
			break
		}
		seen[c.Name] = true
		ac := &discordgo.ApplicationCommand{
			Type:        discordgo.ChatApplicationCommand,
			Name:        c.Name,
			Description: describe(c.Description, c.Name),
		}
		if c.Name == channels.AgentCommandPicker {
			ac.Options = pickerOptions()
		} else if c.Name == channels.CommandStop {
			ac.Options = stopOptions()
		} else if arg := c.Arg; arg != nil && commandName.MatchString(arg.Name) {
			ac.Options = []*discordgo.ApplicationCommandOption{{
				Type:         discordgo.ApplicationCommandOptionString,
				Name:         arg.Name,
				Description:  describe(arg.Description, arg.Name),
				Required:     arg.Required,
				Autocomplete: arg.Suggest,
			}}
		}
		out = append(out, ac)
	}
	return out
}

// stopOptions are /stop's: a choice "all", which drops the queued
// messages too (as "stop all" typed does); without it a stop ends the
// running turn only. Discord offers the choice in its picker, so people
// find it; the value arrives as the command's argument.
func stopOptions() []*discordgo.ApplicationCommandOption {
	return []*discordgo.ApplicationCommandOption{{
		Type:        discordgo.ApplicationCommandOptionString,
		Name:        "what",
		Description: "all: drop the queued messages too",
		Choices:     []*discordgo.ApplicationCommandOptionChoice{{Name: "all: the queued messages too", Value: "all"}},
	}}
}

// describe returns a description Discord takes: one line, 1 to 100
// characters; name when desc is empty.
func describe(desc, name string) string {
	d := strings.Join(strings.Fields(desc), " ")
	if d == "" {
		d = name
	}
	return clip(d, maxCommandDesc)
}

// slash is an application command's interaction as the adapter reads it.
type slash struct {
	channel string
	guild   string
	name    string
	arg     string            // the argument's value ("" none); in an autocomplete, what was typed
	opts    map[string]string // every string option's value by name
	suggest bool              // an autocomplete request
	author  channels.Author
}

// readSlash turns an INTERACTION_CREATE of an application command (type 2)
// or its autocomplete (type 4) into a slash. It returns false for any
// other interaction and for one that lacks what delivery needs.
func readSlash(i *discordgo.Interaction) (slash, bool) {
	if i == nil || i.ID == "" || i.Token == "" {
		return slash{}, false
	}
	if i.Type != discordgo.InteractionApplicationCommand && i.Type != discordgo.InteractionApplicationCommandAutocomplete {
		return slash{}, false
	}
	d, ok := i.Data.(discordgo.ApplicationCommandInteractionData)
	if !ok || d.Name == "" || d.CommandType > discordgo.ChatApplicationCommand {
		return slash{}, false
	}
	s := slash{
		channel: i.ChannelID,
		guild:   i.GuildID,
		name:    strings.ToLower(d.Name),
		suggest: i.Type == discordgo.InteractionApplicationCommandAutocomplete,
		author:  author(i.User, i.Member),
	}
	found := false
	for _, o := range d.Options {
		if o == nil {
			continue
		}
		if v, ok := o.Value.(string); ok {
			v = strings.TrimSpace(v)
			if s.opts == nil {
				s.opts = map[string]string{}
			}
			s.opts[o.Name] = v
			// The first option's value, or in an autocomplete the one
			// being typed.
			if !found || (s.suggest && o.Focused) {
				s.arg, found = v, true
			}
		}
	}
	if s.channel == "" || s.author.ID == "" {
		return slash{}, false
	}
	return s, true
}

// deliverSlash answers an application command's interaction and hands it
// to the Run's handler: a gateway command as Inbound.Command whose Reply
// answers privately, an agent's command as a prompt "/name arg" (shown
// in the thread: showCommand), an autocomplete as Inbound.Suggest.
func (a *Adapter) deliverSlash(r *running, i *discordgo.Interaction, s slash) {
	ctx := r.ctx
	if ctx.Err() != nil {
		return
	}
	ref, why := a.slashThread(ctx, s)
	if s.suggest {
		if why != "" {
			a.suggest(ctx, i, nil) // nothing to suggest outside a thread
			return
		}
		r.h(ctx, channels.Inbound{
			Thread:  ref,
			Author:  s.author,
			ID:      channels.MessageID(i.ID),
			Space:   s.guild,
			Command: &channels.Command{Name: s.name, Args: s.arg},
			Suggest: func(ctx context.Context, opts []channels.Option) error { return a.suggest(ctx, i, opts) },
		})
		return
	}
	// Answer at once, privately: the handler may take longer than the
	// three seconds Discord waits, and only the caller needs the answer.
	err := a.s.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral},
	}, requestOptions(ctx)...)
	if err != nil {
		if ctx.Err() != nil || restCode(err) == discordgo.ErrCodeInteractionHasAlreadyBeenAcknowledged {
			return
		}
		a.log.Warn("discord: cannot acknowledge a command", "channel", s.channel, "command", s.name, "err", err)
	}
	reply := a.commandReply(i)
	if why != "" {
		if err := reply(ctx, why); err != nil && ctx.Err() == nil {
			a.log.Warn("discord: cannot answer a command", "channel", s.channel, "err", err)
		}
		return
	}
	in := channels.Inbound{
		Thread: ref,
		Author: s.author,
		ID:     channels.MessageID(i.ID),
		Space:  s.guild,
		Reply:  reply,
	}
	if c := gatewayCommand(s.name); c != "" {
		in.Command = &channels.Command{Name: c, Args: s.arg}
	} else if s.name == channels.AgentCommandPicker {
		// The agent's command, picked: a prompt, even when its name is
		// also one of the gateway's (the person picked the agent's).
		name := strings.TrimPrefix(s.opts[pickerCommandOpt], "/")
		if name == "" {
			if err := reply(ctx, sysmsg.Prefix("Pick one of the agent's commands.")); err != nil && ctx.Err() == nil {
				a.log.Warn("discord: cannot answer a command", "channel", s.channel, "err", err)
			}
			return
		}
		in.Text = strings.TrimSpace("/" + name + " " + s.opts[pickerInputOpt])
	} else {
		// An agent's own command: a prompt, as if typed.
		in.Text = strings.TrimSpace("/" + s.name + " " + s.arg)
	}
	if in.Command != nil {
		r.h(ctx, in)
		return
	}
	// A prompt: the router answers a refusal through Reply, and nothing
	// else, so the caller is told here that it went, lest Discord's
	// "thinking…" stay until the interaction expires. Admit (which
	// answers a refusal itself) tells which.
	if a.o.Admit != nil && !a.o.Admit(ctx, in) {
		return
	}
	a.showCommand(ctx, s, in.Text)
	r.h(channels.AckAfterHandler(ctx), in) // "Sent" once it is kept
	if err := reply(ctx, "Sent "+sysmsg.Code(clip(in.Text, 200))+" to the agent; the answer follows in the thread."); err != nil && ctx.Err() == nil {
		a.log.Warn("discord: cannot answer a command", "channel", s.channel, "err", err)
	}
}

// showCommand posts in the thread who gave the agent which command, before
// the agent answers it: Discord shows an application command to its
// caller alone, so others would see the answer without the question (a
// command typed as a message shows as that message).
func (a *Adapter) showCommand(ctx context.Context, s slash, text string) {
	line := sysmsg.Prefix(sysmsg.Who(s.author.Name, s.author.ID) + " ran " + sysmsg.Code(clip(text, 200)) + ".")
	_, err := a.s.ChannelMessageSendComplex(s.channel, &discordgo.MessageSend{
		Content:         clip(line, maxMessageChars),
		AllowedMentions: noMentions(),
	}, requestOptions(ctx)...)
	if err != nil && ctx.Err() == nil {
		a.log.Warn("discord: cannot show a command in its thread", "channel", s.channel, "err", err)
	}
}

// gatewayCommand returns the name of the gateway's command called name, ""
// when it is none of them.
func gatewayCommand(name string) string {
	for _, c := range channels.Commands() {
		if c.Name == name && !c.Agent {
			return c.Name
		}
	}
	return ""
}

// slashThread returns the thread a command was given in; why says, for
// the caller, why it cannot be used there ("" when it can).
func (a *Adapter) slashThread(ctx context.Context, s slash) (channels.ThreadRef, string) {
	ref := channels.ThreadRef{Platform: Platform, Channel: s.channel, Thread: s.channel}
	if s.guild == "" {
		if !a.o.DMs {
			return ref, sysmsg.Prefix("I do not take commands in direct messages.")
		}
		return ref, ""
	}
	p, err := a.place(ctx, s.channel)
	if err != nil {
		return ref, sysmsg.Prefix("I could not look up this channel; try again in a moment.")
	}
	if !p.thread() {
		return ref, sysmsg.Prefix("My commands work in the threads of my sessions: mention me to open one.")
	}
	if p.owner != a.botID() && !a.places.isBound(s.channel) {
		return ref, sysmsg.Prefix("I am not part of this thread: mention me to bring me in.")
	}
	if p.parent != "" {
		ref.Channel = p.parent
	}
	return ref, ""
}

// commandReply returns a Reply that answers the caller of a deferred
// command privately: the first answer replaces Discord's "thinking…", the
// later ones follow it.
func (a *Adapter) commandReply(i *discordgo.Interaction) func(context.Context, string) error {
	var mu sync.Mutex
	first := true
	return func(ctx context.Context, text string) error {
		mu.Lock()
		defer mu.Unlock()
		content := clip(text, maxMessageChars)
		if first {
			_, err := a.s.InteractionResponseEdit(i, &discordgo.WebhookEdit{
				Content:         &content,
				AllowedMentions: noMentions(),
			}, requestOptions(ctx)...)
			if err != nil {
				return apiError("reply", err)
			}
			first = false
			return nil
		}
		return a.reply(ctx, i, text)
	}
}

// suggest answers an autocomplete interaction with at most 25 of opts. It
// blocks on I/O.
func (a *Adapter) suggest(ctx context.Context, i *discordgo.Interaction, opts []channels.Option) error {
	choices := []*discordgo.ApplicationCommandOptionChoice{}
	for _, o := range opts {
		if len(choices) == maxChoices {
			break
		}
		if o.ID == "" || len([]rune(o.ID)) > maxChoiceChars {
			continue // Discord could not send it back
		}
		name := strings.TrimSpace(o.Label)
		if name == "" {
			name = o.ID
		}
		choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: clip(name, maxChoiceChars), Value: o.ID})
	}
	err := a.s.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices},
	}, requestOptions(ctx)...)
	if err != nil {
		return apiError("suggest", err)
	}
	return nil
}
