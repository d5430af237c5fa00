package slack

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/lanes"
)

// item is one acknowledged envelope, to be decoded and delivered.
type item struct {
	kind    string // the envelope type: "events_api", "interactive", …
	payload json.RawMessage
	retry   int // retry_attempt, for logs
}

// inbound is what one Run needs to deliver envelopes: its context, its
// handler and its lanes, one per thread.
type inbound struct {
	ctx context.Context
	// work outlives ctx by at most handOver: the envelopes acknowledged
	// before ctx ended are still decoded (their lookups run on it) and
	// handed to h, since Slack does not send an acknowledged one again.
	work  context.Context
	h     func(context.Context, channels.Inbound)
	lanes *lanes.Group
}

// handOver bounds the work of handing over, once Run's context ended, the
// envelopes acknowledged before.
const handOver = 10 * time.Second

// Sizes of the memories of the inbound path.
const (
	maxSeenEvents   = 4096  // event ids already handled (Slack's retries)
	maxSeenMessages = 4096  // channel/ts pairs already delivered (message + app_mention)
	maxSeenClicks   = 1024  // button clicks already delivered
	maxBoundThreads = 10000 // threads bound by a mention
	maxUnknown      = 4096  // threads Options.KnownThread did not know
	maxPlaced       = 20000 // messages whose thread is remembered, for reactions
)

// state is what the inbound path remembers: what it delivered, and which
// threads are bound.
type state struct {
	mu       sync.Mutex // guards the fields below
	events   *lru[struct{}]
	messages *lru[struct{}]
	clicks   *lru[struct{}]
	bound    *lru[struct{}]
	unknown  *lru[struct{}]
	threads  *lru[string] // channel/ts of a message → its thread, for reactions
}

func newState() *state {
	return &state{
		events:   newLRU[struct{}](maxSeenEvents),
		messages: newLRU[struct{}](maxSeenMessages),
		clicks:   newLRU[struct{}](maxSeenClicks),
		bound:    newLRU[struct{}](maxBoundThreads),
		unknown:  newLRU[struct{}](maxUnknown),
		threads:  newLRU[string](maxPlaced),
	}
}

// first records key in set and reports whether it was new.
func (s *state) first(set *lru[struct{}], key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return set.add(key, struct{}{})
}

// bind marks the thread as bound.
func (s *state) bind(channel, thread string) {
	key := channel + "/" + thread
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bound.put(key, struct{}{})
	s.unknown.remove(key)
}

// isBound reports whether the thread is bound (known) and whether it is
// known not to be (known false, bound false: ask Options.KnownThread).
func (s *state) isBound(channel, thread string) (bound, known bool) {
	key := channel + "/" + thread
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bound.get(key); ok {
		return true, true
	}
	_, no := s.unknown.get(key)
	return false, no
}

// place remembers that message channel/ts is in thread.
func (s *state) place(channel, ts, thread string) {
	if ts == "" || thread == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.threads.put(channel+"/"+ts, thread)
}

// threadOf returns the thread of message channel/ts, if remembered.
func (s *state) threadOf(channel, ts string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threads.get(channel + "/" + ts)
}

// markUnknown remembers that Options.KnownThread did not know the thread.
func (s *state) markUnknown(channel, thread string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unknown.put(channel+"/"+thread, struct{}{})
}

