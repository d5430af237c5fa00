package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/lanes"
)

// Platform is the adapter's platform name, the Platform of its ThreadRefs.
const Platform = "slack"

// DefaultAPIURL is Slack's Web API base URL, used when Options.APIURL is
// empty.
const DefaultAPIURL = "https://slack.com/api/"

// The adapter's limits (see Limits).
const (
	// maxMessageChars stays below the 4,000 characters beyond which Slack
	// answers msg_too_long in practice, with room for the longer mrkdwn
	// of links and escaped characters.
	maxMessageChars = 3500
	// minPostInterval: about one message per second per channel.
	minPostInterval = time.Second
	// minEditInterval keeps one message's edits within Tier 3 (about 50
	// chat.update calls a minute).
	minEditInterval = 1200 * time.Millisecond
	// typingInterval refreshes the status line well before Slack clears
	// it after two minutes.
	typingInterval = 90 * time.Second
	// defaultRetryAfter is the wait of a 429 without a Retry-After header.
	defaultRetryAfter = time.Second
	// httpTimeout bounds each Web API call of the default HTTP client.
	httpTimeout = 30 * time.Second
)

// Options configure an Adapter.
type Options struct {
	// AppToken is the app-level token ("xapp-…", scope
	// connections:write) that opens Socket Mode connections. Required.
	AppToken string
	// BotToken is the bot token ("xoxb-…") for Web API calls. Required.
	BotToken string
	// APIURL is the Web API base URL; "" means DefaultAPIURL. A missing
	// trailing "/" is added. Tests and proxies point it elsewhere; the
	// Socket Mode URL comes from apps.connections.open at that address.
	APIURL string
	// HTTPClient makes the Web API calls; nil means a client with a 30 s
	// timeout. slack-go's retries are never enabled.
	HTTPClient *http.Client
	// KnownThread, if set, reports whether a thread the adapter has not
	// seen bound since it started is bound to a session (the program
	// passes a lookup in its store), so that a thread keeps working
	// without a new mention after a restart. It is called on the
	// thread's inbound lane for messages in threads of channels (calls
	// for different threads may run at once); nil means only mentions
	// since the start bind threads.
	KnownThread func(ctx context.Context, t channels.ThreadRef) bool
	// Admit, if set, is asked before a slash command posts anything: it
	// reports whether the person may prompt in that channel, and tells
	// them privately when not (through the Inbound's Reply, an ephemeral
	// message in the channel). Its Inbound's Thread is the channel's
	// (Thread = Channel): no thread exists yet. Without it every slash
	// command opens a thread and access is judged inside it. The program
	// passes the router's Admit.
	Admit func(ctx context.Context, in channels.Inbound) bool
	// RecheckUnknown has KnownThread asked again on every message of a
	// thread it did not know, instead of the answer being remembered: an
	// edge sets it, since the mention that binds a thread may reach
	// another edge (its KnownThread keeps answers briefly).
	RecheckUnknown bool
	// UserGroups fills Author.Roles with the ids of the user groups the
	// author belongs to, for access rules that name user groups. It
	// needs the usergroups:read scope and costs one usergroups.list call
	// every five minutes. Off, Roles stay empty.
	UserGroups bool
	// PostInterval is the shortest time between two posts in one
	// channel, across all its threads (Slack allows about one message
	// per second per channel). A post that comes sooner is not sent: it
	// returns a *channels.RateLimitError for the rest of the interval,
	// which dispatch waits out. Zero means one second; negative turns
	// the pacing off.
	PostInterval time.Duration
	// HistoryInterval is the shortest time between two reads of a
	// thread's history (conversations.replies, for the catch-up at
	// start), which Slack allows apps outside the Marketplace once a
	// minute. A read that comes sooner returns a
	// *channels.RateLimitError for the rest of the interval. Zero means
	// a minute; negative turns the pacing off.
	HistoryInterval time.Duration
	// ReactionInterval is the shortest time between two reaction calls
	// (reactions.add, reactions.remove; Slack's Tier 3, about 50 a
	// minute). A call that comes sooner returns a
	// *channels.RateLimitError for the rest of the interval. Zero means
	// 1.2 s; negative turns the pacing off.
	ReactionInterval time.Duration
	// Streaming is how text and tool calls show in threads: native
	// (chat.startStream and its chunks; "" means native) or edits
	// (posts and chat.update). A workspace that refuses streaming gets
	// edits: the first stream call's answer tells.
	Streaming Streaming
	// RetryFor is how long a call that Slack's rate limits hold back
	// and that no lane retries (the stop of a stream at a turn's end)
	// keeps waiting for its turn (delivery.retryFor); 0 means
	// DefaultRetryFor.
	RetryFor time.Duration
	// CommandPrefix starts a gateway command typed in a thread ("!model
	// x" for "!"); "" means DefaultCommandPrefix. New rejects a prefix
	// Config.Validate would.
	CommandPrefix string
	// Logger receives the adapter's logs; nil discards them.
	Logger *slog.Logger
}

