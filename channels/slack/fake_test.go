package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// fakeSlack is a local Slack: the Web API methods the adapter calls and
// the Socket Mode websocket, with what people see kept as state. It
// records every Web API call, answers the way Slack does (including its
// errors), echoes the app's own posts and edits as events the way Slack
// does, and lets tests inject failures.
type fakeSlack struct {
	t                  testing.TB
	team, appID        string
	botUser, botID     string
	appToken, botToken string
	o                  fakeOptions
	srv                *httptest.Server // nil for an in-memory fake
	handler            http.Handler
	// sink, when set (before the fake is used), takes every envelope
	// instead of a Socket Mode connection: a test in a synctest bubble
	// hands it to the adapter's inbound path in memory.
	sink func(env map[string]any)

	mu         sync.Mutex // guards the fields below
	calls      []apiCall
	postTokens map[string]postBucket   // channelLimit: channel → its bucket
	limited    int                     // 429s answered for the channel limit
	tierState  fakeTierState           // tiers: the methods' counts
	msgs       map[string]*fakeMessage // channel/ts → message
	ephemerals []fakeEphemeral
	status     map[string]fakeStatus // channel/thread → status line
	titles     map[string]string     // channel/thread → agent session title
	users      map[string]string     // user id → display name
	groups     map[string][]string   // user group id → members
	channels   map[string]bool
	fails      map[string][]failure   // method → failures to answer next calls with
	files      map[string]fakeFile    // shared files by download path
	uploads    map[string]*fakeUpload // files the app uploads, by id
	downloads  int                    // requests for shared files
	seq        int                    // for ts, event and envelope ids
	conn       *fakeConn              // the current Socket Mode connection
	opens      int                    // apps.connections.open calls
	acks       map[string]time.Time   // envelope id → when acknowledged
	sockets    socketsState           // every open connection (fakesockets_test.go)
	changed    chan struct{}          // closed and replaced on every change
	outage     outageMode             // the Web API is down while set
	outageHits int                    // Web API calls that met the outage

	// users.info calls held until the test releases them
	stalls  map[string]chan struct{} // user id → closed when its calls may answer
	stalled map[string]int           // user id → calls that met a stall
	// threads of the events sent, in order: where the adapter's lanes run
	eventThreads []eventThread
	triggers     map[string]string // trigger_id of a click → its user, until used
	views        []fakeView        // modals opened (views.open)
	ackPayloads  map[string]json.RawMessage
	reactions    map[string][]string // channel/ts → the app's reactions (names)

	sessionStatus map[string]string // channel/thread → agent session status
}

// fakeView is a modal the app opened for a person.
type fakeView struct {
	ID, User string
	View     json.RawMessage
}

// eventThread is the thread of a sent event: the thread_ts it names,
// else its own ts.
type eventThread struct {
	channel, kind, thread string
}

// outageMode is how the fake's Web API fails while it is down.
type outageMode string

const (
	outageNone outageMode = ""
	// outage503 answers every call 503 Service Unavailable.
	outage503 outageMode = "503"
	// outageDrop closes every call's connection without an answer.
	outageDrop outageMode = "drop"
)

// setOutage takes the Web API down (or, with outageNone, back up). A
// call met by the outage does nothing.
func (f *fakeSlack) setOutage(m outageMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.outage = m
	f.notifyLocked()
}

// failDuringOutage answers the call as the outage says and reports
// whether it did.
func (f *fakeSlack) failDuringOutage(w http.ResponseWriter) bool {
	f.mu.Lock()
	m := f.outage
	if m != outageNone {
		f.outageHits++
	}
	f.mu.Unlock()
	switch m {
	case outage503:
		w.WriteHeader(http.StatusServiceUnavailable)
	case outageDrop:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("fake slack: hijack: %v", err)
			return true
		}
		conn.Close()
	default:
		return false
	}
	return true
}

type fakeOptions struct {
	// statusOff makes assistant.threads.setStatus answer missing_scope.
	statusOff bool
	// scopes is the x-oauth-scopes header of auth.test ("" for the
	// default list).
	scopes string
	// mentionFirst sends a mention's app_mention event before its
	// message event.
	mentionFirst bool
	// noEcho stops the echo of the app's own posts and edits.
	noEcho bool
	// streams makes the fake know chat.startStream and its kin (without,
	// they answer unknown_method, as in a workspace that cannot stream).
	streams bool
	// stream says how streams expire.
	stream fakeStreams
	// sockets lets several Socket Mode connections share the app: each
	// envelope goes to one of them at random (fakesockets_test.go).
	sockets bool
	// channelLimit limits chat.postMessage per channel as Slack does
	// (about one a second, short bursts allowed): a call beyond it gets
	// a 429 with Retry-After, counted by limited.
	channelLimit bool
	// tiers limits the methods by Slack's tiers (faketiers_test.go).
	tiers bool
}