// queue decodes an acknowledged envelope and queues its delivery on the
// lane of its thread: the thread's later envelopes wait for it (a
// mention binds its thread before the thread's next message is looked
// at), other threads do not. A mention at the top and its reply share
// the lane of the thread it starts; an edit or a deletion goes on the
// lane of the thread of the message it is about (laneThread), so that a
// root's deletion waits behind the thread's earlier events. It never blocks; what a lane runs
// after Run's context ended is still handed to h (with that context),
// within handOver.
func (a *Adapter) queue(in *inbound, it item) {
	var (
		key     string
		deliver func() []channels.Inbound
	)
	switch it.kind {
	case socketmode.RequestTypeEventsAPI:
		cb, err := decodeEvent(it.payload)
		if err != nil {
			a.log.Debug("slack: event ignored", "err", err)
			return
		}
		key = string(cb.Event.Channel) + "/" + laneThread(cb.Event)
		if th, ok := a.seen.threadOf(string(cb.Event.Channel), string(cb.Event.Item.TS)); ok && cb.Event.Item.TS != "" {
			key = string(cb.Event.Channel) + "/" + th // a reaction: the lane of its message's thread
		}
		deliver = func() []channels.Inbound {
			if m, ok := a.fromEvent(in.work, cb, it.retry); ok {
				return []channels.Inbound{m}
			}
			return nil
		}
	case socketmode.RequestTypeInteractive:
		if v, err := decodeView(it.payload); err == nil {
			of, ok := a.form(v.Channel, v.MessageTS)
			if !ok {
				a.log.Info("slack: an answer to a form no longer open", "channel", v.Channel, "form", v.MessageTS)
				return
			}
			key = of.h.Thread.Channel + "/" + of.h.Thread.Thread
			deliver = func() []channels.Inbound {
				if m, ok := a.fromView(in.work, v); ok {
					return []channels.Inbound{m}
				}
				return nil
			}
			break
		}
		clicks, err := decodeClicks(it.payload)
		if err != nil {
			a.log.Debug("slack: interaction ignored", "err", err)
			return
		}
		// The clicks of one payload are on one message.
		key = clicks[0].Channel + "/" + firstNonEmpty(clicks[0].ThreadTS, clicks[0].MessageTS)
		deliver = func() []channels.Inbound {
			var out []channels.Inbound
			for _, c := range clicks {
				if m, ok := a.fromClick(in.work, c); ok {
					out = append(out, m)
				}
			}
			return out
		}
	case socketmode.RequestTypeSlashCommands:
		sc, err := decodeSlash(it.payload)
		if err != nil {
			a.log.Debug("slack: slash command ignored", "err", err)
			return
		}
		// The thread does not exist yet: the person's slash commands in
		// one channel keep their order.
		key = sc.Channel + "/slash/" + sc.UserID
		deliver = func() []channels.Inbound {
			if m, ok := a.fromSlash(in.work, sc); ok {
				return []channels.Inbound{m}
			}
			return nil
		}
	default:
		return
	}
	ok := in.lanes.Do(key, func() {
		if in.work.Err() != nil {
			return // handOver passed
		}
		for _, m := range deliver() {
			in.h(in.ctx, m)
		}
	})
	if !ok && in.ctx.Err() == nil {
		a.log.Error("slack: inbound backlog of a thread full; envelope dropped", "kind", it.kind, "lane", key)
	}
}

// laneThread returns the ts of the thread ev is about, the key of its
// lane: its thread_ts; for an edit or a deletion (message_changed,
// message_deleted), whose own ts is the event's, that of the message it
// changed or deleted (the nested message's thread, the deleted message's
// thread, or the message itself: a deleted root without replies); a
// message's own ts when it starts a thread.
func laneThread(ev event) string {
	switch {
	case ev.ThreadTS != "":
		return string(ev.ThreadTS)
	case ev.Message != nil && ev.Message.TS != "":
		return firstNonEmpty(string(ev.Message.ThreadTS), string(ev.Message.TS))
	case ev.PreviousMessage != nil && ev.PreviousMessage.ThreadTS != "":
		return string(ev.PreviousMessage.ThreadTS)
	}
	return firstNonEmpty(string(ev.DeletedTS), string(ev.TS))
}

// deliverable lists the message subtypes that are something a person (or
// another bot) wrote; edits, deletions, joins and the like are not.
var deliverable = map[string]bool{"": true, "thread_broadcast": true, "file_share": true, "bot_message": true, "me_message": true}

