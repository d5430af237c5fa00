package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// fakeDiscord is a local Discord: the REST API under /api/v9 and the gateway
// websocket, with one guild, one text channel in it, and one thread the bot
// opened there. It keeps every message's current content, records every
// request, and lets tests inject failures, drop the gateway connection and
// ask the client to reconnect. It is safe for concurrent use.
type fakeDiscord struct {
	t     testing.TB
	srv   *httptest.Server
	addr  string // host:port of srv
	token string // the Authorization header clients must send
	// pipes, if set, is where srv listens instead of a TCP port: in
	// memory, so that the fake runs inside a synctest bubble
	// (newVirtualFake).
	pipes *pipeListener

	bot     fakeUser
	botRole string // the role Discord made for the bot in guild
	app     string
	guild   string
	channel string // a text channel of guild
	thread  string // a public thread in channel, opened by the bot
	dm      string // a DM channel with a person

	mu            sync.Mutex // guards the fields below
	next          int64
	chans         map[string]*fakeChannel
	msgs          map[string]*fakeMessage
	requests      []fakeRequest
	typing        map[string]time.Time
	interactions  map[string]*fakeInteraction // by token
	appCommands   map[string][]fakeAppCommand // registered, by guild ("" global)
	commandPuts   int                         // bulk overwrites
	intents       discordIntent               // of the last identify
	reactions     map[string][]string         // the bot's reactions by message id
	followups     []fakeFollowup
	violations    []string // protocol misuse seen, for tests to assert none
	injections    []*injection
	holds         []*hold             // answers to hold back (fakehold_test.go)
	files         map[string]fakeFile // attachments by URL path
	downloads     int                 // requests for attachments
	historyReads  int                 // GET /channels/{id}/messages
	messageReads  int                 // GET /channels/{id}/messages/{message}
	requireIntent discordIntent
	clock         func() time.Time       // rate limits' time; nil: no rate limits
	windows       map[string]*fakeWindow // rate-limit windows by bucket and channel
	limited       int                    // 429s the rate limits answered
	limitedLog    []string               // what they answered 429 to, and when
	global        *fakeWindow            // the global limit's second; nil: no global limit
	globalLimited int                    // 429s of the global limit
	outage        outageMode             // the REST API is down while set
	outageHits    int                    // REST requests that met the outage

	// gateway state
	session    string
	log        [][]byte // dispatches of the session, seq = index+1
	backlog    []fakeDispatch
	conn       *fakeConn // the connection that identified or resumed
	conns      map[*fakeConn]bool
	identifies int
	resumes    int
	hellos     int
	heartbeats int

	// resume failures (fakeresume_test.go)
	refuseResumes int  // RESUMEs still to answer INVALID_SESSION
	resumeDown    bool // the resume URL refuses connections
	gatewayDown   bool // every gateway URL refuses connections
	invalidated   int  // RESUMEs answered INVALID_SESSION on purpose
	replay        int  // the next RESUME replays this many dispatches the client had already

	// shards (fakeshard_test.go)
	shards shardState

	changed chan struct{} // closed and replaced on every change
}

// discordIntent is a gateway intent bit set (the fake's copy, so tests do
// not lean on the adapter's constants).
type discordIntent int

const intentMessageContent discordIntent = 1 << 15

type fakeUser struct {
	ID    string
	Name  string
	Bot   bool
	Roles []string
}

type fakeChannel struct {
	ID       string
	Type     int
	Guild    string
	Parent   string
	Owner    string
	Name     string
	Archived bool
}

type fakeMessage struct {
	ID         string
	Channel    string
	Author     fakeUser
	Content    string
	Components json.RawMessage
	Flags      int
	Edits      int
	History    []string // every content it had, first to last
	ReplyTo    string   // the message it answers, if any
	// Type is Discord's message type: 0, or 21 (THREAD_STARTER_MESSAGE,
	// the first message of a thread started from a channel message,
	// which Starter names: the thread's own id, in the parent channel).
	Type    int
	Starter string
	// Files are the files the bot attached.
	Files []fakeFile
	// Time is when it was sent (its "timestamp").
	Time time.Time
	// Posted is when the bot posted it, by the fake's clock.
	Posted time.Time
}

type fakeRequest struct {
	Method string
	Path   string
	Body   []byte
	At     time.Time // the fake's time: virtual under limitRates
}

type fakeInteraction struct {
	ID      string
	Token   string
	Sent    time.Time
	Acked   time.Time
	AckType int
	First   string // the first request about it: "ack", "followup" or "edit"
	Message string // the message whose button was clicked
	AckBody []byte // the body of the interaction's response
	// Original is the content the deferred response was edited to.
	Original *string
}

