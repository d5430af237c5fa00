package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// Discord error codes the adapter acts on.
const (
	codeUnknownChannel  = 10003
	codeUnknownMessage  = 10008
	codeOldMessageEdits = 30046 // too many edits of messages older than an hour
	codeOtherAuthor     = 50005 // a message by another user
	codeArchivedThread  = 50083
)

// minRetryAfter is the least wait a 429 yields, so that a 429 that says
// "0" does not make dispatch retry in a tight loop.
const minRetryAfter = 100 * time.Millisecond

// requestOptions are the options of every REST call: the caller's context,
// and no waiting inside discordgo on a 429.
func requestOptions(ctx context.Context) []discordgo.RequestOption {
	return []discordgo.RequestOption{discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false)}
}

// metaFlags are the flags of every message the gateway posts that is not
// the agent's text (tool and status lines, notices, plans, thoughts,
// prompts, forms, answers to a message): no link previews, as on Slack,
// and the mark by which History tells such a message from the agent's
// text (channels.Inbound.Meta). Discord keeps a message's flags on an
// edit that does not name them.
const metaFlags = discordgo.MessageFlagsSuppressEmbeds

// flagsOf returns the flags a message of kind k is posted with.
func flagsOf(k channels.Kind) discordgo.MessageFlags {
	if k == channels.KindText {
		return 0
	}
	return metaFlags
}

// noMentions lets a message ping nobody: no @everyone, roles, users or
// replied-to author, whatever its text says.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// channelOf returns the channel id that REST calls for t use: the thread
// (or DM channel) itself.
func channelOf(t channels.ThreadRef) (string, error) {
	if t.Platform != Platform || t.Thread == "" {
		return "", channels.Permanent(fmt.Errorf("discord: thread %v is not a Discord thread", t))
	}
	return t.Thread, nil
}

// Post sends m as a new message in t and returns its handle; a message
// that is not the agent's text carries metaFlags. It blocks on
// I/O. A post into an archived thread unarchives it. It returns a
// *channels.RateLimitError when Discord asks to wait; nothing was posted
// then.
func (a *Adapter) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	ch, err := channelOf(t)
	if err != nil {
		return channels.Handle{}, err
	}
	content := render(m)
	if content == "" {
		return channels.Handle{}, channels.Permanent(errors.New("discord: post: the message is empty"))
	}
	msg, err := a.s.ChannelMessageSendComplex(ch, &discordgo.MessageSend{
		Content:         content,
		AllowedMentions: noMentions(),
		Flags:           flagsOf(m.Kind),
	}, requestOptions(ctx)...)
	if err != nil {
		return channels.Handle{}, apiError("post", err)
	}
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// Edit replaces the content of message h with m and removes any buttons.
// It blocks on I/O. It returns a *channels.RateLimitError when Discord asks
// to wait, and an error wrapping channels.ErrMessageGone when the message
// cannot be edited any more: deleted, in an archived thread, or one of the
// old messages Discord limits edits of (30046).
func (a *Adapter) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	ch, err := channelOf(h.Thread)
	if err != nil {
		return err
	}
	if !h.Known() {
		return fmt.Errorf("discord: edit: the handle has no message id: %w", channels.ErrMessageGone)
	}
	content := render(m)
	if content == "" {
		return channels.Permanent(errors.New("discord: edit: the message is empty"))
	}
	none := []discordgo.MessageComponent{}
	_, err = a.s.ChannelMessageEditComplex(&discordgo.MessageEdit{
		ID:              string(h.ID),
		Channel:         ch,
		Content:         &content,
		Components:      &none,
		AllowedMentions: noMentions(),
	}, requestOptions(ctx)...)
	if err != nil {
		return editError(err)
	}
	a.forms.forget(string(h.ID)) // a form folded to its answer is closed
	return nil
}

// Typing shows "<bot> is typing…" in t for about ten seconds. It blocks
// on I/O.
func (a *Adapter) Typing(ctx context.Context, t channels.ThreadRef) error {
	ch, err := channelOf(t)
	if err != nil {
		return err
	}
	if err := a.s.ChannelTyping(ch, requestOptions(ctx)...); err != nil {
		return apiError("typing", err)
	}
	return nil
}

