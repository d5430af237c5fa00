package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/acpgw/gateway/channels"
)

// statusText is the thread status line while a turn runs.
const statusText = "is working…"

// Block Kit limits.
const (
	maxSectionChars = 3000 // text of a section block
	maxButtonLabel  = 75   // plain_text of a button
	maxActionID     = 255
	maxValue        = 2000
	maxButtonsBlock = 25 // elements of an actions block
	// maxButtons is the most options a prompt shows as buttons; more
	// are a select menu.
	maxButtons       = 5
	maxSelectOptions = 100 // options of a static_select
	maxOptionText    = 75  // plain_text of a select's option
	maxOptionValue   = 150 // value of a select's option
)

// metaEvent is the event_type of the message metadata on every message the
// app posts that is not the agent's text (tool and status lines, notices,
// plans, thoughts, prompts, forms), its event_payload saying the kind:
// the mark by which History tells such a message from the agent's text
// (channels.Inbound.Meta). Metadata is read back only with
// include_all_metadata.
const metaEvent = "acpgw_post"

// metaOption returns the metadata option of a message of kind k, or nil
// for the agent's text.
func metaOption(k channels.Kind) slack.MsgOption {
	if k == channels.KindText {
		return nil
	}
	return slack.MsgOptionMetadata(slack.SlackMetadata{EventType: metaEvent, EventPayload: map[string]any{"kind": string(k)}})
}

// goneErrors are the chat.update errors that mean the message cannot be
// edited any more.
var goneErrors = []string{"message_not_found", "cant_update_message", "edit_window_closed"}

// Post sends m as a new message in the thread t (as a reply to t.Thread;
// at the top of t.Channel when t.Thread is empty), with its markdown
// converted to mrkdwn. Links in messages other than plain text are not
// unfurled, and those messages carry the metadata metaEvent. It blocks on I/O and returns a *channels.RateLimitError when
// Slack answers 429 (nothing was posted then).
func (a *Adapter) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	if a.native(t) {
		before := a.openStream(t)
		if h, ok, err := a.streamPost(ctx, t, m); ok {
			if err == nil && a.openStream(t) != before {
				a.restoreStatus(ctx, t) // a new message; a chunk appended to the open one is not
			}
			if err == nil {
				a.seen.place(t.Channel, string(h.ID), t.Thread)
			}
			return h, err
		}
	}
	if err := a.pace(t.Channel, t.Thread, time.Now()); err != nil {
		return channels.Handle{}, err
	}
	opts := []slack.MsgOption{slack.MsgOptionText(Mrkdwn(channels.TrimLead(m.Text)), false)}
	if t.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(t.Thread))
	}
	if m.Kind != channels.KindText {
		opts = append(opts, slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl(), metaOption(m.Kind))
	}
	_, ts, err := a.api.PostMessageContext(ctx, t.Channel, opts...)
	if err != nil {
		return channels.Handle{}, a.apiErr("chat.postMessage", err)
	}
	a.restoreStatus(ctx, t)
	a.seen.place(t.Channel, ts, t.Thread)
	return channels.Handle{Thread: t, ID: channels.MessageID(ts)}, nil
}

// Edit replaces the text of message h with m (chat.update) and removes
// its blocks, so an edited prompt loses its buttons. It blocks on I/O. It
// returns a *channels.RateLimitError when Slack answers 429, and an error
// wrapping channels.ErrMessageGone when the message was deleted or can no
// longer be edited (message_not_found, cant_update_message,
// edit_window_closed).
func (a *Adapter) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	if ok, err := a.streamEdit(ctx, h, m); ok {
		return err
	}
	opts := []slack.MsgOption{
		slack.MsgOptionText(Mrkdwn(channels.TrimLead(m.Text)), false),
		slack.MsgOptionBlocks(), // sends blocks=[]: the buttons go
	}
	if m.Kind != channels.KindText {
		opts = append(opts, metaOption(m.Kind)) // kept, whatever Slack does with metadata an update does not name
	}
	if err := a.admit("chat.update", h.Thread); err != nil {
		return err
	}
	_, _, _, err := a.api.UpdateMessageContext(ctx, h.Thread.Channel, string(h.ID), opts...)
	if err == nil || errors.Is(a.apiErr("", err), channels.ErrMessageGone) {
		a.formFolded(h)
		a.promptAnswered(ctx, h) // a prompt edited is answered
	}
	return a.apiErr("chat.update", err)
}

