package discord

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/lanes"
)

// Platform is the adapter's platform name, the Platform of its ThreadRefs.
const Platform = "discord"

// DefaultAPIBaseURL is where the Discord API is unless Options.APIBaseURL
// says otherwise.
const DefaultAPIBaseURL = "https://discord.com"

// Discord's permission bits the bot asks for in its invite URL.
const (
	permAddReactions          int64 = 1 << 6
	permViewChannel           int64 = 1 << 10
	permSendMessages          int64 = 1 << 11
	permReadMessageHistory    int64 = 1 << 16
	permCreatePublicThreads   int64 = 1 << 35
	permSendMessagesInThreads int64 = 1 << 38
)

// Permissions is the permission integer of the invite URL (309237713984):
// View Channels, Send Messages, Read Message History, Create Public
// Threads, Send Messages in Threads and Add Reactions (the gateway marks
// messages as taken and done). Renaming needs no Manage Threads:
// the bot renames only threads it opened, which their creator may do.
const Permissions = permViewChannel | permSendMessages | permReadMessageHistory |
	permCreatePublicThreads | permSendMessagesInThreads | permAddReactions

// InviteURL returns the URL that adds the bot with application (client) id
// clientID to a server, with Permissions.
func InviteURL(clientID string) string {
	v := url.Values{}
	v.Set("client_id", clientID)
	v.Set("scope", "bot")
	v.Set("permissions", fmt.Sprint(Permissions))
	return "https://discord.com/oauth2/authorize?" + v.Encode()
}

// Limits of Discord as the adapter reports them.
const (
	// maxMessageChars is Discord's limit of a message's content.
	maxMessageChars = 2000
	// minEditInterval: Discord allows about five edits per five seconds
	// in a channel; one per message and second leaves room for several
	// messages updated at once.
	minEditInterval = time.Second
	// typingInterval: a typing indicator lasts about ten seconds.
	typingInterval = 8 * time.Second
	// maxAttachmentBytes: Discord takes files of up to 10 MiB from bots in
	// any server; a prompt's text file stays well below.
	maxAttachmentBytes = 8 << 20
)

// Reconnection backoff of the gateway connection.
const (
	minBackoff = time.Second
	maxBackoff = time.Minute
)

// Options configure an Adapter.
type Options struct {
	// Token is the bot token from the Developer Portal (Bot → Token), with
	// or without the "Bot " prefix. Required.
	Token string
	// APIBaseURL is where the Discord API is, as scheme://host with an
	// optional path prefix; "" means DefaultAPIBaseURL. REST calls and the
	// gateway discovery go there; the websocket goes to the URL the
	// discovery advertises.
	APIBaseURL string
	// DMs lets people talk to the bot in direct messages (it adds the
	// direct messages intent).
	DMs bool
	// ToolStyle is ToolLines ("" too) or ToolCard: with ToolCard the
	// adapter is a channels.Carder whose Cards is true, and dispatch
	// shows a turn's tool calls as rows of progress cards (see Card).
	ToolStyle string
	// Guilds, if set, are the guilds the bot serves (access.discord.guilds):
	// its application commands are registered in each of them, where they
	// appear at once, rather than globally.
	Guilds []string
	// Admit, if set, is asked before a mention in a channel opens a
	// thread: it reports whether the author may prompt there, and tells
	// them when not (through the Inbound's Reply, which answers their
	// message in the channel). Without it every mention opens a thread and
	// access is judged inside it. The program passes the router's Admit.
	Admit func(ctx context.Context, in channels.Inbound) bool
	// KnownThread, if set, reports whether a thread the bot did not open
	// and was not mentioned in since Run started is bound to a session
	// (the program passes a lookup in its store), so that a thread the
	// bot was mentioned in keeps working without a new mention after a
	// restart, or on another edge. It is asked on the channel's inbound
	// lane, for each message in such a thread until it says yes.
	KnownThread func(ctx context.Context, t channels.ThreadRef) bool
	// Shard is the gateway shard the adapter connects (the zero value
	// means the one shard, {0, 1}); see shard.go.
	Shard Shard
	// IdentifyGate, if set, takes the turns of the adapter's identifies
	// in place of the process's own turns, so that the shards of a bot
	// run by several processes (edges) identify in turn (see shard.go).
	IdentifyGate IdentifyGate
	// RetryFor is how long a mention in a channel keeps trying to open
	// its thread while Discord rate-limits it or cannot be reached
	// (delivery.retryFor); 0 means DefaultRetryFor.
	RetryFor time.Duration
	// Logger receives the adapter's logs; nil discards them.
	Logger *slog.Logger
}