type fakeFollowup struct {
	Token   string
	Content string
	Flags   int
	Body    []byte
}

// injection makes the next n requests matching method and a path part
// fail with status and body.
type injection struct {
	method string
	path   string // substring of the URL path
	n      int
	status int
	body   string
	header http.Header
}

type fakeDispatch struct {
	t string
	d any
}

// newFake starts a fake Discord; t's cleanup stops it.
func newFake(t testing.TB) *fakeDiscord {
	f, mux := buildFake(t)
	f.srv = httptest.NewServer(mux)
	f.addr = f.srv.Listener.Addr().String()
	t.Cleanup(f.close)
	return f
}

// buildFake returns a fake Discord and its handler, not serving yet.
func buildFake(t testing.TB) (*fakeDiscord, *http.ServeMux) {
	f := &fakeDiscord{
		t:             t,
		token:         "Bot test-token",
		bot:           fakeUser{ID: "900000000000000001", Name: "gatewaybot", Bot: true},
		app:           "900000000000000001",
		botRole:       "700000000000000900",
		next:          1100000000000000000,
		chans:         map[string]*fakeChannel{},
		msgs:          map[string]*fakeMessage{},
		files:         map[string]fakeFile{},
		typing:        map[string]time.Time{},
		windows:       map[string]*fakeWindow{},
		interactions:  map[string]*fakeInteraction{},
		conns:         map[*fakeConn]bool{},
		changed:       make(chan struct{}),
		requireIntent: intentMessageContent,
	}
	f.guild = f.newIDLocked()
	f.channel = f.newIDLocked()
	f.thread = f.newIDLocked()
	f.dm = f.newIDLocked()
	f.chans[f.channel] = &fakeChannel{ID: f.channel, Type: 0, Guild: f.guild, Name: "general"}
	f.chans[f.thread] = &fakeChannel{ID: f.thread, Type: 11, Guild: f.guild, Parent: f.channel, Owner: f.bot.ID, Name: "earlier session"}
	f.chans[f.dm] = &fakeChannel{ID: f.dm, Type: 1}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /gateway/{$}", f.serveGateway)
	mux.HandleFunc("GET "+resumePath+"/{$}", f.serveGateway)
	mux.HandleFunc("/api/v9/", f.serveAPI)
	mux.HandleFunc("GET /attachments/", f.serveFile)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.violate("request outside the API: %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	return f, mux
}

// close drops every gateway connection and stops the server.
func (f *fakeDiscord) close() {
	f.mu.Lock()
	var all []*fakeConn
	for c := range f.conns {
		all = append(all, c)
	}
	f.mu.Unlock()
	for _, c := range all {
		c.ws.Close()
	}
	f.srv.Close()
}

// URL is the base URL of the fake, for Options.APIBaseURL.
func (f *fakeDiscord) URL() string { return f.srv.URL }

// adapter returns an adapter that talks to the fake only: a dial to any
// other address fails the test.
func (f *fakeDiscord) adapter(t testing.TB, o Options) *Adapter {
	t.Helper()
	o.Token = "test-token"
	o.APIBaseURL = f.URL()
	a, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != f.addr {
			t.Errorf("the adapter dialled %s %s; only the fake at %s may be reached", network, addr, f.addr)
			return nil, fmt.Errorf("test: dial to %s refused", addr)
		}
		if f.pipes != nil {
			return f.pipes.dial(ctx)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	// No real 1–5 s before the identify after an INVALID_SESSION: the
	// wait is tested in virtual time (TestInvalidSessionWaitsAndTakesTheTurn).
	a.invalidWait = func() time.Duration { return 0 }
	return a
}

// threadRef is the ThreadRef of the fake's thread.
func (f *fakeDiscord) threadRef() channels.ThreadRef {
	return channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: f.thread}
}

func (f *fakeDiscord) newIDLocked() string {
	f.next++
	return strconv.FormatInt(f.next, 10)
}

// changedLocked wakes every waiter.
func (f *fakeDiscord) changedLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// waitFor waits until ok (called with f.mu held) is true, or fails t when
// ctx ends first.
func (f *fakeDiscord) waitFor(ctx context.Context, what string, ok func() bool) {
	f.t.Helper()
	for {
		f.mu.Lock()
		done := ok()
		ch := f.changed
		f.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			f.t.Fatalf("fake discord: waiting for %s: %v", what, ctx.Err())
		}
	}
}