// Prompt posts c in the thread t as Block Kit: section blocks with the
// text and an actions block with one button per option (action_id and
// value are the option id; style primary or danger), or, for more than
// five options, a select menu (static_select) of them. Clicks come back
// through Run's handler as Inbound.Choice. It blocks on I/O and returns a
// *channels.RateLimitError when Slack answers 429.
func (a *Adapter) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	if err := a.pace(t.Channel, t.Thread, time.Now()); err != nil {
		return channels.Handle{}, err
	}
	text := Mrkdwn(c.Text)
	h, err := a.postBlocks(ctx, t, text, promptBlocks(text, c.Options), channels.KindPermission)
	if err != nil {
		return channels.Handle{}, err
	}
	a.promptOpened(ctx, h)
	return h, nil
}

// postBlocks posts blocks as a message of kind k in the thread t, with
// fallback as the notification's text and no link unfurled, once t's open
// stream is stopped (it would stay above the message otherwise). It
// blocks on I/O and returns a *channels.RateLimitError when Slack answers
// 429.
func (a *Adapter) postBlocks(ctx context.Context, t channels.ThreadRef, fallback string, blocks []slack.Block, k channels.Kind) (channels.Handle, error) {
	opts := []slack.MsgOption{
		slack.MsgOptionText(fallback, false),
		slack.MsgOptionBlocks(blocks...),
		slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl(),
		metaOption(k),
	}
	if t.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(t.Thread))
	}
	a.stopOpen(ctx, t)
	_, ts, err := a.api.PostMessageContext(ctx, t.Channel, opts...)
	if err != nil {
		return channels.Handle{}, a.apiErr("chat.postMessage", err)
	}
	a.seen.place(t.Channel, ts, t.Thread)
	return channels.Handle{Thread: t, ID: channels.MessageID(ts)}, nil
}

// promptBlocks returns the blocks of a prompt: its mrkdwn text in section
// blocks of at most 3,000 characters, then the buttons, 25 per actions
// block.
func promptBlocks(text string, options []channels.Option) []slack.Block {
	var blocks []slack.Block
	for _, chunk := range chunks(text, maxSectionChars) {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, chunk, false, false), nil, nil))
	}
	if len(options) > maxButtons {
		return append(blocks, selectBlocks(options)...)
	}
	var buttons []slack.BlockElement
	flush := func() {
		if len(buttons) > 0 {
			blocks = append(blocks, slack.NewActionBlock("choice-"+strconv.Itoa(len(blocks)), buttons...))
			buttons = nil
		}
	}
	for i, o := range options {
		actionID := o.ID
		if len(actionID) > maxActionID || actionID == "" {
			actionID = "option-" + strconv.Itoa(i)
		}
		label := truncate(firstNonEmpty(o.Label, o.ID), maxButtonLabel)
		b := slack.NewButtonBlockElement(actionID, truncate(o.ID, maxValue), slack.NewTextBlockObject(slack.PlainTextType, label, true, false))
		switch o.Style {
		case "primary":
			b.WithStyle(slack.StylePrimary)
		case "danger":
			b.WithStyle(slack.StyleDanger)
		}
		buttons = append(buttons, b)
		if len(buttons) == maxButtonsBlock {
			flush()
		}
	}
	flush()
	return blocks
}