// DefaultRetryFor is Options.RetryFor's default, delivery.retryFor's.
const DefaultRetryFor = 15 * time.Minute

// Adapter is a Discord bot serving the gateway. Create it with New; its
// methods are safe for concurrent use. Post, Edit, Typing, Prompt and
// SetTitle work whether or not Run is connected (they use REST only).
type Adapter struct {
	o       Options
	log     *slog.Logger
	s       *discordgo.Session
	http    *http.Transport
	places  *places
	lines   *mentionLines // the mentions waiting to open their thread
	limits  *limiter      // the REST transport's
	buttons *buttonIDs
	conns   *conns
	resume  *resumeURL
	// commands serialises the registrations of application commands.
	commands commandSet
	forms    forms // the forms shown and not answered yet

	// dial opens network connections, for REST and the websocket; tests
	// replace it to make sure nothing but the fake is reached.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// invalidWait is how long to wait before the identify that answers
	// an INVALID_SESSION (invalid.go); tests replace it.
	invalidWait func() time.Duration
	// gatewayTLS, if set, is the TLS configuration of a wss gateway
	// connection (tests trust their server's certificate with it).
	gatewayTLS *tls.Config

	mu          sync.Mutex // guards the fields below
	started     bool       // Run was called with a live context
	run         *running   // the current Run; nil when not running
	bot         string     // the bot's user id, from READY
	app         string     // the application id, from READY
	greeted     bool       // the first READY was logged
	gwSession   string     // the gateway session's id, from the last READY (reacted.dispatch)
	concurrency int        // identify concurrency (GET /gateway/bot); 0 until read

	ready chan struct{} // closed when the first READY has been handled
	// sessions gets a value on each READY (capacity 1): Sessions.
	sessions chan struct{}
	// health is up from READY or RESUMED until the connection drops.
	health channels.Health
}

// running is the state of one Run that event handlers need.
type running struct {
	ctx context.Context
	// work outlives ctx by at most handOver: what a message read before
	// ctx ended still needs (a channel lookup, opening its thread) runs
	// on it, so that the message is handed to h rather than dropped.
	work     context.Context
	stopWork context.CancelFunc
	h        func(context.Context, channels.Inbound)
	lanes    *lanes.Group
	lost     chan struct{} // the gateway connection dropped (capacity 1)
}

var (
	_ channels.Checker     = (*Adapter)(nil)
	_ channels.NewSessions = (*Adapter)(nil)
	_ channels.Adapter     = (*Adapter)(nil)
	_ channels.Editor      = (*Adapter)(nil)
	_ channels.Typer       = (*Adapter)(nil)
	_ channels.Prompter    = (*Adapter)(nil)
	_ channels.Uploader    = (*Adapter)(nil)
	_ channels.Titler      = (*Adapter)(nil)
	_ channels.Carder      = (*Adapter)(nil)
	_ channels.Commander   = (*Adapter)(nil)
	_ channels.Former      = (*Adapter)(nil)
	_ channels.Reactor     = (*Adapter)(nil)
)