// apiCall is one recorded Web API call.
type apiCall struct {
	Method string
	Form   url.Values // form-encoded body (token removed)
	JSON   []byte     // JSON body, if any
	At     time.Time
}

type fakeMessage struct {
	Channel, TS, ThreadTS string
	Text                  string
	Blocks                json.RawMessage // nil: none
	User, BotID           string
	// Files are the files the app shared with the message
	// (files.completeUploadExternal; Text is the initial comment).
	Files []fakeUpload
	// Markdown: Text is Markdown (markdown_text), not mrkdwn.
	Markdown bool
	// Stream is set for a message started with chat.startStream.
	Stream *fakeStream
	// Metadata is the message's metadata (chat.postMessage, chat.update
	// with metadata), nil: none.
	Metadata json.RawMessage
}

// fakeUpload is a file the app uploaded (files.getUploadURLExternal, then
// a POST to its upload URL).
type fakeUpload struct {
	ID, Name, Title, ContentType string
	Length                       int // as files.getUploadURLExternal said
	Body                         []byte
	Uploaded, Shared             bool
}

type fakeEphemeral struct {
	Channel, User, ThreadTS, Text string
}

type fakeStatus struct {
	text string
	at   time.Time
}

// failure is an answer injected for one call.
type failure struct {
	status     int    // HTTP status; 0 means 200 with slackErr
	retryAfter string // Retry-After header of a 429, "" for none
	slackErr   string // Slack error code of an ok:false answer
}

const (
	fakeChannel = "C0FAKE"
	fakeThread  = "1700000000.000001" // a message that starts a thread
)

// newFake starts a fake Slack with an HTTP server; it stops with the test.
func newFake(t testing.TB, o fakeOptions) *fakeSlack {
	t.Helper()
	f := newFakeState(t, o)
	f.srv = httptest.NewServer(f.handler)
	t.Cleanup(f.close)
	return f
}

// newFakeState returns a fake without a server, for in-memory transports.
func newFakeState(t testing.TB, o fakeOptions) *fakeSlack {
	f := &fakeSlack{
		t: t, team: "T0FAKE", appID: "A0FAKE", botUser: "U0BOT", botID: "B0BOT",
		appToken: "xapp-1-fake", botToken: "xoxb-fake", o: o,
		msgs:     map[string]*fakeMessage{},
		status:   map[string]fakeStatus{},
		users:    map[string]string{},
		groups:   map[string][]string{},
		channels: map[string]bool{fakeChannel: true, "C0OTHER": true, "D0DM": true},
		fails:    map[string][]failure{},
		files:    map[string]fakeFile{},
		uploads:  map[string]*fakeUpload{},
		acks:     map[string]time.Time{},
		stalls:   map[string]chan struct{}{},
		stalled:  map[string]int{},
		changed:  make(chan struct{}),

		triggers:    map[string]string{},
		ackPayloads: map[string]json.RawMessage{},
		reactions:   map[string][]string{},
	}
	f.msgs[fakeChannel+"/"+fakeThread] = &fakeMessage{Channel: fakeChannel, TS: fakeThread, Text: "the thread's first message", User: "U0ANN"}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", f.serveAPI)
	mux.HandleFunc("/link/", f.serveSocket)
	mux.HandleFunc("GET /files-pri/", f.serveFile)
	mux.HandleFunc("POST /upload/", f.serveUpload)
	f.handler = mux
	return f
}