// selectBlocks returns an actions block with static_select menus of the
// options, 100 per menu (a menu's limit). Picking one arrives as a
// block_actions payload whose selected_option's value is the option id.
func selectBlocks(options []channels.Option) []slack.Block {
	var menus []slack.BlockElement
	for start := 0; start < len(options) && len(menus) < maxButtonsBlock; start += maxSelectOptions {
		part := options[start:min(start+maxSelectOptions, len(options))]
		opts := make([]*slack.OptionBlockObject, len(part))
		for i, o := range part {
			label := truncate(firstNonEmpty(o.Label, o.ID), maxOptionText)
			opts[i] = slack.NewOptionBlockObject(truncate(o.ID, maxOptionValue), slack.NewTextBlockObject(slack.PlainTextType, label, true, false), nil)
		}
		placeholder := "Choose…"
		if len(options) > maxSelectOptions {
			placeholder = fmt.Sprintf("Choose (%d–%d)…", start+1, start+len(part))
		}
		menus = append(menus, slack.NewOptionsSelectBlockElement(slack.OptTypeStatic,
			slack.NewTextBlockObject(slack.PlainTextType, placeholder, true, false), "choice-select-"+strconv.Itoa(len(menus)), opts...))
	}
	return []slack.Block{slack.NewActionBlock("choice-select", menus...)}
}

