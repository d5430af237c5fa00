package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
)

var _ channels.History = (*Adapter)(nil)

// Limits of the history reads.
const (
	// defaultHistoryInterval: Slack allows apps that are not in the
	// Marketplace one conversations.replies call a minute.
	defaultHistoryInterval = time.Minute
	// maxRepliesPage is the most messages one call asks for (Slack
	// returns fewer, 15, to apps it limits, and says has_more).
	maxRepliesPage = 200
	// maxRepliesBody bounds the answer read.
	maxRepliesBody = 16 << 20
)

// MessagesAfter reads the replies of thread t posted after the message
// after (conversations.replies with oldest=after, not inclusive), one call,
// and returns those Run would deliver, oldest first, converted the same
// way (edits and other events left out), and the app's own messages
// marked Author.Self (and Meta when they carry the metadata metaEvent:
// not the agent's text). Those it
// returns count as delivered, so that a later event for one (Slack's
// redelivery) is not delivered again; one delivered live already is
// returned too, in its place, for the caller to answer once. A read from
// the start (after "") returns the thread's first message too. Calls are paced by Options.HistoryInterval: one that
// comes sooner returns a *channels.RateLimitError for the rest of the
// interval, as does Slack's own 429. It blocks on I/O.
func (a *Adapter) MessagesAfter(ctx context.Context, t channels.ThreadRef, after channels.MessageID, limit int) (channels.Page, error) {
	if t.Platform != Platform || t.Channel == "" || t.Thread == "" {
		return channels.Page{}, fmt.Errorf("slack: thread %v is not a Slack thread", t)
	}
	me, ok := a.capabilities()
	if !ok {
		return channels.Page{}, errors.New("slack: conversations.replies: the app is not detected yet")
	}
	if err := a.paceHistory(time.Now()); err != nil {
		return channels.Page{}, err
	}
	form := url.Values{
		"channel":   {t.Channel},
		"ts":        {t.Thread},
		"limit":     {strconv.Itoa(min(max(limit, 1), maxRepliesPage))},
		"inclusive": {"0"},
		// The metadata marks the app's own messages that are not the
		// agent's text (metaEvent).
		"include_all_metadata": {"1"},
	}
	if after != "" {
		form.Set("oldest", string(after))
	}
	body, err := a.callForm(ctx, "conversations.replies", form)
	if err != nil {
		return channels.Page{}, err
	}
	r, err := decodeReplies(body)
	if err != nil {
		return channels.Page{}, err
	}
	page := channels.Page{More: r.HasMore}
	for _, ev := range r.Messages {
		ts := string(ev.TS)
		if ts == "" || (after != "" && compareTS(ts, string(after)) <= 0) {
			continue
		}
		if page.Last == "" || compareTS(ts, string(page.Last)) > 0 {
			page.Last = channels.MessageID(ts)
		}
		// The message that started the thread (its parent, which Slack
		// lists first) comes after no message: only a read from the
		// start (after "", the context of a thread the gateway joins)
		// returns it; a catch-up reads after a message it saw.
		if !deliverable[string(ev.Subtype)] {
			continue
		}
		if isOwn(ev, me) {
			page.Messages = append(page.Messages, a.own(t, ev, me))
			continue
		}
		// Delivered live already or not, it is returned (the caller
		// drops the live copy it holds: the read keeps Slack's order);
		// either way a later event for it is not delivered again.
		a.seen.first(a.seen.messages, t.Channel+"/"+ts)
		ev.Channel = str(t.Channel)
		page.Messages = append(page.Messages, a.message(ctx, t, ev, me.TeamID, me))
	}
	return page, nil
}

// own is the app's own message ev of thread t, as MessagesAfter returns
// it: its text, marked Author.Self, and Meta when it carries the app's
// metadata metaEvent (not the agent's text).
func (a *Adapter) own(t channels.ThreadRef, ev event, me Capabilities) channels.Inbound {
	id := firstNonEmpty(string(ev.User), string(ev.BotID))
	return channels.Inbound{
		Thread: t,
		Author: channels.Author{ID: id, Name: firstNonEmpty(ev.BotProfile.best(), string(ev.Username), id), Bot: true, Self: true},
		Text:   inboundText(string(ev.Text), me.BotUserID),
		ID:     channels.MessageID(ev.TS),
		Space:  me.TeamID,
		Time:   tsTime(string(ev.TS)),
		Meta:   ev.Metadata.EventType == metaEvent,
	}
}

// paceHistory reserves the next history call at now, or returns a
// *channels.RateLimitError saying how long until it may go. It never
// sleeps.
func (a *Adapter) paceHistory(now time.Time) error {
	return a.reserve(now, &a.nextHistory, cmp.Or(a.o.HistoryInterval, defaultHistoryInterval), "conversations.replies (pacing)")
}

// reserve reserves the call *next says when may go, at now, with the next
// one every later (none when every is negative); or it returns a
// *channels.RateLimitError of scope saying how long until it may go. It
// never sleeps. a.mu guards *next.
func (a *Adapter) reserve(now time.Time, next *time.Time, every time.Duration, scope string) error {
	if every < 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if now.Before(*next) {
		return &channels.RateLimitError{RetryAfter: next.Sub(now), Scope: scope}
	}
	*next = now.Add(every)
	return nil
}

// callForm posts form to a Web API method with the bot token and returns
// the answer's body. A 429 is a *channels.RateLimitError.
func (a *Adapter) callForm(ctx context.Context, method string, form url.Values) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.o.APIURL+method, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("slack: %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+a.o.BotToken)
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("slack: %s: %w", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		wait := defaultRetryAfter
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		return nil, &channels.RateLimitError{RetryAfter: wait, Scope: method}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("slack: %s: HTTP %s", method, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRepliesBody))
	if err != nil {
		return nil, fmt.Errorf("slack: %s: %w", method, err)
	}
	return body, nil
}

// replies is the answer of conversations.replies.
type replies struct {
	OK       bool    `json:"ok"`
	Error    str     `json:"error"`
	Messages []event `json:"messages"`
	HasMore  bool    `json:"has_more"`
}

// decodeReplies decodes an answer of conversations.replies. An ok:false
// answer is an error ("ratelimited" a *channels.RateLimitError).
func decodeReplies(body []byte) (replies, error) {
	var r replies
	if err := json.Unmarshal(body, &r); err != nil {
		return replies{}, fmt.Errorf("slack: conversations.replies: decode: %w", err)
	}
	if !r.OK {
		if r.Error == "ratelimited" {
			return replies{}, &channels.RateLimitError{RetryAfter: defaultHistoryInterval, Scope: "conversations.replies"}
		}
		return replies{}, fmt.Errorf("slack: conversations.replies: %s", firstNonEmpty(string(r.Error), "not ok"))
	}
	return r, nil
}

// compareTS orders Slack message timestamps ("1700000000.000100"):
// seconds as numbers, then the fraction.
func compareTS(x, y string) int {
	xs, xf, _ := strings.Cut(x, ".")
	ys, yf, _ := strings.Cut(y, ".")
	if len(xs) != len(ys) {
		return len(xs) - len(ys)
	}
	if c := strings.Compare(xs, ys); c != 0 {
		return c
	}
	return strings.Compare(xf, yf)
}