// New returns an adapter for o. It does no I/O; Run connects. It returns an
// error when the token is missing or APIBaseURL is not an http(s) URL.
func New(o Options) (*Adapter, error) {
	token := strings.TrimSpace(o.Token)
	if rest, ok := strings.CutPrefix(token, "Bot "); ok {
		token = strings.TrimSpace(rest)
	}
	if token == "" || token == "Bot" {
		return nil, errors.New("discord: the bot token is empty")
	}
	if o.ToolStyle != "" && o.ToolStyle != ToolLines && o.ToolStyle != ToolCard {
		return nil, fmt.Errorf("discord: toolStyle %q: want %q or %q", o.ToolStyle, ToolLines, ToolCard)
	}
	if o.APIBaseURL == "" {
		o.APIBaseURL = DefaultAPIBaseURL
	}
	base, err := url.Parse(o.APIBaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.RawQuery != "" {
		return nil, fmt.Errorf("discord: apiBaseURL %q: want http(s)://host[/prefix]", o.APIBaseURL)
	}
	if o.Shard.Count == 0 {
		o.Shard.Count = 1
	}
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultRetryFor
	}
	if o.Shard.ID < 0 || o.Shard.ID >= o.Shard.Count {
		return nil, fmt.Errorf("discord: shard %d of %d: want 0 ≤ id < count", o.Shard.ID, o.Shard.Count)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{
		o:       o,
		log:     log,
		places:  newPlaces(),
		lines:   newMentionLines(),
		limits:  newLimiter(),
		buttons: newButtonIDs(),
		conns:   newConns(),
		resume:  &resumeURL{},
		ready:   make(chan struct{}),

		sessions:    make(chan struct{}, 1),
		invalidWait: invalidWait,
	}
	a.http = http.DefaultTransport.(*http.Transport).Clone()
	a.http.DialContext = a.dialContext
	tr := &transport{base: base, next: a.http, limits: a.limits, now: time.Now, fallback: a.runContext, gateway: a.resume.lookup}

	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	s.LogLevel = -1 // silent: the adapter logs what matters through slog
	s.StateEnabled = false
	s.SyncEvents = true              // handlers run on discordgo's reader; they only queue
	s.ShouldReconnectOnError = false // Run reconnects, so that it owns the attempts
	s.ShouldRetryOnRateLimit = false
	s.Client = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	s.Dialer = &websocket.Dialer{
		NetDialContext:    a.dialWebsocket,
		NetDialTLSContext: a.dialWebsocketTLS, // which goes through the proxy itself
		HandshakeTimeout:  30 * time.Second,
		Proxy: func(req *http.Request) (*url.URL, error) {
			if err := a.resume.check(req); err != nil {
				return nil, err
			}
			if req.URL.Scheme == "https" {
				return nil, nil
			}
			return http.ProxyFromEnvironment(req)
		},
	}
	s.Identify.Intents = intents(o.DMs)
	s.ShardID, s.ShardCount = o.Shard.ID, o.Shard.Count
	s.AddHandler(a.onEvent)
	a.s = s
	return a, nil
}

// intents are the gateway intents the adapter needs: reactions too (a
// reaction can stop a turn). Message content is privileged: it must be
// enabled for the bot in the Developer Portal.
func intents(dms bool) discordgo.Intent {
	i := discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentMessageContent | discordgo.IntentsGuildMessageReactions
	if dms {
		i |= discordgo.IntentsDirectMessages | discordgo.IntentsDirectMessageReactions
	}
	return i
}

// Limits reports Discord's limits. It does no I/O. MinPostInterval is 0:
// Discord allows short bursts of posts, and the adapter reports a bucket
// Discord says is exhausted as a rate limit before sending anything.
func (a *Adapter) Limits() channels.Limits { return Limits() }

// Run connects to the Discord gateway and delivers what people write and
// click to h until ctx ends; then it closes the connection, waits for its
// goroutines and returns nil. When the connection drops it resumes the
// session, retrying with a backoff of up to a minute. It returns an error
// when Discord refuses the bot for good (a bad token, or the Message
// Content intent not enabled) and when called a second time.
//
// h is called on the adapter's goroutines, in order per thread, with Run's
// context; it should not block for long, or that thread's events wait.
// The messages read before ctx ended are still handed to h (with the
// ended context) before Run returns.
func (a *Adapter) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	if ctx.Err() != nil {
		return nil
	}
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("discord: Run called twice")
	}
	a.started = true
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	r := &running{ctx: ctx, work: work, stopWork: stopWork, h: h, lanes: lanes.New(), lost: make(chan struct{}, 1)}
	a.run = r
	a.mu.Unlock()
	a.health.Set(false, "connecting to the gateway")
	defer a.stop(r)

	backoff := minBackoff
	redirected := false // the last attempt was refused for the resume URL
	for {
		err := a.open(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errResumeElsewhere) {
			if redirected {
				// The gateway lookup was not answered with the resume
				// URL: go where it points rather than loop.
				a.resume.forget()
			}
			redirected = !redirected
			continue // opens again at the resume URL
		}
		redirected = false
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			backoff = minBackoff
			select {
			case <-ctx.Done():
				return nil
			case <-r.lost:
				a.log.Info("discord: gateway connection lost; resuming")
				continue
			}
		}
		if ferr := fatal(err); ferr != nil {
			return ferr
		}
		a.resume.forget() // the next attempt goes to the gateway's URL
		a.log.Warn("discord: cannot connect to the gateway; retrying", "in", backoff, "err", err)
		a.health.Set(false, "cannot connect to the gateway: "+err.Error())
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// open opens the gateway connection (discordgo resumes when it has a
// session). It returns when the connection is ready or failed, and soon
// after ctx ends.
func (a *Adapter) open(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- a.s.Open() }() // waited for below
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		a.conns.closeAll() // unblocks a dial or a read inside Open
		return <-done
	}
}

// handOver bounds the work of handing over, once Run's context ended, the
// messages read before (a lookup, a thread to open): a stopping edge
// publishes them instead of losing them.
const handOver = 10 * time.Second