// close drops the socket and stops the server.
func (f *fakeSlack) close() {
	f.drop()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// adapter returns an adapter pointed at the fake.
func (f *fakeSlack) adapter(t testing.TB, o Options) *Adapter {
	t.Helper()
	o.AppToken, o.BotToken = f.appToken, f.botToken
	if o.PostInterval == 0 {
		o.PostInterval = -1 // tests that pace on purpose set it
	}
	if o.APIURL == "" && f.srv != nil {
		o.APIURL = f.srv.URL + "/api" // without the trailing slash: New adds it
	}
	a, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// notifyLocked wakes the waiters.
func (f *fakeSlack) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// waitFor waits until cond (called with f.mu held) is true.
func (f *fakeSlack) waitFor(ctx context.Context, what string, cond func() bool) error {
	for {
		f.mu.Lock()
		ok := cond()
		ch := f.changed
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("fake slack: waiting for %s: %w", what, ctx.Err())
		}
	}
}

func (f *fakeSlack) nextLocked() int {
	f.seq++
	return f.seq
}

// newTSLocked returns a new message timestamp.
func (f *fakeSlack) newTSLocked() string {
	return fmt.Sprintf("1700000100.%06d", f.nextLocked())
}

// failNext makes the next calls of method fail, one failure per call.
func (f *fakeSlack) failNext(method string, fl ...failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails[method] = append(f.fails[method], fl...)
}

func (f *fakeSlack) addUser(id, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[id] = name
}

// addChannel makes channel id one the bot is in.
func (f *fakeSlack) addChannel(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.channels[id] = true
}

// stallUser holds every users.info call about user id (until the call's
// request ends) until release is called.
func (f *fakeSlack) stallUser(id string) (release func()) {
	hold := make(chan struct{})
	f.mu.Lock()
	f.stalls[id] = hold
	f.mu.Unlock()
	return sync.OnceFunc(func() {
		f.mu.Lock()
		delete(f.stalls, id)
		f.mu.Unlock()
		close(hold)
	})
}

// waitStalled waits until a users.info call about user id is held.
func (f *fakeSlack) waitStalled(ctx context.Context, id string) error {
	return f.waitFor(ctx, "a stalled users.info of "+id, func() bool { return f.stalled[id] > 0 })
}

// callsTo returns the recorded calls of method.
func (f *fakeSlack) callsTo(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// message returns a copy of a message.
func (f *fakeSlack) message(channel, ts string) (fakeMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.msgs[channel+"/"+ts]
	if !ok {
		return fakeMessage{}, false
	}
	return *m, true
}

// seen returns what a person sees of a message: its text with Slack's
// entities decoded.
func (f *fakeSlack) seen(channel, ts string) (string, error) {
	if msg, key, chunk := strings.Cut(ts, taskSep); chunk {
		return f.seenChunk(channel, msg, key)
	}
	m, ok := f.message(channel, ts)
	if !ok {
		return "", fmt.Errorf("fake slack: no message %s in %s", ts, channel)
	}
	return unescape(m.Text), nil
}

// thread returns the app's messages in a thread, in order of posting.
func (f *fakeSlack) thread(channel, thread string) []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeMessage
	for _, m := range f.msgs {
		if m.Channel == channel && m.ThreadTS == thread && m.BotID == f.botID {
			out = append(out, *m)
		}
	}
	sortByTS(out)
	return out
}

func sortByTS(ms []fakeMessage) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].TS < ms[j-1].TS; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func (f *fakeSlack) ephemeralsTo(user string) []fakeEphemeral {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeEphemeral
	for _, e := range f.ephemerals {
		if e.User == user {
			out = append(out, e)
		}
	}
	return out
}

// statusShown reports whether a person sees the thread's status line:
// it was set, not cleared, and less than two minutes ago.
func (f *fakeSlack) statusShown(channel, thread string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statusShownLocked(channel, thread)
}

func (f *fakeSlack) statusShownLocked(channel, thread string) bool {
	s, ok := f.status[channel+"/"+thread]
	return ok && s.text != "" && time.Since(s.at) < 2*time.Minute
}

// ---- Web API ----