// maxButtons is how many buttons a message can carry: five rows of five.
const (
	maxButtons    = 25
	buttonsPerRow = 5
	maxLabel      = 80
)

// Prompt posts c in t with one button per option, five to a row (or a
// select menu when c has more than five options or long labels), and
// c.Attachment, if any, as a text file of the same message; it returns
// the message's handle; the message carries metaFlags. It blocks on I/O.
// It returns an error when c has more than 25 options, which Discord can
// show neither as buttons nor in a menu.
func (a *Adapter) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	ch, err := channelOf(t)
	if err != nil {
		return channels.Handle{}, err
	}
	if len(c.Options) > maxButtons {
		return channels.Handle{}, channels.Permanent(fmt.Errorf("discord: prompt: %d options, but a message holds at most %d buttons", len(c.Options), maxButtons))
	}
	content := render(channels.Message{Kind: channels.KindPermission, Text: c.Text})
	if content == "" {
		content = "…"
	}
	rows := a.buttonRows(c.Options)
	if asMenu(c.Options) {
		rows = a.selectMenu(c.Options)
	}
	send := &discordgo.MessageSend{
		Content:         content,
		Components:      rows,
		AllowedMentions: noMentions(),
		Flags:           metaFlags,
	}
	if f := c.Attachment; f != nil {
		send.Files = []*discordgo.File{{Name: f.Name, ContentType: "text/plain; charset=utf-8", Reader: strings.NewReader(f.Text)}}
	}
	msg, err := a.s.ChannelMessageSendComplex(ch, send, requestOptions(ctx)...)
	if err != nil {
		return channels.Handle{}, apiError("prompt", err)
	}
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// A choice shows as a select menu rather than buttons when it has more
// than menuAfter options (more than a row of buttons is hard to read) or
// a label a button would cut (over maxLabel characters; a menu's option
// shows 100).
const (
	menuAfter    = 5
	menuLabel    = 40
	maxMenuLabel = 100 // Discord's limit of a select option's label
	choiceMenuID = "acpgw:choice"
	menuHolder   = "Choose…"
)

// asMenu reports whether opts show as a select menu.
func asMenu(opts []channels.Option) bool {
	if len(opts) > menuAfter {
		return true
	}
	for _, o := range opts {
		if utf8.RuneCountInString(strings.TrimSpace(o.Label)) > maxLabel {
			return true
		}
	}
	return false
}

// selectMenu lays out opts as one string select menu; a pick arrives as
// a component interaction whose value is the option's custom id.
func (a *Adapter) selectMenu(opts []channels.Option) []discordgo.MessageComponent {
	menu := discordgo.SelectMenu{MenuType: discordgo.StringSelectMenu, CustomID: choiceMenuID, Placeholder: menuHolder}
	for _, o := range opts {
		label := clip(strings.TrimSpace(o.Label), maxMenuLabel)
		if label == "" {
			label = clip(o.ID, maxMenuLabel)
		}
		menu.Options = append(menu.Options, discordgo.SelectMenuOption{Label: label, Value: a.buttons.customID(o.ID)})
	}
	return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{menu}}}
}

