package discord

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// maxThreadName is Discord's limit of a thread's name, in characters.
const maxThreadName = 100

// defaultThreadName names a thread whose prompt has no words.
const defaultThreadName = "Agent session"

// autoArchive is how long an idle thread the bot opens stays in the channel
// list, in minutes (a day; a post unarchives it anyway).
const autoArchive = 1440

// incoming is a person's message as the adapter reads it.
type incoming struct {
	id        string
	channel   string
	guild     string // "" in a DM
	author    channels.Author
	text      string // without mentions of the bot
	mentioned bool   // the message mentions the bot
	files     []channels.File
	time      time.Time // when it was sent; zero when Discord did not say
}

// readMessage turns a MESSAGE_CREATE into an incoming message. It returns
// false for messages the adapter never delivers: the bot's own, system
// messages (thread created, pins, joins) and those without an author. bot
// is the bot's user id; role, if known, the id of the role Discord made
// for the bot in the message's guild. A mention of that role counts as a
// mention of the bot: Discord's autocomplete offers it under the bot's
// name, and people pick it.
func readMessage(m *discordgo.Message, bot, role string) (incoming, bool) {
	if m == nil || m.Author == nil || m.ID == "" || m.ChannelID == "" {
		return incoming{}, false
	}
	if bot != "" && m.Author.ID == bot {
		return incoming{}, false
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return incoming{}, false
	}
	in := incoming{
		id:      m.ID,
		channel: m.ChannelID,
		guild:   m.GuildID,
		author:  author(m.Author, m.Member),
		time:    m.Timestamp,
	}
	for _, u := range m.Mentions {
		if u != nil && bot != "" && u.ID == bot {
			in.mentioned = true
		}
	}
	if role != "" && slices.Contains(m.MentionRoles, role) {
		in.mentioned = true
	}
	in.text = stripMention(m.Content, bot, role)
	in.files = readFiles(m)
	if !in.mentioned && in.text != strings.TrimSpace(m.Content) {
		in.mentioned = true // the mention is in the text though not in the list
	}
	return in, true
}

// author describes u; member (may be nil) adds the nickname and roles.
func author(u *discordgo.User, member *discordgo.Member) channels.Author {
	a := channels.Author{}
	if u == nil && member != nil {
		u = member.User
	}
	if u != nil {
		a.ID = u.ID
		a.Bot = u.Bot
		a.Name = u.GlobalName
		if a.Name == "" {
			a.Name = u.Username
		}
	}
	if member != nil {
		if member.Nick != "" {
			a.Name = member.Nick
		}
		if len(member.Roles) > 0 {
			a.Roles = append([]string(nil), member.Roles...)
		}
	}
	return a
}

// stripMention removes the mentions of user bot ("<@id>" and the older
// "<@!id>") and of its role ("<@&id>", when role is not "") from text and
// trims the white space left around it.
func stripMention(text, bot, role string) string {
	var tokens []string
	if bot != "" {
		tokens = append(tokens, "<@"+bot+">", "<@!"+bot+">")
	}
	if role != "" {
		tokens = append(tokens, "<@&"+role+">")
	}
	for changed := true; changed; {
		changed = false
		for _, m := range tokens {
			if strings.Contains(text, m) {
				// Removing one can join the halves of another.
				text = strings.ReplaceAll(text, m, "")
				changed = true
			}
		}
	}
	return strings.TrimSpace(text)
}

// threadName names a thread after its prompt: the first line with words,
// white space folded, at most maxThreadName characters.
func threadName(prompt string) string {
	return clipName(prompt, defaultThreadName)
}