// DefaultRetryFor is Options.RetryFor's default, delivery.retryFor's.
const DefaultRetryFor = 15 * time.Minute

// botScopes are the bot token scopes the adapter uses, and what for.
// slack-app-manifest.yaml lists them (a test checks).
var botScopes = map[string]string{
	"app_mentions:read": "mentions (app_mention events)",
	"channels:history":  "messages in threads of public channels",
	"groups:history":    "messages in threads of private channels",
	"im:history":        "direct messages",
	"mpim:history":      "group direct messages",
	"chat:write":        "posts, edits, private replies, streamed answers, the status line and session titles",
	"assistant:write":   "agent sessions: the status line and Slack's Stop button",
	"users:read":        "people's names (users.info)",
	"files:read":        "text files and images attached to messages, for the agent",
	filesScope:          "files the agent sends into a thread",
	"reactions:write":   "the app's reactions on people's messages: taken, queued, done",
	"reactions:read":    "people's reactions in the app's threads (🛑 stops the turn)",
	"channels:read":     "a public channel deleted or archived ends its threads",
	"groups:read":       "a private channel deleted or archived ends its threads",
}

// userGroupsScope is the scope Options.UserGroups needs.
const userGroupsScope = "usergroups:read"

// Capabilities is what Detect learned about the app from Slack.
type Capabilities struct {
	// TeamID is the workspace the bot token belongs to.
	TeamID string
	// BotUserID and BotID identify the app's own messages.
	BotUserID string
	BotID     string
	// Scopes are the bot token's scopes as auth.test reported them (the
	// x-oauth-scopes header); nil when Slack did not say.
	Scopes []string
	// Status reports that assistant.threads.setStatus works: the
	// adapter reports channels.Typer and channels.TypingStopper (Caps).
	Status bool
	// Upload reports that the bot token may share files (files:write, or
	// Slack did not list the scopes): the adapter reports
	// channels.Uploader.
	Upload bool
}

// Adapter is a Slack app in threads. Create it with New; its methods are
// safe for concurrent use. Post, Edit, Prompt and Detect work whether or
// not Run is connected.
type Adapter struct {
	o   Options
	log *slog.Logger
	api *slack.Client
	hc  *http.Client // the Web API's client, also used for file links
	// detectWait is the wait before auth.test is tried again, given
	// what Slack asked for (tests shorten it).
	detectWait func(attempt int, asked time.Duration) time.Duration
	users      *directory
	seen       *state
	limits     *limits // the methods' tiers

	detectMu sync.Mutex // serialises Detect

	mu      sync.Mutex // guards the fields below
	caps    *Capabilities
	started bool                    // Run was called with a live context
	status  map[string]time.Time    // threads whose status line is on → when it was set
	posting map[string]*channelPace // channel → its post pacing (pace)
	// nextHistory is when the next conversations.replies call may go.
	nextHistory time.Time

	health channels.Health // the Socket Mode connection

	noStream    bool                 // the workspace refused chat.startStream
	noStatus    bool                 // Slack refused assistant.threads.setStatus
	prompts     map[string]int       // channel/thread → prompts open there
	promptMsgs  map[string]string    // channel/ts of an open prompt → channel/thread
	recipients  map[string][2]string // channel/thread → last author, team
	streams     map[string]*stream   // channel/ts → a streamed message
	openStreams map[string]*stream   // channel/thread → its open stream
	forms       *lru[*openForm]      // channel/ts of a form message → the form
	sessions    agentSessions        // threads whose agent session is processing
	// nextReaction is when the next reactions.add or .remove may go.
	nextReaction time.Time
	// busyTold are the threads told their place in a line (tellBusy).
	busyTold *lru[struct{}]
}