func (f *fakeDiscord) violate(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
	f.changedLocked()
}

// Violations returns the protocol misuse the fake saw.
func (f *fakeDiscord) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.violations...)
}

// outageMode is how the fake's REST API fails while it is down.
type outageMode string

const (
	outageNone outageMode = ""
	// outage503 answers every request 503 Service Unavailable.
	outage503 outageMode = "503"
	// outageDrop closes every request's connection without an answer.
	outageDrop outageMode = "drop"
)

// setOutage takes the REST API down (or, with outageNone, back up). A
// request met by the outage does nothing.
func (f *fakeDiscord) setOutage(m outageMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.outage = m
	f.changedLocked()
}

// failDuringOutage answers r as the outage says and reports whether it
// did.
func (f *fakeDiscord) failDuringOutage(w http.ResponseWriter) bool {
	f.mu.Lock()
	m := f.outage
	if m != outageNone {
		f.outageHits++
	}
	f.mu.Unlock()
	switch m {
	case outage503:
		writeError(w, http.StatusServiceUnavailable, 0, "503: Service Unavailable")
	case outageDrop:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("fake discord: hijack: %v", err)
			return true
		}
		conn.Close()
	default:
		return false
	}
	return true
}

// inject makes the next n requests with method whose path contains path
// answer status and body.
func (f *fakeDiscord) inject(method, path string, n, status int, body string, header http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injections = append(f.injections, &injection{method: method, path: path, n: n, status: status, body: body, header: header})
}

// content returns what a person sees of message id.
func (f *fakeDiscord) content(id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.msgs[id]
	if !ok {
		return "", fmt.Errorf("fake discord: no message %s", id)
	}
	return m.Content, nil
}

// message returns a copy of message id.
func (f *fakeDiscord) message(id string) (fakeMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.msgs[id]
	if !ok {
		return fakeMessage{}, false
	}
	c := *m
	c.History = append([]string(nil), m.History...)
	return c, true
}

// botMessages returns the bot's messages in channel, in post order.
func (f *fakeDiscord) botMessages(channel string) []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.botMessagesLocked(channel)
}

func (f *fakeDiscord) botMessagesLocked(channel string) []fakeMessage {
	var out []fakeMessage
	for _, m := range f.msgs {
		if m.Channel == channel && m.Author.ID == f.bot.ID {
			out = append(out, *m)
		}
	}
	// ids grow with time
	sortByID(out)
	return out
}

func sortByID(ms []fakeMessage) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && idLess(ms[j].ID, ms[j-1].ID); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func idLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// requestsMatching returns the recorded requests with method whose path
// contains path.
func (f *fakeDiscord) requestsMatching(method, path string) []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRequest
	for _, r := range f.requests {
		if r.Method == method && strings.Contains(r.Path, path) {
			out = append(out, r)
		}
	}
	return out
}

// typingShown reports whether the bot's typing indicator shows in channel
// now: a typing call lasts ten seconds, or until the bot posts there.
func (f *fakeDiscord) typingShown(channel string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.typing[channel]
	return ok && f.nowLocked().Sub(at) < 10*time.Second
}

// nowLocked is the fake's time: the clock of limitRates, if set.
func (f *fakeDiscord) nowLocked() time.Time {
	if f.clock != nil {
		return f.clock()
	}
	return time.Now()
}

// say makes person write text in channel (a thread, the text channel or
// the DM), mentioning the bot when mention is set, and returns the
// message id.
func (f *fakeDiscord) say(who fakeUser, channel, text string, mention bool) string {
	content := text
	var mentions []map[string]any
	if mention {
		content = "<@" + f.bot.ID + "> " + text
		mentions = append(mentions, userJSON(f.bot))
	}
	return f.send(who, channel, content, mentions, nil, nil)
}

// fakeFile is an attachment the fake serves under /attachments/.
type fakeFile struct {
	Name, ContentType string
	Body              []byte
	Size              int // as the attachment says; len(Body) when 0
}

// sayWithFiles is say with attachments, served by the fake as Discord's
// CDN would.
func (f *fakeDiscord) sayWithFiles(who fakeUser, channel, text string, mention bool, files ...fakeFile) string {
	content := text
	var mentions []map[string]any
	if mention {
		content = "<@" + f.bot.ID + "> " + text
		mentions = append(mentions, userJSON(f.bot))
	}
	f.mu.Lock()
	var atts []map[string]any
	for _, file := range files {
		id := f.newIDLocked()
		f.files["/attachments/"+id+"/"+file.Name] = file
		size := file.Size
		if size == 0 {
			size = len(file.Body)
		}
		at := map[string]any{"id": id, "filename": file.Name, "size": size, "url": f.srv.URL + "/attachments/" + id + "/" + file.Name}
		if file.ContentType != "" {
			at["content_type"] = file.ContentType
		}
		atts = append(atts, at)
	}
	f.mu.Unlock()
	return f.send(who, channel, content, mentions, nil, atts)
}