// fromEvent decides whether an event is delivered and builds its Inbound:
//   - a redelivered event (same event id) is dropped;
//   - the app's own messages, and the echoes of their edits and
//     deletions, are dropped;
//   - app_mention binds its thread (thread_ts, or the message's ts when it
//     starts a thread) and is delivered;
//   - a message in a direct message is delivered (and binds its thread);
//   - a message in a channel is delivered when it is in a bound thread;
//   - a message delivered once (the message event of a mention, or the
//     mention of a message already delivered) is not delivered again.
func (a *Adapter) fromEvent(ctx context.Context, cb eventCallback, retry int) (channels.Inbound, bool) {
	me, _ := a.capabilities()
	ev := cb.Event
	if cb.EventID != "" && !a.seen.first(a.seen.events, string(cb.EventID)) {
		a.log.Debug("slack: redelivered event skipped", "event", cb.EventID, "retry", retry)
		return channels.Inbound{}, false
	}
	if ev.Type == "agent_session_stopped" {
		return a.stopped(ctx, ev, firstNonEmpty(string(cb.TeamID), me.TeamID))
	}
	if ev.Type == "reaction_added" || ev.Type == "reaction_removed" {
		return a.fromReaction(ctx, ev, string(cb.EventID), firstNonEmpty(string(cb.TeamID), me.TeamID), me)
	}
	if in, ok := a.fromGone(ctx, ev, firstNonEmpty(string(cb.TeamID), me.TeamID)); ok {
		return in, true
	}
	channel := string(ev.Channel)
	thread := firstNonEmpty(string(ev.ThreadTS), string(ev.TS))
	if isOwn(ev, me) || ev.TS == "" {
		if ev.Type == "message" && ev.Subtype == "" && ev.TS != "" {
			a.seen.place(channel, string(ev.TS), thread) // the app's own post
		}
		return channels.Inbound{}, false
	}
	ref := channels.ThreadRef{Platform: Platform, Channel: channel, Thread: thread}
	switch ev.Type {
	case "app_mention":
		a.seen.bind(channel, thread)
	case "message":
		switch {
		case !deliverable[string(ev.Subtype)]:
			return channels.Inbound{}, false
		case ev.ChannelType == "im":
			a.seen.bind(channel, thread)
		case ev.ThreadTS == "":
			// A top-level message in a channel: only a mention (its own
			// app_mention event) starts a thread.
			return channels.Inbound{}, false
		case !a.isBound(ctx, ref):
			return channels.Inbound{}, false
		}
	default:
		return channels.Inbound{}, false
	}
	if !a.seen.first(a.seen.messages, channel+"/"+string(ev.TS)) {
		a.log.Debug("slack: message already delivered", "thread", ref, "ts", ev.TS, "event", ev.Type)
		return channels.Inbound{}, false
	}
	a.seen.place(channel, string(ev.TS), thread)
	m := a.message(ctx, ref, ev, firstNonEmpty(string(cb.TeamID), me.TeamID), me)
	m.Event = string(cb.EventID)
	return m, true
}

// stopped builds the Inbound of a click on Slack's Stop button of an
// agent session (agent_session_stopped): a stop of the thread's running
// turn by the person who clicked, in a thread the app is in. The streams
// Slack stopped with it are known closed, so their messages continue
// with chat.update.
func (a *Adapter) stopped(ctx context.Context, ev event, team string) (channels.Inbound, bool) {
	channel, thread := string(ev.Channel), string(ev.ThreadTS)
	for _, ts := range ev.StreamingMessageTS {
		a.mu.Lock()
		s := a.streams[channel+"/"+string(ts)]
		a.mu.Unlock()
		if s != nil {
			a.closeStream(s)
		}
	}
	if channel == "" || thread == "" || ev.User == "" {
		return channels.Inbound{}, false
	}
	ref := channels.ThreadRef{Platform: Platform, Channel: channel, Thread: thread}
	if !a.isBound(ctx, ref) {
		return channels.Inbound{}, false
	}
	return channels.Inbound{Thread: ref, Author: a.author(ctx, ev), Stop: true, Space: team}, true
}