var (
	_ channels.Adapter       = (*Adapter)(nil)
	_ channels.CapsReporter  = (*Adapter)(nil)
	_ channels.Editor        = (*Adapter)(nil)
	_ channels.Prompter      = (*Adapter)(nil)
	_ channels.Checker       = (*Adapter)(nil)
	_ channels.Typer         = (*Adapter)(nil)
	_ channels.TypingStopper = (*Adapter)(nil)
	_ channels.Titler        = (*Adapter)(nil)
)

// New returns an adapter for o. It does no I/O; Detect and Run talk to
// Slack. It returns an error when a token is missing or APIURL is not an
// http(s) URL.
func New(o Options) (*Adapter, error) {
	if o.AppToken == "" {
		return nil, errors.New("slack: the app-level token is required")
	}
	if o.BotToken == "" {
		return nil, errors.New("slack: the bot token is required")
	}
	api, err := normaliseAPIURL(o.APIURL)
	if err != nil {
		return nil, err
	}
	o.APIURL = api
	if o.CommandPrefix == "" {
		o.CommandPrefix = DefaultCommandPrefix
	}
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultRetryFor
	}
	if err := checkCommandPrefix(o.CommandPrefix); err != nil {
		return nil, fmt.Errorf("slack: command prefix: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hc := &http.Client{Timeout: httpTimeout}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		hc = &c
	}
	lim := newLimits()
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = tierTransport{base: base, limits: lim}
	client := slack.New(o.BotToken,
		slack.OptionAPIURL(o.APIURL),
		slack.OptionAppLevelToken(o.AppToken),
		slack.OptionHTTPClient(hc),
		slack.OptionLog(slogOutput{log}),
	)
	a := &Adapter{
		o:          o,
		log:        log,
		api:        client,
		hc:         hc,
		detectWait: detectBackoff,
		seen:       newState(),
		status:     map[string]time.Time{},
		limits:     lim,
	}
	a.users = newDirectory(client, o.UserGroups, log)
	a.users.limits = a.limits
	return a, nil
}

// normaliseAPIURL returns u with a trailing slash, DefaultAPIURL for "".
func normaliseAPIURL(u string) (string, error) {
	if u == "" {
		return DefaultAPIURL, nil
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("slack: API URL %q: want an http or https URL", u)
	}
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u, nil
}

// Detect asks Slack who the app is and what it may do: auth.test (the
// bot's user id, bot id, workspace and scopes). The status line counts as
// available when the token has chat:write or assistant:write (or Slack
// did not list the scopes); no call is made on a made-up thread: the
// first real assistant.threads.setStatus that Slack refuses for good
// (missing_scope, unknown_method, …) turns it off, and so does the first
// chat.startStream for streaming. The first successful call logs the capability set
// once; later calls return the same result without I/O. It blocks on
// network I/O and returns an error when auth.test fails (a bad token).
func (a *Adapter) Detect(ctx context.Context) (Capabilities, error) {
	a.detectMu.Lock()
	defer a.detectMu.Unlock()
	if c, ok := a.capabilities(); ok {
		return c, nil
	}
	resp, err := a.authTest(ctx)
	if err != nil {
		return Capabilities{}, err
	}
	c := Capabilities{TeamID: resp.TeamID, BotUserID: resp.UserID, BotID: resp.BotID}
	if h := resp.Header.Get("X-OAuth-Scopes"); h != "" {
		for s := range strings.SplitSeq(h, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.Scopes = append(c.Scopes, s)
			}
		}
	}
	a.warnMissingScopes(c.Scopes)
	var why string
	c.Status, why = statusUsable(c.Scopes)
	c.Upload = c.Scopes == nil || slices.Contains(c.Scopes, filesScope)
	a.mu.Lock()
	a.caps = &c
	a.mu.Unlock()
	a.log.Info("slack capabilities detected",
		"team", c.TeamID, "bot_user", c.BotUserID, "bot_id", c.BotID,
		"capabilities", strings.Join(channels.CapsOf(a).Names(), ","), "status_line", why)
	return c, nil
}