// serveFile serves an attachment; it refuses requests that carry the
// bot's token, which must never leave for the CDN.
func (f *fakeDiscord) serveFile(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		f.violate("attachment fetched with an Authorization header")
	}
	f.mu.Lock()
	file, ok := f.files[r.URL.Path]
	f.downloads++
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if file.ContentType != "" {
		w.Header().Set("Content-Type", file.ContentType)
	}
	w.Write(file.Body)
}

// sayToRole is say with a mention of the bot's role rather than the bot,
// as Discord's autocomplete often makes it.
func (f *fakeDiscord) sayToRole(who fakeUser, channel, text string) string {
	return f.send(who, channel, "<@&"+f.botRole+"> "+text, nil, []string{f.botRole}, nil)
}

// send dispatches a MESSAGE_CREATE from who and returns its id.
func (f *fakeDiscord) send(who fakeUser, channel, content string, mentions []map[string]any, roles []string, attachments []map[string]any) string {
	f.mu.Lock()
	id := f.newIDLocked()
	ch := f.chans[channel]
	now := time.Now().UTC().Truncate(time.Second)
	f.msgs[id] = &fakeMessage{ID: id, Channel: channel, Author: who, Content: content, History: []string{content}, Time: now}
	d := map[string]any{
		"id":            id,
		"channel_id":    channel,
		"author":        userJSON(who),
		"content":       content,
		"mentions":      mentions,
		"mention_roles": nonNil(roles),
		"attachments":   nonNil(attachments),
		"type":          0,
		"timestamp":     now.Format(time.RFC3339),
	}
	if ch != nil && ch.Guild != "" {
		d["guild_id"] = ch.Guild
		d["member"] = map[string]any{"roles": nonNil(who.Roles)}
	}
	f.dispatchLocked("MESSAGE_CREATE", d)
	f.mu.Unlock()
	return id
}

// click makes person click the button customID of message msg in channel
// and returns the interaction's token.
func (f *fakeDiscord) click(who fakeUser, channel, msg, customID string) string {
	return f.component(who, channel, msg, map[string]any{"custom_id": customID, "component_type": 2})
}

// pick makes person pick value in the select menu customID of message msg
// in channel and returns the interaction's token.
func (f *fakeDiscord) pick(who fakeUser, channel, msg, customID, value string) string {
	return f.component(who, channel, msg, map[string]any{"custom_id": customID, "component_type": 3, "values": []string{value}})
}

// component dispatches a component interaction with data on message msg.
func (f *fakeDiscord) component(who fakeUser, channel, msg string, data map[string]any) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newIDLocked()
	token := "itoken-" + id
	f.interactions[token] = &fakeInteraction{ID: id, Token: token, Sent: time.Now(), Message: msg}
	d := map[string]any{
		"id":             id,
		"application_id": f.app,
		"type":           3,
		"token":          token,
		"version":        1,
		"channel_id":     channel,
		"data":           data,
		"message":        map[string]any{"id": msg, "channel_id": channel, "content": "", "type": 0},
	}
	if ch := f.chans[channel]; ch != nil && ch.Guild != "" {
		d["guild_id"] = ch.Guild
		d["member"] = map[string]any{"user": userJSON(who), "roles": nonNil(who.Roles)}
	} else {
		d["user"] = userJSON(who)
	}
	f.dispatchLocked("INTERACTION_CREATE", d)
	return token
}

// interaction returns a copy of the interaction with token.
func (f *fakeDiscord) interaction(token string) fakeInteraction {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in := f.interactions[token]; in != nil {
		return *in
	}
	return fakeInteraction{}
}

// followupsFor returns the follow-ups of interaction token.
func (f *fakeDiscord) followupsFor(token string) []fakeFollowup {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeFollowup
	for _, fu := range f.followups {
		if fu.Token == token {
			out = append(out, fu)
		}
	}
	return out
}

// archive archives a thread.
func (f *fakeDiscord) archive(thread string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chans[thread].Archived = true
}

func (f *fakeDiscord) channelCopy(id string) (fakeChannel, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.chans[id]
	if !ok {
		return fakeChannel{}, false
	}
	return *c, true
}