// clipName folds white space (and drops control characters) in the first
// non-blank line of s and cuts it to maxThreadName characters, with an
// ellipsis when cut. It returns def when s has no words.
func clipName(s, def string) string {
	var line string
	for l := range strings.Lines(s) {
		if strings.TrimSpace(l) != "" {
			line = l
			break
		}
	}
	var b strings.Builder
	space := false
	for _, r := range line {
		switch {
		case r == utf8.RuneError:
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		case unicode.IsControl(r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	name := b.String()
	if name == "" {
		return def
	}
	if utf8.RuneCountInString(name) > maxThreadName {
		r := []rune(name)[:maxThreadName-1]
		name = strings.TrimRightFunc(string(r), unicode.IsSpace) + "…"
	}
	return name
}

// onMessage queues a message for delivery. Messages in one channel stay in
// order. A mention in a channel is queued under its message id, which is
// the id of the thread it opens, so the thread's later messages wait until
// the first one was delivered.
func (a *Adapter) onMessage(m *discordgo.Message) {
	r := a.current()
	if r == nil {
		return
	}
	in, ok := readMessage(m, a.botID(), a.places.botRole(m.GuildID))
	if !ok {
		return
	}
	key := in.channel
	var turn *mentionTurn // its place among the mentions opening threads
	if in.mentioned {
		if p, ok := a.places.lookup(in.channel); ok && p.threadable() {
			key = in.id
			turn = a.lines.join(in.channel)
		}
	}
	if !r.lanes.Do(key, func() { a.deliverMessage(r, in, turn) }) {
		a.lines.leave(turn)
		a.log.Warn("discord: inbound backlog full; message dropped", "channel", in.channel, "message", in.id)
	}
}

// inbound returns in as the gateway receives it in thread t, live or
// read from its history.
func (a *Adapter) inbound(t channels.ThreadRef, in incoming) channels.Inbound {
	return channels.Inbound{
		Thread:  t,
		Author:  in.author,
		Text:    in.text,
		Command: channels.ParseCommand(in.text),
		Files:   in.files,
		Fetch:   a.fetcher(in.files),
		ID:      channels.MessageID(in.id),
		Space:   in.guild,
		Time:    in.time,
	}
}

// deliverMessage decides whether in is for the gateway, opens a thread for
// a mention in a channel, and hands it to the Run's handler.
//
// A message read before Run's context ended is still handed over (h is
// called with that context, and decides): its lookups run on r.work.
// turn is a mention's place in its channel's line of mentions opening
// threads (nil for other messages); deliverMessage takes it out.
func (a *Adapter) deliverMessage(r *running, in incoming, turn *mentionTurn) {
	defer a.lines.leave(turn)
	ctx := r.work
	if ctx.Err() != nil {
		return // handOver passed
	}
	deliver := func(ref channels.ThreadRef) {
		r.h(r.ctx, a.inbound(ref, in))
	}
	if in.guild == "" {
		if a.o.DMs {
			deliver(channels.ThreadRef{Platform: Platform, Channel: in.channel, Thread: in.channel})
		}
		return
	}
	p, err := a.place(ctx, in.channel)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn("discord: cannot look up a channel; message ignored", "channel", in.channel, "err", err)
		}
		return
	}
	switch {
	case p.thread():
		parent := p.parent
		if parent == "" {
			parent = in.channel // never seen without one; keep the ref usable
		}
		ref := channels.ThreadRef{Platform: Platform, Channel: parent, Thread: in.channel}
		if in.mentioned {
			a.places.bind(in.channel)
		} else if p.owner != a.botID() && !a.places.isBound(in.channel) {
			if a.o.KnownThread == nil || !a.o.KnownThread(ctx, ref) {
				return // a thread the gateway is not part of
			}
			a.places.bind(in.channel) // bound before a restart, or through another edge
		}
		deliver(ref)
	case in.mentioned:
		if in.author.Bot || (in.text == "" && len(in.files) == 0) {
			return // bots and empty mentions open no thread
		}
		if a.o.Admit != nil && !a.o.Admit(ctx, channels.Inbound{
			Thread: channels.ThreadRef{Platform: Platform, Channel: in.channel, Thread: in.channel},
			Author: in.author,
			Text:   in.text,
			ID:     channels.MessageID(in.id),
			Space:  in.guild,
			Reply:  func(ctx context.Context, text string) error { return a.answer(ctx, in, text) },
		}) {
			return // someone without access opens nothing
		}
		if !p.threadable() {
			a.tell(ctx, in, "I work in threads, and cannot open one in this kind of channel. Mention me in a text channel.")
			return
		}
		name := in.text
		if name == "" {
			name = in.files[0].Name // a long paste Discord made into a file
		}
		if turn == nil {
			turn = a.lines.join(in.channel) // a channel learnt on the way
		}
		a.tellBusy(ctx, turn, in)
		th, err := a.startThreadPatiently(ctx, turn, in.channel, in.id, threadName(name))
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("discord: cannot open a thread for a mention", "channel", in.channel, "message", in.id, "err", err)
				if why := threadFailure(err); why != "" {
					a.tell(ctx, in, why)
				}
			}
			return
		}
		deliver(channels.ThreadRef{Platform: Platform, Channel: in.channel, Thread: th})
	}
}