// chunks cuts s into pieces of at most n code points, preferring line
// breaks. It returns one empty piece for an empty s.
func chunks(s string, n int) []string {
	var out []string
	for {
		cut, count := len(s), 0
		for i := range s {
			if count == n {
				cut = i
				break
			}
			count++
		}
		if cut == len(s) {
			return append(out, s)
		}
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl > cut/2 {
			cut = nl + 1
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
}

// truncate cuts s to at most n code points, ending with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// ephemeral returns an Inbound.Reply that answers user privately in the
// thread (chat.postEphemeral).
func (a *Adapter) ephemeral(channel, thread, user string) func(context.Context, string) error {
	return func(ctx context.Context, text string) error {
		opts := []slack.MsgOption{slack.MsgOptionText(Mrkdwn(text), false)}
		if thread != "" {
			opts = append(opts, slack.MsgOptionTS(thread))
		}
		if _, err := a.limits.take("chat.postEphemeral", "", time.Now()); err != nil {
			return err
		}
		_, err := a.api.PostEphemeralContext(ctx, channel, user, opts...)
		return a.apiErr("chat.postEphemeral", err)
	}
}

// setStatus turns the thread's status line on or off. On, it says
// "is waiting for your approval" while a prompt of the adapter is open in
// the thread, else "is working…" with rotating loading messages. Only
// real threads get a line; after Slack refused the method for good
// (missing_scope, unknown_method, …) it makes no call.
func (a *Adapter) setStatus(ctx context.Context, t channels.ThreadRef, on bool) error {
	key := t.Channel + "/" + t.Thread
	if t.Thread == "" {
		return nil
	}
	a.mu.Lock()
	off := a.noStatus
	waiting := a.prompts[key] > 0
	a.mu.Unlock()
	if off {
		return nil
	}
	p := slack.AssistantThreadsSetStatusParameters{ChannelID: t.Channel, ThreadTS: t.Thread}
	switch {
	case on && waiting:
		p.Status = waitingText
	case on:
		p.Status, p.LoadingMessages = statusText, loadingMessages
	default:
		// Forget the line first: even if clearing fails, later posts must
		// not set it again (and Slack clears it at the next post).
		a.mu.Lock()
		delete(a.status, key)
		a.mu.Unlock()
	}
	if err := a.admit("assistant.threads.setStatus", t); err != nil {
		return err
	}
	if err := a.api.SetAssistantThreadsStatusContext(ctx, p); err != nil {
		if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok && slices.Contains(noStatusErrors, se.Err) {
			a.mu.Lock()
			a.noStatus = true
			clear(a.status)
			a.mu.Unlock()
			a.log.Warn("slack: Slack refused the thread status line; there is none from now on", "err", se.Err)
		}
		return a.apiErr("assistant.threads.setStatus", err)
	}
	if on {
		a.mu.Lock()
		a.status[key] = time.Now()
		a.pruneStatusLocked()
		a.mu.Unlock()
	}
	return nil
}

// waitingText is the status line while a prompt waits for an answer.
const waitingText = "is waiting for your approval"

// loadingMessages rotate in the status line while a turn runs.
var loadingMessages = []string{"Thinking…", "Reading the code…", "Running tools…", "Still on it…"}

// noStatusErrors are the assistant.threads.setStatus errors that mean the
// app cannot set status lines at all.
var noStatusErrors = []string{"missing_scope", "unknown_method", "not_allowed_token_type", "method_deprecated", "access_denied", "no_permission"}

// promptOpened and promptAnswered count the prompts open in a thread,
// for the status line; the line changes at once where it is on.
func (a *Adapter) promptOpened(ctx context.Context, h channels.Handle) {
	a.mu.Lock()
	if a.prompts == nil {
		a.prompts = map[string]int{}
		a.promptMsgs = map[string]string{}
	}
	if len(a.promptMsgs) > 10000 {
		clear(a.promptMsgs) // bounded; at worst a line says waiting until the turn ends
		clear(a.prompts)
	}
	k := h.Thread.Channel + "/" + h.Thread.Thread
	a.prompts[k]++
	a.promptMsgs[h.Thread.Channel+"/"+string(h.ID)] = k
	a.mu.Unlock()
	a.restoreStatus(ctx, h.Thread)
}

func (a *Adapter) promptAnswered(ctx context.Context, h channels.Handle) {
	a.mu.Lock()
	k, ok := a.promptMsgs[h.Thread.Channel+"/"+string(h.ID)]
	if ok {
		delete(a.promptMsgs, h.Thread.Channel+"/"+string(h.ID))
		if a.prompts[k]--; a.prompts[k] <= 0 {
			delete(a.prompts, k)
		}
	}
	a.mu.Unlock()
	if ok {
		a.restoreStatus(ctx, h.Thread)
	}
}

// SetTitle names the agent session of thread t (agents.sessions.rename),
// where Slack keeps one: the thread's title in Slack's agent views. It
// blocks on I/O.
func (a *Adapter) SetTitle(ctx context.Context, t channels.ThreadRef, title string) error {
	if t.Thread == "" || strings.TrimSpace(title) == "" {
		return nil
	}
	_, err := a.api.RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{
		Title: truncate(title, maxTitle), ChannelID: t.Channel, ThreadTS: t.Thread,
	})
	return a.apiErr("agents.sessions.rename", err)
}

// maxTitle bounds a session title.
const maxTitle = 100

// pruneStatusLocked forgets status lines Slack has cleared by itself (two
// minutes after they were set), once many threads have one.
func (a *Adapter) pruneStatusLocked() {
	if len(a.status) < 256 {
		return
	}
	for k, at := range a.status {
		if time.Since(at) > 2*time.Minute {
			delete(a.status, k)
		}
	}
}

// restoreStatus sets the status line of t again after a post, since Slack
// clears it when the app replies. It does nothing when the line is off.
// Errors are logged: the post itself succeeded.
func (a *Adapter) restoreStatus(ctx context.Context, t channels.ThreadRef) {
	a.mu.Lock()
	_, on := a.status[t.Channel+"/"+t.Thread]
	a.mu.Unlock()
	if !on {
		return
	}
	if err := a.setStatus(ctx, t, true); err != nil {
		a.log.Debug("slack: cannot restore the status line after a post", "thread", t, "err", err)
	}
}

// apiErr converts a slack-go error of method: HTTP 429 (with or without
// Retry-After, or a "ratelimited" answer) becomes *channels.RateLimitError,
// the errors of a message that cannot be edited wrap
// channels.ErrMessageGone, anything else is wrapped with the method's
// name. It returns nil for nil.
func (a *Adapter) apiErr(method string, err error) error {
	if err == nil {
		return nil
	}
	if rl, ok := errors.AsType[*slack.RateLimitedError](err); ok {
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = defaultRetryAfter
		}
		return a.limited(method, wait)
	}
	if sc, ok := errors.AsType[slack.StatusCodeError](err); ok && sc.Code == http.StatusTooManyRequests {
		return a.limited(method, defaultRetryAfter)
	}
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		switch {
		case se.Err == "ratelimited":
			return a.limited(method, defaultRetryAfter)
		case slices.Contains(goneErrors, se.Err):
			return fmt.Errorf("slack: %s: %s: %w", method, se.Err, channels.ErrMessageGone)
		case !slices.Contains(unavailableErrors, se.Err):
			// Slack answered and refused: channel_not_found,
			// not_in_channel, msg_too_long, invalid_auth, …
			return channels.Permanent(fmt.Errorf("slack: %s: %w", method, err))
		}
	}
	if sc, ok := errors.AsType[slack.StatusCodeError](err); ok && sc.Code >= 400 && sc.Code < 500 && sc.Code != http.StatusRequestTimeout {
		return channels.Permanent(fmt.Errorf("slack: %s: %w", method, err))
	}
	return fmt.Errorf("slack: %s: %w", method, err)
}