// stop closes the connection and waits until every goroutine of r ended.
func (a *Adapter) stop(r *running) {
	if err := a.s.Close(); err != nil { // sends a close frame, waits 1 s
		a.log.Debug("discord: closing the gateway connection", "err", err)
	}
	a.conns.closeAll()
	a.mu.Lock()
	a.run = nil
	a.mu.Unlock()
	a.health.Set(false, "not running")
	// The connection is closed: nothing more is read. The messages read
	// before are handed over, within handOver.
	t := time.AfterFunc(handOver, r.stopWork)
	r.lanes.Close()
	t.Stop()
	r.stopWork()
	a.http.CloseIdleConnections()
}

// fatal returns a descriptive error when err means Discord will not accept
// the bot however often it tries, and nil otherwise.
func fatal(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4004:
			return fmt.Errorf("discord: the gateway rejected the bot token (close code 4004): %w", err)
		case 4013, 4014:
			return fmt.Errorf("discord: the gateway refused the intents (close code %d): enable the Message Content intent for the bot in the Developer Portal (Bot → Privileged Gateway Intents): %w", ce.Code, err)
		case 4010, 4011:
			return fmt.Errorf("discord: the gateway refused the shard (close code %d): set channels.discord.shard to an id below a count the bot's guilds allow, the same count on every edge: %w", ce.Code, err)
		case 4012:
			return fmt.Errorf("discord: the gateway refused the connection (close code %d): %w", ce.Code, err)
		}
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil {
		switch re.Response.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("discord: the API rejected the bot token: %w", err)
		}
	}
	return nil
}

// runContext returns the context of the current Run, or Background.
func (a *Adapter) runContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != nil {
		return a.run.ctx
	}
	return context.Background()
}

// current returns the current Run's state, or nil.
func (a *Adapter) current() *running {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.run
}

// botID returns the bot's user id ("" before the first READY).
func (a *Adapter) botID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bot
}