// threadFailure says, for the person who mentioned the bot, why no thread
// was opened; "" when they need not be told.
func threadFailure(err error) string {
	var rl *channels.RateLimitError
	switch code := restCode(err); {
	case errors.As(err, &rl):
		return "Discord is rate-limiting me, so I could not open a thread for this. Mention me again in a minute."
	case code == discordgo.ErrCodeMissingPermissions || code == discordgo.ErrCodeMissingAccess:
		return "I could not open a thread for this: I lack the permission to create public threads in this channel. Ask a server admin to grant me Create Public Threads and Send Messages in Threads."
	case code == errCodeThreadAlreadyCreated:
		return "" // the thread exists: this message was handled before
	case code != 0:
		var re *discordgo.RESTError
		errors.As(err, &re)
		return "I could not open a thread for this (Discord said: " + re.Message.Message + ")."
	default:
		return "I could not open a thread for this: Discord did not answer. Mention me again in a moment."
	}
}

// errCodeThreadAlreadyCreated is Discord's "A thread has already been
// created for this message".
const errCodeThreadAlreadyCreated = 160004

// tell answers in's author in the channel with a gateway notice, waiting
// out rate limits, and logs when even that fails. It blocks on I/O.
func (a *Adapter) tell(ctx context.Context, in incoming, text string) {
	err := a.patiently(ctx, time.Now(), func() error { return a.answer(ctx, in, sysmsg.Prefix(text)) })
	if err != nil && ctx.Err() == nil {
		a.log.Warn("discord: cannot answer a mention", "channel", in.channel, "message", in.id, "err", err)
	}
}

// startThread opens a public thread named name from message msg in
// channel and returns its id. It blocks on I/O.
func (a *Adapter) startThread(ctx context.Context, channel, msg, name string) (string, error) {
	th, err := a.s.MessageThreadStartComplex(channel, msg, &discordgo.ThreadStart{
		Name:                name,
		AutoArchiveDuration: autoArchive,
	}, requestOptions(ctx)...)
	if err != nil {
		return "", apiError("thread", err)
	}
	a.places.put(th, "")
	return th.ID, nil
}

// place returns what is known of a channel, asking Discord when the
// gateway did not tell (waiting out rate limits). It blocks on I/O then.
func (a *Adapter) place(ctx context.Context, id string) (place, error) {
	if p, ok := a.places.lookup(id); ok {
		return p, nil
	}
	var c *discordgo.Channel
	err := a.patiently(ctx, time.Now(), func() error {
		var err error
		if c, err = a.s.Channel(id, requestOptions(ctx)...); err != nil {
			return apiError("channel", err)
		}
		return nil
	})
	if err != nil {
		return place{}, err
	}
	a.places.put(c, "")
	p, _ := a.places.lookup(id)
	return p, nil
}

// click is a button click as the adapter reads it.
type click struct {
	channel  string
	guild    string
	message  string // the prompt's message id
	customID string
	author   channels.Author
}

// readClick turns an INTERACTION_CREATE into a click: a button's, or a
// pick in a choice's select menu (its value is the option's custom id).
// It returns false for interactions that are neither.
func readClick(i *discordgo.Interaction) (click, bool) {
	if i == nil || i.Type != discordgo.InteractionMessageComponent || i.ID == "" || i.Token == "" {
		return click{}, false
	}
	d, ok := i.Data.(discordgo.MessageComponentInteractionData)
	if !ok || d.CustomID == "" || i.Message == nil || i.Message.ID == "" {
		return click{}, false
	}
	id := d.CustomID
	if d.ComponentType == discordgo.SelectMenuComponent && d.CustomID == choiceMenuID {
		if len(d.Values) != 1 || d.Values[0] == "" {
			return click{}, false
		}
		id = d.Values[0] // the picked option of a choice's menu
	}
	c := click{
		channel:  i.ChannelID,
		guild:    i.GuildID,
		message:  i.Message.ID,
		customID: id,
		author:   author(i.User, i.Member),
	}
	if c.channel == "" {
		c.channel = i.Message.ChannelID
	}
	if c.channel == "" || c.author.ID == "" {
		return click{}, false
	}
	return c, true
}