// admit reserves a call of method for thread t (limits.take), or
// returns a *channels.RateLimitError saying when its turn is.
func (a *Adapter) admit(method string, t channels.ThreadRef) error {
	_, err := a.limits.take(method, t.Channel+"/"+t.Thread, time.Now())
	return err
}

// limited is the error of Slack's 429 to a call of method, asking to wait
// wait: the method's tier learns it (limits.learn).
func (a *Adapter) limited(method string, wait time.Duration) error {
	if a.limits != nil {
		a.limits.learn(method, wait, time.Now())
	}
	return &channels.RateLimitError{RetryAfter: wait, Scope: method}
}

// unavailableErrors are the Web API errors that mean Slack could not do
// the call just now; every other error code is a refusal for good.
var unavailableErrors = []string{"internal_error", "fatal_error", "service_unavailable", "request_timeout"}

// pace reserves the channel's next post slot at now for thread who ("" a
// post at the channel's top), or returns a *channels.RateLimitError saying
// when to come back. It never sleeps. The threads of a channel share its
// slots in the order they asked: one refused is queued, and told to come
// back when its turn is, so that a busy thread retrying at the slot's
// first instant cannot starve the others (a channel's many busy threads
// left one unanswered for half a minute). A thread that does not come
// back within an interval of its turn loses its place.
func (a *Adapter) pace(channel, who string, now time.Time) error {
	every := a.o.PostInterval
	if every == 0 {
		every = time.Second
	}
	if every < 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.posting == nil {
		a.posting = map[string]*channelPace{}
	}
	if len(a.posting) > 10000 {
		clear(a.posting) // bounded; at worst a channel is paced late once
	}
	cp := a.posting[channel]
	if cp == nil {
		cp = &channelPace{}
		a.posting[channel] = cp
	}
	cp.queue = slices.DeleteFunc(cp.queue, func(w paceWaiter) bool { return w.who != who && now.After(w.until) })
	at := slices.IndexFunc(cp.queue, func(w paceWaiter) bool { return w.who == who })
	if !now.Before(cp.next) && (at == 0 || at < 0 && len(cp.queue) == 0) {
		if at == 0 {
			cp.queue = cp.queue[1:]
		}
		cp.next = now.Add(every)
		return nil
	}
	if at < 0 {
		at = len(cp.queue)
		cp.queue = append(cp.queue, paceWaiter{who: who})
	}
	// Its turn: the slot after those of the threads ahead of it.
	wait := max(cp.next.Sub(now), 0) + time.Duration(at)*every
	cp.queue[at].until = now.Add(wait + every)
	return &channels.RateLimitError{RetryAfter: wait, Scope: "post (channel pacing)"}
}

// channelPace is a channel's post pacing: when its next post may go, and
// the threads waiting for a slot, in turn.
type channelPace struct {
	next  time.Time
	queue []paceWaiter
}

// paceWaiter is a thread refused a slot; its place is kept until until.
type paceWaiter struct {
	who   string
	until time.Time
}