// dialContext opens the network connections of REST requests.
func (a *Adapter) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if a.dial != nil {
		return a.dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// dialWebsocket opens a ws gateway connection (dialGateway), its frames
// watched for op 9 (invalid.go).
func (a *Adapter) dialWebsocket(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := a.dialGateway(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return a.watched(a.runContext(), c), nil
}

// dialGateway opens the TCP connection of the gateway's websocket, once
// its identify may be sent (identifyTurn): it is cancelled when Run ends,
// and tracked, so that Run can close it even while discordgo waits on it.
func (a *Adapter) dialGateway(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(a.runContext(), cancel)
	defer stop()
	if err := a.identifyTurn(ctx); err != nil {
		return nil, err
	}
	c, err := a.dialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return a.conns.track(c), nil
}

// onEvent receives every gateway event, on discordgo's reader goroutine.
// It never blocks: work that may wait goes to the Run's lanes.
func (a *Adapter) onEvent(_ *discordgo.Session, ev any) {
	switch e := ev.(type) {
	case *discordgo.Ready:
		a.onReady(e)
	case *discordgo.Resumed:
		a.log.Info("discord: gateway session resumed")
		a.health.Set(true, "")
	case *discordgo.Disconnect:
		a.health.Set(false, "the gateway connection dropped; reconnecting")
		if r := a.current(); r != nil {
			select {
			case r.lost <- struct{}{}:
			default:
			}
		}
	case *discordgo.GuildCreate:
		if e.Guild != nil {
			for _, c := range e.Channels {
				a.places.put(c, e.ID)
			}
			for _, c := range e.Threads {
				a.places.put(c, e.ID)
			}
		}
	case *discordgo.Event:
		switch e.Type {
		case "READY":
			if r, ok := e.Struct.(*discordgo.Ready); ok {
				a.mu.Lock()
				a.gwSession = r.SessionID
				a.mu.Unlock()
			}
			a.resume.learn(e.RawData)
			a.identified()
		case "MESSAGE_REACTION_ADD", "MESSAGE_REACTION_REMOVE":
			// Read here rather than as their typed events: the raw
			// event has the dispatch's sequence number (reacted.id).
			a.onReactionEvent(e)
		}
		a.learnBotRole(e)
	case *discordgo.ChannelCreate:
		a.places.put(e.Channel, "")
	case *discordgo.ChannelUpdate:
		a.places.put(e.Channel, "")
	case *discordgo.ChannelDelete:
		if e.Channel != nil {
			a.places.forget(e.ID)
			a.onChannelDelete(e.Channel)
		}
	case *discordgo.ThreadCreate:
		a.places.put(e.Channel, "")
	case *discordgo.ThreadUpdate:
		a.places.put(e.Channel, "")
		a.onThreadUpdate(e.Channel)
	case *discordgo.ThreadDelete:
		if e.Channel != nil {
			a.places.forget(e.ID)
			a.onThreadDelete(e.Channel)
		}
	case *discordgo.ThreadListSync:
		for _, c := range e.Threads {
			a.places.put(c, e.GuildID)
		}
	case *discordgo.MessageCreate:
		if e.Message != nil {
			a.onMessage(e.Message)
		}
	case *discordgo.InteractionCreate:
		if e.Interaction != nil {
			a.onInteraction(e.Interaction)
		}
	}
}

// onReady records who the bot is and, the first time, logs the invite URL
// and what the adapter can do.
func (a *Adapter) onReady(r *discordgo.Ready) {
	a.newSession() // before the health says connected, and before the session's events
	if r.User == nil {
		return
	}
	a.mu.Lock()
	a.bot = r.User.ID
	a.app = r.User.ID
	if r.Application != nil && r.Application.ID != "" {
		a.app = r.Application.ID
	}
	first := !a.greeted
	a.greeted = true
	a.health.Set(true, "")
	app := a.app
	a.mu.Unlock()
	caps := "post edit typing prompt title commands forms reactions"
	if a.Cards() {
		caps += " card"
	}
	if !first {
		a.log.Info("discord: gateway session started anew", "bot", r.User.Username)
		return
	}
	close(a.ready)
	if r := a.current(); r != nil {
		r.lanes.Do("commands", func() { a.registerAtStart(r.ctx) })
	}
	a.log.Info("discord: connected",
		"bot", r.User.Username, "id", r.User.ID, "guilds", len(r.Guilds),
		"invite", InviteURL(app),
		"capabilities", caps,
		"dms", a.o.DMs)
}

// Check reports whether the adapter is connected to Discord's gateway.
func (a *Adapter) Check() error { return a.health.Check() }

// learnBotRole finds the role Discord made for the bot in a guild (its
// tags name the bot) in GUILD_CREATE and GUILD_ROLE_CREATE/UPDATE. It
// reads the raw event, since discordgo's Role has no tags.
func (a *Adapter) learnBotRole(e *discordgo.Event) {
	type role struct {
		ID   string `json:"id"`
		Tags *struct {
			BotID string `json:"bot_id"`
		} `json:"tags"`
	}
	var roles []role
	var guild string
	switch e.Type {
	case "GUILD_CREATE":
		var g struct {
			ID    string `json:"id"`
			Roles []role `json:"roles"`
		}
		if json.Unmarshal(e.RawData, &g) != nil {
			return
		}
		guild, roles = g.ID, g.Roles
	case "GUILD_ROLE_CREATE", "GUILD_ROLE_UPDATE":
		var u struct {
			GuildID string `json:"guild_id"`
			Role    role   `json:"role"`
		}
		if json.Unmarshal(e.RawData, &u) != nil {
			return
		}
		guild, roles = u.GuildID, []role{u.Role}
	default:
		return
	}
	bot := a.botID()
	for _, r := range roles {
		if guild != "" && bot != "" && r.ID != "" && r.Tags != nil && r.Tags.BotID == bot {
			a.places.setBotRole(guild, r.ID)
		}
	}
}

// conns tracks the gateway's network connections so Run can close them.
type conns struct {
	mu     sync.Mutex // guards the fields below
	set    map[*trackedConn]struct{}
	closed bool // closeAll was called: Run is ending
}

func newConns() *conns { return &conns{set: map[*trackedConn]struct{}{}} }

// track returns nc, tracked. A connection dialled after closeAll is closed
// at once, so a dial that raced with the end of Run cannot hang Open.
func (c *conns) track(nc net.Conn) net.Conn {
	t := &trackedConn{Conn: nc, owner: c}
	c.mu.Lock()
	closed := c.closed
	c.set[t] = struct{}{}
	c.mu.Unlock()
	if closed {
		t.Close()
	}
	return t
}

// closeAll closes every tracked connection, and those tracked later.
func (c *conns) closeAll() {
	c.mu.Lock()
	c.closed = true
	all := make([]*trackedConn, 0, len(c.set))
	for t := range c.set {
		all = append(all, t)
	}
	c.mu.Unlock()
	for _, t := range all {
		t.Close()
	}
}

// trackedConn forgets itself when closed.
type trackedConn struct {
	net.Conn
	owner *conns
	once  sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.owner.mu.Lock()
		delete(t.owner.set, t)
		t.owner.mu.Unlock()
	})
	return t.Conn.Close()
}