// onInteraction acknowledges a button click at once, on its own goroutine,
// then delivers it.
func (a *Adapter) onInteraction(i *discordgo.Interaction) {
	r := a.current()
	if r == nil {
		return
	}
	if s, ok := readSlash(i); ok {
		if !r.lanes.Do("interaction/"+i.ID, func() { a.deliverSlash(r, i, s) }) {
			a.log.Warn("discord: inbound backlog full; command dropped", "channel", s.channel)
		}
		return
	}
	if msg, texts, ok := readModal(i); ok {
		// A form's interactions keep their order: a pick, then Answer.
		if !r.lanes.Do("form/"+msg, func() { a.deliverModal(r, i, msg, texts) }) {
			a.log.Warn("discord: inbound backlog full; form answer dropped", "channel", i.ChannelID)
		}
		return
	}
	c, ok := readClick(i)
	if !ok {
		return
	}
	if strings.HasPrefix(c.customID, formPrefix) {
		if !r.lanes.Do("form/"+c.message, func() { a.deliverFormClick(r, i, c) }) {
			a.log.Warn("discord: inbound backlog full; form click dropped", "channel", c.channel)
		}
		return
	}
	if !r.lanes.Do("interaction/"+i.ID, func() { a.deliverClick(r, i, c) }) {
		a.log.Warn("discord: inbound backlog full; click dropped", "channel", c.channel)
	}
}

// deliverClick acknowledges the interaction (a deferred update: the prompt
// message is edited later) and hands the click to the Run's handler with a
// Reply that answers privately.
func (a *Adapter) deliverClick(r *running, i *discordgo.Interaction, c click) {
	ctx := r.ctx
	if ctx.Err() != nil {
		return // Run is ending
	}
	err := a.s.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseDeferredMessageUpdate,
	}, requestOptions(ctx)...)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		if restCode(err) == discordgo.ErrCodeInteractionHasAlreadyBeenAcknowledged {
			return // delivered before
		}
		a.log.Warn("discord: cannot acknowledge a click", "channel", c.channel, "err", err)
	}
	ref := channels.ThreadRef{Platform: Platform, Channel: c.channel, Thread: c.channel}
	if c.guild != "" {
		if p, err := a.place(ctx, c.channel); err == nil && p.thread() && p.parent != "" {
			ref.Channel = p.parent
		} else if err != nil && ctx.Err() == nil {
			a.log.Warn("discord: cannot look up a click's channel", "channel", c.channel, "err", err)
		}
	}
	r.h(ctx, channels.Inbound{
		Thread: ref,
		Author: c.author,
		ID:     channels.MessageID(i.ID),
		Space:  c.guild,
		Choice: &channels.ChoiceAnswer{
			Prompt:   channels.Handle{Thread: ref, ID: channels.MessageID(c.message)},
			OptionID: a.buttons.option(c.customID),
		},
		Reply: func(ctx context.Context, text string) error { return a.reply(ctx, i, text) },
	})
}

// reply answers the person who clicked with an ephemeral follow-up that
// only they see. It blocks on I/O.
func (a *Adapter) reply(ctx context.Context, i *discordgo.Interaction, text string) error {
	_, err := a.s.FollowupMessageCreate(i, true, &discordgo.WebhookParams{
		Content:         clip(text, maxMessageChars),
		Flags:           discordgo.MessageFlagsEphemeral,
		AllowedMentions: noMentions(),
	}, requestOptions(ctx)...)
	if err != nil {
		return apiError("reply", err)
	}
	return nil
}

// restCode returns the Discord error code of a REST error, or 0.
func restCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

// answer replies to message in, in its channel, without pinging anyone.
// It blocks on I/O.
func (a *Adapter) answer(ctx context.Context, in incoming, text string) error {
	_, err := a.s.ChannelMessageSendComplex(in.channel, &discordgo.MessageSend{
		Content: clip(text, maxMessageChars),
		Reference: &discordgo.MessageReference{
			MessageID: in.id, ChannelID: in.channel, GuildID: in.guild, FailIfNotExists: new(false),
		},
		AllowedMentions: noMentions(),
		Flags:           metaFlags,
	}, requestOptions(ctx)...)
	if err != nil {
		return apiError("reply", err)
	}
	return nil
}