func (f *fakeSlack) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	body, _ := io.ReadAll(r.Body)
	if f.failDuringOutage(w) {
		return
	}
	call := apiCall{Method: method, At: time.Now()}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		call.JSON = body
	} else {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if tk := form.Get("token"); tk != "" {
			token = tk
		}
		form.Del("token")
		call.Form = form
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	var fl *failure
	if q := f.fails[method]; len(q) > 0 {
		fl = &q[0]
		f.fails[method] = q[1:]
	}
	f.notifyLocked()
	f.mu.Unlock()

	if fl != nil {
		if fl.status != 0 {
			if fl.retryAfter != "" {
				w.Header().Set("Retry-After", fl.retryAfter)
			}
			w.WriteHeader(fl.status)
			return
		}
		writeJSON(w, map[string]any{"ok": false, "error": fl.slackErr})
		return
	}
	want := f.botToken
	if method == "apps.connections.open" {
		want = f.appToken
	}
	if token != want {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	if !f.admit(w, method, call) {
		return // a 429 (faketiers_test.go)
	}
	form := call.Form
	if f.serveStream(w, method, form) {
		return
	}
	switch method {
	case "auth.test":
		scopes := f.o.scopes
		if scopes == "" {
			scopes = "app_mentions:read,channels:history,groups:history,im:history,mpim:history,chat:write,assistant:write,users:read,files:read,files:write,reactions:read,reactions:write,channels:read,groups:read"
		}
		w.Header().Set("X-OAuth-Scopes", scopes)
		writeJSON(w, map[string]any{"ok": true, "url": "https://fake.slack.com/", "team": "Fake", "user": "gateway",
			"team_id": f.team, "user_id": f.botUser, "bot_id": f.botID})
	case "apps.connections.open":
		f.mu.Lock()
		f.opens++
		n := f.opens
		f.mu.Unlock()
		u := "ws" + strings.TrimPrefix(f.srvURL(), "http") + fmt.Sprintf("/link/?ticket=%d", n)
		writeJSON(w, map[string]any{"ok": true, "url": u})
	case "reactions.add", "reactions.remove":
		f.reactTo(w, method == "reactions.remove", form)
	case "views.open":
		f.openView(w, call.JSON)
	case "chat.postMessage":
		f.postMessage(w, form)
	case "files.getUploadURLExternal":
		f.getUploadURL(w, form)
	case "files.completeUploadExternal":
		f.completeUpload(w, form)
	case "chat.update":
		f.update(w, form)
	case "chat.postEphemeral":
		f.mu.Lock()
		f.ephemerals = append(f.ephemerals, fakeEphemeral{Channel: form.Get("channel"), User: form.Get("user"), ThreadTS: form.Get("thread_ts"), Text: form.Get("text")})
		ts := f.newTSLocked()
		f.notifyLocked()
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true, "message_ts": ts})
	case "assistant.threads.setStatus":
		f.setStatus(w, form)
	case "users.info":
		f.mu.Lock()
		hold, held := f.stalls[form.Get("user")]
		if held {
			f.stalled[form.Get("user")]++
			f.notifyLocked()
		}
		f.mu.Unlock()
		if held {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		f.mu.Lock()
		name, ok := f.users[form.Get("user")]
		f.mu.Unlock()
		if !ok {
			writeJSON(w, map[string]any{"ok": false, "error": "user_not_found"})
			return
		}
		id := form.Get("user")
		writeJSON(w, map[string]any{"ok": true, "user": map[string]any{
			"id": id, "team_id": f.team, "name": strings.ToLower(name), "real_name": name + " Real",
			"profile": map[string]any{"display_name": name, "real_name": name + " Real"},
		}})
	case "conversations.replies":
		f.replies(w, form)
	case "usergroups.list":
		f.mu.Lock()
		var groups []map[string]any
		for id, members := range f.groups {
			groups = append(groups, map[string]any{"id": id, "team_id": f.team, "name": id, "handle": strings.ToLower(id), "users": members})
		}
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true, "usergroups": groups})
	default:
		writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// serveFile serves a shared file to the bot token; anyone else gets the
// sign-in page (200, HTML), as from Slack.
func (f *fakeSlack) serveFile(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	file, ok := f.files[r.URL.Path]
	f.downloads++
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+f.botToken {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><body>Sign in to Slack</body></html>")
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", file.mimetype)
	w.Write(file.body)
}

func (f *fakeSlack) srvURL() string {
	if f.srv == nil {
		return "http://fake.invalid"
	}
	return f.srv.URL
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// maxFakeText is where the fake answers msg_too_long.
const maxFakeText = 4000

func (f *fakeSlack) postMessage(w http.ResponseWriter, form url.Values) {
	ch, text, thread := form.Get("channel"), form.Get("text"), form.Get("thread_ts")
	f.mu.Lock()
	switch {
	case !f.channels[ch]:
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	case text == "" && form.Get("blocks") == "":
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "no_text"})
		return
	case utf8.RuneCountInString(text) > maxFakeText:
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "msg_too_long"})
		return
	}
	md, bad := fakeMetadata(form)
	if bad != "" {
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": bad})
		return
	}
	m := &fakeMessage{Channel: ch, TS: f.newTSLocked(), ThreadTS: thread, Text: text, User: f.botUser, BotID: f.botID, Metadata: md}
	if b := form.Get("blocks"); b != "" && b != "[]" {
		m.Blocks = json.RawMessage(b)
	}
	f.msgs[ch+"/"+m.TS] = m
	if thread != "" {
		delete(f.status, ch+"/"+thread) // Slack clears the status when the app replies
	}
	f.notifyLocked()
	f.mu.Unlock()
	f.echo(map[string]any{"type": "message", "channel": ch, "channel_type": "channel", "user": f.botUser, "bot_id": f.botID,
		"app_id": f.appID, "text": text, "ts": m.TS, "thread_ts": thread, "event_ts": m.TS, "team": f.team})
	writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": m.TS, "message": map[string]any{
		"type": "message", "text": text, "user": f.botUser, "bot_id": f.botID, "ts": m.TS, "thread_ts": thread}})
}