// buttonRows lays out one button per option in action rows.
func (a *Adapter) buttonRows(opts []channels.Option) []discordgo.MessageComponent {
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	for _, o := range opts {
		label := clip(strings.TrimSpace(o.Label), maxLabel)
		if label == "" {
			label = clip(o.ID, maxLabel)
		}
		row.Components = append(row.Components, discordgo.Button{
			Label:    label,
			Style:    buttonStyle(o.Style),
			CustomID: a.buttons.customID(o.ID),
		})
		if len(row.Components) == buttonsPerRow {
			rows = append(rows, row)
			row = discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	return rows
}

func buttonStyle(s string) discordgo.ButtonStyle {
	switch s {
	case "primary":
		return discordgo.PrimaryButton
	case "danger":
		return discordgo.DangerButton
	}
	return discordgo.SecondaryButton
}

// SetTitle renames thread t to title (its first line, at most 100
// characters). It blocks on I/O. Only threads the bot opened are renamed:
// a thread someone else opened keeps its name, and so does a direct
// message, which has none; SetTitle returns nil for those.
func (a *Adapter) SetTitle(ctx context.Context, t channels.ThreadRef, title string) error {
	ch, err := channelOf(t)
	if err != nil {
		return err
	}
	if t.Channel == t.Thread {
		return nil // a direct message
	}
	// A thread someone else opened keeps its name. Before READY the bot's
	// own id is unknown; then no thread counts as someone else's.
	if p, ok := a.places.lookup(ch); ok && p.owner != "" {
		if bot := a.botID(); bot != "" && p.owner != bot {
			return nil
		}
	}
	name := clipName(title, "")
	if name == "" {
		return nil
	}
	c, err := a.s.ChannelEdit(ch, &discordgo.ChannelEdit{Name: name}, requestOptions(ctx)...)
	if err != nil {
		return apiError("title", err)
	}
	a.places.put(c, "")
	return nil
}

// render returns the content of m as Discord shows it: thoughts as a block
// quote with a 💭, every other kind as written; never more than
// maxMessageChars characters.
func render(m channels.Message) string {
	text := channels.TrimLead(m.Text)
	if strings.TrimSpace(text) == "" {
		return ""
	}
	if m.Kind == channels.KindThought {
		const quote = ">>> 💭 "
		if utf8.RuneCountInString(quote)+utf8.RuneCountInString(text) <= maxMessageChars {
			return quote + text
		}
	}
	return clip(text, maxMessageChars)
}

// clip cuts s to at most n characters, ending it with an ellipsis when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// apiError converts an error of a REST call to what channels documents: a
// 429 becomes *channels.RateLimitError with the call's scope.
func apiError(scope string, err error) error {
	var own *channels.RateLimitError
	if errors.As(err, &own) {
		s := scope
		if own.Scope == "global" {
			s = "global"
		}
		return &channels.RateLimitError{RetryAfter: max(own.RetryAfter, minRetryAfter), Scope: s}
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil {
		var wait time.Duration
		if rl.TooManyRequests != nil {
			wait = rl.RetryAfter
		}
		return &channels.RateLimitError{RetryAfter: max(wait, minRetryAfter), Scope: scope}
	}
	err = fmt.Errorf("discord: %s: %w", scope, err)
	if refused(err) {
		return channels.Permanent(err)
	}
	return err
}

// refused reports whether Discord answered err's request with a 4xx other
// than 408 and 429: the request is wrong for good (an unknown channel,
// missing permissions, an invalid body). 5xx answers and failed
// connections are not: Discord could not be reached.
func refused(err error) bool {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return false
	}
	c := re.Response.StatusCode
	return c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests
}

// editError converts an error of an edit: on top of apiError, the ways
// Discord says a message can no longer be edited wrap
// channels.ErrMessageGone.
func editError(err error) error {
	if gone(err) {
		return fmt.Errorf("discord: edit: %w: %w", channels.ErrMessageGone, err)
	}
	return apiError("edit", err)
}

// gone reports whether err says the message cannot be edited any more.
func gone(err error) bool {
	if errors.Is(err, errOldMessageEdits) {
		return true
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return isOldEditText(rl.Message)
	}
	var re *discordgo.RESTError
	if !errors.As(err, &re) {
		return false
	}
	if re.Message != nil {
		switch re.Message.Code {
		case codeUnknownMessage, codeUnknownChannel, codeOldMessageEdits, codeOtherAuthor, codeArchivedThread:
			return true
		}
		if isOldEditText(re.Message.Message) {
			return true
		}
	}
	return re.Response != nil && re.Response.StatusCode == http.StatusNotFound
}

// isOldEditText reports whether a 429's message is Discord's limit of edits
// to messages older than an hour (30046), which arrives as an ordinary
// rate limit with only its text to tell.
func isOldEditText(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "30046") || (strings.Contains(m, "edits") && strings.Contains(m, "older than"))
}