// message builds the Inbound of a person's message ev in thread ref of
// workspace team.
func (a *Adapter) message(ctx context.Context, ref channels.ThreadRef, ev event, team string, me Capabilities) channels.Inbound {
	author := a.author(ctx, ev)
	files, fetch := a.files(ev.Files)
	in := channels.Inbound{
		Thread: ref,
		Author: author,
		Text:   inboundText(string(ev.Text), me.BotUserID),
		Files:  files,
		Fetch:  fetch,
		ID:     channels.MessageID(ev.TS),
		Space:  team,
		Time:   tsTime(string(ev.TS)),
	}
	in.Command = a.command(string(ev.Text), in.Text, me.BotUserID)
	if !author.Bot {
		a.noteRecipient(ref, author.ID, team)
		in.Reply = a.ephemeral(ref.Channel, ref.Thread, author.ID)
	}
	return in
}

// tsTime is the time of a Slack message timestamp ("1700000000.000100":
// Unix seconds, a dot, microseconds), zero when ts is not one.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s <= 0 || len(frac) > 9 {
		return time.Time{}
	}
	ns := int64(0)
	if frac != "" {
		f, err := strconv.ParseUint(frac, 10, 32)
		if err != nil {
			return time.Time{}
		}
		ns = int64(f)
		for range 9 - len(frac) {
			ns *= 10
		}
	}
	return time.Unix(s, ns).UTC()
}

// command returns the gateway command in a message whose Slack text is
// raw and whose plain text (the leading mention removed) is text, nil
// when it gives none. A command is "/name" (from a client that lets it
// through), the command prefix and a name ("!model x"), or a name right
// after a mention of the app ("@bot model x"; a command without an
// argument only when nothing follows it); other text, and names the
// gateway does not know, are prompts.
func (a *Adapter) command(raw, text, botUserID string) *channels.Command {
	if c := channels.ParseCommand(text); c != nil {
		return c
	}
	if rest, ok := strings.CutPrefix(text, a.o.CommandPrefix); ok && rest != "" && !unicode.IsSpace(rune(rest[0])) {
		return channels.ParseCommand("/" + rest)
	}
	if text != "" && hasLeadingMention(raw, botUserID) {
		// After a mention people also write prompts: "@bot stop the
		// server" asks the agent to do something. A command that takes
		// no argument is one only when nothing follows its name.
		c := channels.ParseCommand("/" + text)
		if c != nil && c.Args != "" && !takesArg(c.Name) {
			return nil
		}
		return c
	}
	return nil
}

// takesArg reports whether the gateway command name takes an argument.
func takesArg(name string) bool {
	for _, c := range channels.Commands() {
		if c.Name == name {
			return c.Arg != nil
		}
	}
	return false
}

// hasLeadingMention reports whether the Slack text raw starts with a
// mention of the user botUserID.
func hasLeadingMention(raw, botUserID string) bool {
	if botUserID == "" {
		return false
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(raw), "<@"+botUserID)
	return ok && rest != "" && (rest[0] == '>' || rest[0] == '|')
}