func (f *fakeSlack) update(w http.ResponseWriter, form url.Values) {
	ch, ts, text := form.Get("channel"), form.Get("ts"), form.Get("text")
	md := form.Get("markdown_text")
	if md != "" {
		text = md
	}
	f.mu.Lock()
	m, ok := f.msgs[ch+"/"+ts]
	switch {
	case !ok:
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "message_not_found"})
		return
	case m.BotID != f.botID:
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "cant_update_message"})
		return
	case utf8.RuneCountInString(text) > maxFakeText:
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "msg_too_long"})
		return
	case m.Stream != nil && m.Stream.streaming:
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "cant_update_message"})
		return
	}
	meta, bad := fakeMetadata(form)
	if bad != "" {
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": bad})
		return
	}
	if meta != nil { // an update without metadata keeps the message's
		m.Metadata = meta
	}
	before := *m
	m.Text, m.Markdown = text, md != ""
	// chat.update with text and no blocks, or blocks=[], removes the blocks.
	if b := form.Get("blocks"); b != "" && b != "[]" {
		m.Blocks = json.RawMessage(b)
	} else {
		m.Blocks = nil
	}
	f.notifyLocked()
	evTS := f.newTSLocked()
	f.mu.Unlock()
	f.echo(map[string]any{"type": "message", "subtype": "message_changed", "hidden": true, "channel": ch, "channel_type": "channel",
		"ts": evTS, "event_ts": evTS,
		"message":          map[string]any{"type": "message", "user": f.botUser, "bot_id": f.botID, "text": text, "ts": ts, "thread_ts": m.ThreadTS, "edited": map[string]any{"user": f.botUser, "ts": evTS}},
		"previous_message": map[string]any{"type": "message", "user": f.botUser, "bot_id": f.botID, "text": before.Text, "ts": ts, "thread_ts": m.ThreadTS}})
	writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": ts, "text": text})
}

func (f *fakeSlack) setStatus(w http.ResponseWriter, form url.Values) {
	ch, thread, status := form.Get("channel_id"), form.Get("thread_ts"), form.Get("status")
	if f.o.statusOff {
		writeJSON(w, map[string]any{"ok": false, "error": "missing_scope", "needed": "assistant:write", "provided": "chat:write"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.channels[ch] {
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	if status == "" {
		delete(f.status, ch+"/"+thread)
	} else {
		f.status[ch+"/"+thread] = fakeStatus{text: status, at: time.Now()}
	}
	f.notifyLocked()
	writeJSON(w, map[string]any{"ok": true})
}

// handlerTransport serves HTTP requests with a handler in memory, for
// tests in a synctest bubble.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// ref returns the ThreadRef of a thread in the fake.
func ref(channel, thread string) channels.ThreadRef {
	return channels.ThreadRef{Platform: Platform, Channel: channel, Thread: thread}
}

// openView answers views.open: the trigger must come from a click and is
// used once, as on Slack (where it also expires after 3 s).
func (f *fakeSlack) openView(w http.ResponseWriter, body []byte) {
	var req struct {
		TriggerID string          `json:"trigger_id"`
		View      json.RawMessage `json:"view"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.View) == 0 {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	f.mu.Lock()
	user, ok := f.triggers[req.TriggerID]
	if !ok {
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_trigger_id"})
		return
	}
	delete(f.triggers, req.TriggerID)
	id := fmt.Sprintf("V%06d", f.nextLocked())
	f.views = append(f.views, fakeView{ID: id, User: user, View: req.View})
	f.notifyLocked()
	f.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "view": map[string]any{"id": id, "hash": "h-" + id}})
}