// authTest calls auth.test, trying again while Slack cannot be reached
// or answers that it is busy (a gateway started while the network comes
// up, an outage): up to detectAttempts tries, waiting 1, 2, 4… s, or as
// long as Slack asks (at most maxDetectWait). A refused token fails at
// once.
func (a *Adapter) authTest(ctx context.Context) (*slack.AuthTestResponse, error) {
	for attempt := 1; ; attempt++ {
		resp, err := a.api.AuthTestContext(ctx)
		if err == nil {
			return resp, nil
		}
		err = a.apiErr("auth.test", err)
		if ctx.Err() != nil || attempt == detectAttempts || !transient(err) {
			return nil, err
		}
		var asked time.Duration
		if rl, ok := errors.AsType[*channels.RateLimitError](err); ok {
			asked = rl.RetryAfter
		}
		wait := a.detectWait(attempt, asked)
		a.log.Warn("slack: cannot reach Slack; trying again", "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// Retries of auth.test at start.
const (
	detectAttempts = 6
	maxDetectWait  = 30 * time.Second
)

// detectBackoff is the wait before try attempt+1: 1, 2, 4… s, or what
// Slack asked for, at most maxDetectWait.
func detectBackoff(attempt int, asked time.Duration) time.Duration {
	return min(max(time.Second<<(attempt-1), asked), maxDetectWait)
}

// transient reports whether err may pass if tried again: no answer, a
// server error, a rate limit, or Slack saying it is busy; not a refused
// token or a bad request.
func transient(err error) bool {
	if _, ok := errors.AsType[*channels.RateLimitError](err); ok {
		return true
	}
	if sc, ok := errors.AsType[slack.StatusCodeError](err); ok {
		return sc.Code >= 500
	}
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		switch se.Err {
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return true
		}
		return false
	}
	return true // no answer from Slack at all
}

// warnMissingScopes logs the scopes the adapter uses that the bot token
// lacks, if Slack listed the token's scopes.
func (a *Adapter) warnMissingScopes(scopes []string) {
	if scopes == nil {
		return
	}
	var missing []string
	for s, what := range botScopes {
		if !slices.Contains(scopes, s) {
			missing = append(missing, s+" ("+what+")")
		}
	}
	if a.o.UserGroups && !slices.Contains(scopes, userGroupsScope) {
		missing = append(missing, userGroupsScope+" (user groups as roles)")
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		a.log.Warn("slack: the bot token lacks scopes the gateway uses; reinstall the app from slack-app-manifest.yaml",
			"missing", strings.Join(missing, ", "))
	}
}

// statusUsable reports whether the bot token may set the thread status
// line (assistant.threads.setStatus), judged from its scopes without a
// call, and why. The first real call that Slack refuses for good turns
// the line off (see setStatus).
func statusUsable(scopes []string) (bool, string) {
	if scopes != nil && !slices.Contains(scopes, "chat:write") && !slices.Contains(scopes, "assistant:write") {
		return false, "off: the bot token has neither chat:write nor assistant:write"
	}
	return true, "on"
}

// capabilities returns what Detect found, and false before it succeeded.
func (a *Adapter) capabilities() (Capabilities, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.caps == nil {
		return Capabilities{}, false
	}
	return *a.caps, true
}

// Caps reports the adapter's capabilities (channels.CapsReporter): all
// it implements, but the thread status line (channels.Typer and
// channels.TypingStopper) only where Detect found that it works, and
// uploads (channels.Uploader) only where the token may share files;
// before Detect, neither. It does no I/O.
func (a *Adapter) Caps() channels.Caps {
	c, _ := a.capabilities()
	caps := channels.Implemented(a)
	caps.Typing, caps.StopTyping, caps.Upload = c.Status, c.Status, c.Upload
	return caps
}

// Typing sets the thread's status line to "is working…" (Slack clears it
// after two minutes or when the app replies; the adapter sets it again
// after each of its posts while it is on). It blocks on I/O and returns a
// *channels.RateLimitError when Slack asks to slow down, and a
// *channels.PermanentError where the adapter does not report the status
// line (Caps).
func (a *Adapter) Typing(ctx context.Context, t channels.ThreadRef) error {
	if c, _ := a.capabilities(); !c.Status {
		return channels.Permanent(errors.New("slack: the app has no thread status line"))
	}
	err := a.setStatus(ctx, t, true)
	a.sessionStatus(ctx, t, true) // Slack's Stop button, also without a stream
	return err
}

// StopTyping clears the thread's status line and stops its open stream
// (the turn ended, or was stopped), so the streamed message shows as
// complete. It blocks on I/O. Where the adapter does not report the
// status line (Caps) it does nothing.
func (a *Adapter) StopTyping(ctx context.Context, t channels.ThreadRef) error {
	if c, _ := a.capabilities(); !c.Status {
		return nil
	}
	a.stopOpen(ctx, t)
	err := a.setStatus(ctx, t, false)
	a.sessionStatus(ctx, t, false)
	return err
}

// Limits reports Slack's limits: 3,500 characters per message, a post per
// second and an edit per 1.2 s, and a status line refreshed every 90 s. It
// does no I/O.
func (a *Adapter) Limits() channels.Limits { return Limits() }

// Run detects the capabilities (if Detect was not called), connects with
// Socket Mode and delivers what people write and click to h until ctx
// ends; Slack's disconnect requests and dropped connections are followed
// by a new connection. Every envelope is acknowledged as soon as it
// arrives; h is called afterwards with Run's context, on the inbound lane
// of the envelope's thread: one thread's messages and clicks in order,
// other threads meanwhile, so h may run on several goroutines at once.
// Name lookups wait on their thread's lane only. Run returns nil once ctx
// ended and everything it started has stopped, and an error when
// auth.test fails, Slack refuses the app-level token, or Run is called a
// second time.
func (a *Adapter) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	if ctx.Err() != nil {
		return nil
	}
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("slack: Run called twice")
	}
	a.started = true
	a.mu.Unlock()
	a.health.Set(false, "connecting to Socket Mode")
	defer a.health.Set(false, "not running")
	if _, err := a.Detect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sm := socketmode.New(a.api, socketmode.OptionLog(slogOutput{a.log}))
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	in := &inbound{ctx: ctx, work: work, h: h, lanes: lanes.New()}
	var wg sync.WaitGroup
	runErr := make(chan error, 1)
	wg.Go(func() {
		defer cancel()
		runErr <- sm.RunContext(ctx)
	})
	a.readEvents(ctx, sm, in)
	t := time.AfterFunc(handOver, stopWork) // what was acknowledged is handed over
	in.lanes.Close()
	t.Stop()
	wg.Wait()
	err := <-runErr
	if parent.Err() != nil {
		return nil
	}
	if err == nil {
		err = errors.New("the client stopped")
	}
	return fmt.Errorf("slack: socket mode: %w", err)
}