// fromSlash answers the app's slash command sc, acknowledged already:
// its text is posted as the first message of a new thread in the channel
// (naming the person), the thread is bound, and the text arrives as a
// prompt in it. Without text, or when the post fails, the person is
// told privately and nothing is delivered; someone Options.Admit refuses
// is told privately by it, and nothing is posted.
func (a *Adapter) fromSlash(ctx context.Context, sc slash) (channels.Inbound, bool) {
	me, _ := a.capabilities()
	tell := a.ephemeral(sc.Channel, "", sc.UserID)
	text := strings.TrimSpace(unescape(sc.Text))
	if text == "" {
		if err := tell(ctx, "Write what the agent should do after "+firstNonEmpty(sc.Command, "the command")+", for example `"+firstNonEmpty(sc.Command, "/agent")+" fix the failing test`."); err != nil {
			a.log.Warn("slack: cannot answer an empty slash command", "err", err)
		}
		return channels.Inbound{}, false
	}
	team := firstNonEmpty(sc.Team, me.TeamID)
	author := channels.Author{ID: sc.UserID, Name: a.users.name(ctx, sc.UserID, sc.UserName), Roles: a.users.roles(ctx, sc.UserID)}
	if a.o.Admit != nil && !a.o.Admit(ctx, channels.Inbound{
		Thread: channels.ThreadRef{Platform: Platform, Channel: sc.Channel, Thread: sc.Channel},
		Author: author,
		Text:   text,
		Space:  team,
		Reply:  tell,
	}) {
		return channels.Inbound{}, false // someone without access posts nothing
	}
	ts, err := a.postFirst(ctx, sc.Channel, "<@"+sc.UserID+">: "+Mrkdwn(text))
	if err != nil {
		a.log.Warn("slack: cannot start a thread for a slash command", "channel", sc.Channel, "err", err)
		if err := tell(ctx, "I cannot post in this channel; invite the app first (`/invite @app`)."); err != nil {
			a.log.Debug("slack: cannot answer a slash command", "err", err)
		}
		return channels.Inbound{}, false
	}
	a.seen.bind(sc.Channel, ts)
	a.seen.first(a.seen.messages, sc.Channel+"/"+ts)
	a.seen.place(sc.Channel, ts, ts)
	ref := channels.ThreadRef{Platform: Platform, Channel: sc.Channel, Thread: ts}
	a.noteRecipient(ref, sc.UserID, team)
	return channels.Inbound{
		Thread: ref,
		Author: author,
		Text:   text,
		ID:     channels.MessageID(ts),
		Space:  team,
		Reply:  a.ephemeral(sc.Channel, ts, sc.UserID),
	}, true
}