// readEvents acknowledges and queues what Socket Mode delivers until ctx
// ends.
func (a *Adapter) readEvents(ctx context.Context, sm *socketmode.Client, in *inbound) {
	for {
		select {
		case <-ctx.Done():
			return
		case evt := <-sm.Events:
			a.onSocketEvent(ctx, sm, in, evt)
		}
	}
}

// onSocketEvent handles one event of the Socket Mode client. Envelopes are
// acknowledged before anything else is done with them.
func (a *Adapter) onSocketEvent(ctx context.Context, sm *socketmode.Client, in *inbound, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		if evt.Request == nil {
			return
		}
		var resp any
		if evt.Type == socketmode.EventTypeInteractive {
			resp = a.viewAck(evt.Request.Payload) // errors shown in a form's modal
		}
		a.ack(ctx, sm, evt.Request.EnvelopeID, resp)
		a.queue(in, item{kind: evt.Request.Type, payload: evt.Request.Payload, retry: evt.Request.RetryAttempt})
	case socketmode.EventTypeErrorBadMessage:
		// slack-go could not parse the envelope (an event type it does not
		// know): acknowledge it anyway, and let the adapter's own decoder
		// try.
		bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
		if !ok {
			return
		}
		env, err := decodeEnvelope(bad.Message)
		if err != nil {
			a.log.Warn("slack: unreadable socket mode message", "err", err)
			return
		}
		if env.EnvelopeID != "" {
			var resp any
			if env.Type == socketmode.RequestTypeInteractive {
				resp = a.viewAck(env.Payload)
			}
			a.ack(ctx, sm, string(env.EnvelopeID), resp)
		}
		a.log.Debug("slack: slack-go could not parse an envelope", "type", env.Type, "err", bad.Cause)
		a.queue(in, item{kind: string(env.Type), payload: env.Payload})
	case socketmode.EventTypeConnecting:
		a.log.Debug("slack: connecting")
		a.health.Set(false, "connecting to Socket Mode")
	case socketmode.EventTypeConnected:
		if c, ok := evt.Data.(*socketmode.ConnectedEvent); ok && c.ConnectionCount > 0 {
			a.log.Info("slack: reconnected", "connection", c.ConnectionCount)
		} else {
			a.log.Info("slack: connected")
		}
		a.health.Set(true, "")
	case socketmode.EventTypeHello:
		a.log.Debug("slack: hello")
	case socketmode.EventTypeDisconnect:
		a.health.Set(false, "Slack asked to reconnect; reconnecting")
	case socketmode.EventTypeConnectionError:
		a.log.Warn("slack: connection failed; retrying", "err", dataErr(evt.Data))
		a.health.Set(false, fmt.Sprint("cannot connect to Socket Mode: ", dataErr(evt.Data)))
	case socketmode.EventTypeInvalidAuth:
		a.log.Error("slack: the app-level token was refused")
		a.health.Set(false, "the app-level token was refused")
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		a.log.Warn("slack: socket mode error", "type", evt.Type, "err", dataErr(evt.Data))
	}
}

// Check reports whether the adapter is connected to Slack.
func (a *Adapter) Check() error { return a.health.Check() }

// ack acknowledges the envelope id, with payload (nil: none). It does
// not wait for the write.
func (a *Adapter) ack(ctx context.Context, sm *socketmode.Client, id string, payload any) {
	if id == "" {
		return
	}
	if err := sm.AckCtx(ctx, id, payload); err != nil && ctx.Err() == nil {
		a.log.Warn("slack: cannot acknowledge an envelope", "envelope", id, "err", err)
	}
}

// dataErr returns the error carried by a Socket Mode client event.
func dataErr(d any) any {
	switch v := d.(type) {
	case *slack.ConnectionErrorEvent:
		return v.ErrorObj
	case *slack.IncomingEventError:
		return v.ErrorObj
	case *socketmode.ErrorWriteFailed:
		return v.Cause
	}
	return d
}

// slogOutput lets slack-go's debug logger write to slog (it logs only
// when slack-go's debug option is on, which the adapter never sets).
type slogOutput struct{ log *slog.Logger }

// Output writes s at debug level.
func (o slogOutput) Output(_ int, s string) error {
	o.log.Debug(strings.TrimSpace(s), "source", "slack-go")
	return nil
}