// postFirst posts text at the top of channel, waiting out the channel's
// pacing, and returns the message's ts.
func (a *Adapter) postFirst(ctx context.Context, channel, text string) (string, error) {
	for {
		err := a.pace(channel, "", time.Now())
		rl, ok := errors.AsType[*channels.RateLimitError](err)
		if !ok {
			break
		}
		t := time.NewTimer(rl.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
	_, ts, err := a.api.PostMessageContext(ctx, channel, slack.MsgOptionText(text, false))
	if err != nil {
		return "", a.apiErr("chat.postMessage", err)
	}
	return ts, nil
}

// isBound reports whether ref is bound, asking Options.KnownThread about
// threads the adapter has not seen bound.
func (a *Adapter) isBound(ctx context.Context, ref channels.ThreadRef) bool {
	bound, known := a.seen.isBound(ref.Channel, ref.Thread)
	if known || a.o.KnownThread == nil {
		return bound
	}
	if a.o.KnownThread(ctx, ref) {
		a.seen.bind(ref.Channel, ref.Thread)
		return true
	}
	if !a.o.RecheckUnknown {
		a.seen.markUnknown(ref.Channel, ref.Thread)
	}
	return false
}

// isOwn reports whether ev is one of the app's own messages, or the echo
// of an edit or deletion of one (where the app's ids are only in the
// nested message).
func isOwn(ev event, me Capabilities) bool {
	own := func(user, bot str) bool {
		return (me.BotID != "" && string(bot) == me.BotID) || (me.BotUserID != "" && string(user) == me.BotUserID)
	}
	switch {
	case own(ev.User, ev.BotID):
		return true
	case ev.Message != nil && own(ev.Message.User, ev.Message.BotID):
		return true
	case ev.PreviousMessage != nil && own(ev.PreviousMessage.User, ev.PreviousMessage.BotID):
		return true
	}
	return false
}

// author returns who wrote ev. Other bots are marked Bot.
func (a *Adapter) author(ctx context.Context, ev event) channels.Author {
	if ev.BotID != "" || ev.Subtype == "bot_message" {
		id := firstNonEmpty(string(ev.User), string(ev.BotID))
		return channels.Author{ID: id, Name: firstNonEmpty(ev.BotProfile.best(), string(ev.Username), id), Bot: true}
	}
	id := string(ev.User)
	return channels.Author{ID: id, Name: a.users.name(ctx, id, ev.UserProfile.best()), Roles: a.users.roles(ctx, id)}
}

// fromClick builds the Inbound of a button click. A click delivered once
// (an envelope redelivered) is not delivered again.
func (a *Adapter) fromClick(ctx context.Context, c click) (channels.Inbound, bool) {
	key := strings.Join([]string{c.Channel, c.MessageTS, c.UserID, c.ActionTS, c.OptionID}, "/")
	if !a.seen.first(a.seen.clicks, key) {
		a.log.Debug("slack: click already delivered", "message", c.MessageTS, "user", c.UserID)
		return channels.Inbound{}, false
	}
	me, _ := a.capabilities()
	ref := channels.ThreadRef{Platform: Platform, Channel: c.Channel, Thread: firstNonEmpty(c.ThreadTS, c.MessageTS)}
	in := channels.Inbound{
		Thread: ref,
		Author: channels.Author{ID: c.UserID, Name: a.users.name(ctx, c.UserID, c.UserName), Roles: a.users.roles(ctx, c.UserID)},
		ID:     channels.MessageID(firstNonEmpty(c.ActionTS, c.MessageTS)),
		Choice: &channels.ChoiceAnswer{Prompt: channels.Handle{Thread: ref, ID: channels.MessageID(c.MessageTS)}, OptionID: c.OptionID},
		Space:  firstNonEmpty(c.Team, me.TeamID),
		Reply:  a.ephemeral(c.Channel, ref.Thread, c.UserID),
	}
	if m, deliver, isForm := a.formClick(ctx, c, in); isForm {
		return m, deliver
	}
	return in, true
}

// inboundText turns the text of a Slack message into what the person
// wrote: the leading mention of the app (and a ":" or "," after it) is
// removed; links become their URL (or "label (URL)"), references to
// channels, user groups and @here become readable; mentions of other users
// stay as Slack writes them ("<@U123>"); &lt; &gt; &amp; are decoded.
func inboundText(s, botUserID string) string {
	s = strings.TrimSpace(s)
	if botUserID != "" && strings.HasPrefix(s, "<@"+botUserID) {
		rest := s[len("<@"+botUserID):]
		if end := strings.IndexByte(rest, '>'); end >= 0 && (end == 0 || rest[0] == '|') {
			s = strings.TrimSpace(rest[end+1:])
			s = strings.TrimSpace(strings.TrimLeft(s, ":,"))
		}
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		b.WriteString(plainRef(s[i+1 : i+j]))
		s = s[i+j+1:]
	}
	return unescape(b.String())
}

// plainRef returns the readable form of the inside of a Slack <…> token.
func plainRef(ref string) string {
	target, label, hasLabel := strings.Cut(ref, "|")
	switch {
	case strings.HasPrefix(target, "@"):
		if hasLabel && label != "" {
			return "@" + strings.TrimPrefix(label, "@")
		}
		return "<" + ref + ">"
	case strings.HasPrefix(target, "#"):
		if hasLabel && label != "" {
			return "#" + label
		}
		return "<" + ref + ">"
	case strings.HasPrefix(target, "!"):
		if hasLabel && label != "" {
			return label
		}
		switch target {
		case "!here", "!channel", "!everyone":
			return "@" + target[1:]
		}
		return "<" + ref + ">"
	}
	if !hasLabel || label == "" || label == target {
		return target
	}
	if _, rest, ok := strings.Cut(target, ":"); ok && strings.TrimPrefix(rest, "//") == label {
		return target
	}
	return label + " (" + target + ")"
}

// unescape decodes the three entities Slack escapes in message text.
func unescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}
