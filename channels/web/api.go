package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
)

// server serves the page and the API during one Run.
type server struct {
	a        *Adapter
	ctx      context.Context // Run's context, handed to h
	h        func(context.Context, channels.Inbound)
	loopback bool // the listener is loopback-only: Host names are checked
	// sockets counts the WebSocket handlers running: the HTTP server's
	// Shutdown does not wait for them, Run does.
	sockets sync.WaitGroup
	// streams counts each identity's live streams (events and sockets).
	streams streamCount
}

// routes returns the server's handler: the routes behind the request
// guards.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /api/me", s.me)
	mux.HandleFunc("GET /api/threads", s.listThreads)
	mux.HandleFunc("POST /api/threads", s.createThread)
	mux.HandleFunc("PATCH /api/threads/{id}", s.renameThread)
	mux.HandleFunc("DELETE /api/threads/{id}", s.deleteThread)
	mux.HandleFunc("GET /api/events", s.listEvents)
	mux.HandleFunc("GET /api/threads/{id}/messages", s.listMessages)
	mux.HandleFunc("POST /api/threads/{id}/messages", s.postMessage)
	mux.HandleFunc("POST /api/threads/{id}/stop", s.stop)
	mux.HandleFunc("POST /api/threads/{id}/prompts/{msg}/answer", s.answer)
	mux.HandleFunc("POST /api/threads/{id}/forms/{msg}/answer", s.answerForm)
	mux.HandleFunc("POST /api/threads/{id}/commands", s.command)
	mux.HandleFunc("GET /api/threads/{id}/events", s.threadEvents)
	mux.HandleFunc("GET /api/socket", s.listSocket)
	mux.HandleFunc("GET /api/threads/{id}/socket", s.threadSocket)
	mux.HandleFunc("GET /api/files/{name}", s.serveFile)
	return s.guard(mux)
}

// guard checks what every request must satisfy before mux routes it: a
// local Host name on a loopback listener (against DNS rebinding), no
// foreign Origin (against cross-site requests), the access token on /api,
// and a JSON content type on request bodies. Unknown /api routes answer
// with JSON errors.
func (s *server) guard(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		api := r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			// Read or not, a body must come in time: the server
			// reads what a handler left before the next request.
			s.bodyDeadline(w)
		}
		if s.loopback && !localHost(r.Host) {
			writeError(w, http.StatusForbidden, "host "+r.Host+" is not allowed; use 127.0.0.1 or localhost")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			writeError(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		if !api {
			mux.ServeHTTP(w, r)
			return
		}
		who, ok := s.a.identify(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="acpgw web chat"`)
			writeError(w, http.StatusUnauthorized, s.a.tokenRefused(r))
			return
		}
		r = withIdentity(r, who)
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, "the request body must be JSON with Content-Type: application/json")
				return
			}
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			noRoute(w, r, mux)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// noRoute answers an /api request that matches no route with the status
// the mux would give (404 or 405, with Allow) and a JSON body.
func noRoute(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) {
	h, _ := mux.Handler(r)
	probe := &statusProbe{header: make(http.Header)}
	h.ServeHTTP(probe, r)
	if allow := probe.header.Get("Allow"); allow != "" {
		w.Header().Set("Allow", allow)
	}
	switch probe.status {
	case http.StatusMethodNotAllowed:
		writeError(w, probe.status, r.Method+" is not allowed here; allowed: "+probe.header.Get("Allow"))
	default:
		writeError(w, http.StatusNotFound, "no such API endpoint: "+r.URL.Path)
	}
}

// statusProbe records the status and headers a handler writes.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *statusProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

// localHost reports whether a Host header names this machine.
func localHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether an Origin header names the host the request
// was sent to.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

func (s *server) listThreads(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, threadsBody{Threads: s.a.st.threadList()})
}

func (s *server) createThread(w http.ResponseWriter, r *http.Request) {
	req, ok := decode(w, r, maxBodyBytes, parseThreadRequest)
	if !ok {
		return
	}
	t, err := s.a.st.createThread(req.Title)
	s.a.removeGone() // of a thread forgotten to make room (no state file)
	if err != nil {
		writeStateError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, t)
}

// renameThread serves PATCH /api/threads/{id}: {"title": "…"} renames
// the thread.
func (s *server) renameThread(w http.ResponseWriter, r *http.Request) {
	req, ok := decode(w, r, maxBodyBytes, parseRenameRequest)
	if !ok {
		return
	}
	t, err := s.a.st.setTitle(r.PathValue("id"), req.Title)
	if err != nil {
		writeStateError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// deleteThread serves DELETE /api/threads/{id}: the thread and its
// messages are forgotten and its streams end; the gateway is told
// (Inbound.Closed), which stops a turn still running in it, ends its
// agent and forgets its binding.
func (s *server) deleteThread(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	author, ok := s.author(w, r, authorFields{})
	if !ok || !s.live(w) {
		return
	}
	if err := s.a.st.deleteThread(id); err != nil {
		writeStateError(w, err)
		return
	}
	s.a.removeGone()
	s.h(channels.AckAfterHandler(s.ctx), channels.Inbound{Thread: ref(id), Author: author, Closed: true, ID: channels.MessageID(newID())})
	w.WriteHeader(http.StatusNoContent)
}

// messagesBody is the JSON of GET /api/threads/{id}/messages.
type messagesBody struct {
	Messages []message `json:"messages"`
	Typing   bool      `json:"typing"`
	// Session is the thread's session, once the gateway showed it.
	Session *sessionView `json:"session,omitempty"`
}

func (s *server) listMessages(w http.ResponseWriter, r *http.Request) {
	msgs, typing, err := s.a.st.messages(r.PathValue("id"))
	if err != nil {
		writeStateError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, messagesBody{Messages: msgs, Typing: typing, Session: s.a.st.session(r.PathValue("id"))})
}

// idBody is the JSON of accepted posts.
type idBody struct {
	ID string `json:"id"`
	// Reply is the gateway's private answer to a prompt answer, if it
	// came in time.
	Reply string `json:"reply,omitempty"`
}

func (s *server) postMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	req, author, ok := accept(s, w, r, maxMessageBodyBytes, parseMessageRequest)
	if !ok {
		return
	}
	files := takeFiles(req.Files)
	msg, err := s.a.st.addMessage(id, message{Role: roleUser, Author: author.Name, Kind: string(channels.KindText), Text: withFileNames(req.Text, files), Files: sentFiles(files)})
	if err != nil {
		writeStateError(w, err)
		return
	}
	s.h(channels.AckAfterHandler(s.ctx), channels.Inbound{
		Thread:  ref(id),
		Author:  author,
		Text:    req.Text,
		Command: channels.ParseCommand(req.Text),
		Files:   files,
		Agent:   req.Agent,
		ID:      channels.MessageID(msg.ID),
		Reply:   s.notice(id),
	})
	writeJSON(w, http.StatusAccepted, idBody{ID: msg.ID})
}

func (s *server) stop(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	req, author, ok := accept(s, w, r, maxBodyBytes, parseStopRequest)
	if !ok {
		return
	}
	s.event(w, id, channels.Inbound{Author: author, Stop: true, StopAll: req.All})
}

// event gives in, an intent about thread id that adds no message to it
// (a stop, a command), to the gateway under a new event id, answered in
// the thread; an unknown thread is refused.
func (s *server) event(w http.ResponseWriter, id string, in channels.Inbound) {
	if !s.a.st.hasThread(id) {
		writeStateError(w, errNoThread)
		return
	}
	eventID := newID()
	in.Thread, in.ID, in.Reply = ref(id), channels.MessageID(eventID), s.notice(id)
	s.h(channels.AckAfterHandler(s.ctx), in)
	writeJSON(w, http.StatusAccepted, idBody{ID: eventID})
}

// answered gives in, a person's answer in thread id, to the gateway under
// a new event id, and answers r with the event id and the gateway's
// private reply, if it comes within replyWait (a later one becomes a
// notice in the thread).
func (s *server) answered(w http.ResponseWriter, r *http.Request, id string, in channels.Inbound) {
	rep := &replier{got: make(chan struct{}), late: s.notice(id), waiting: true}
	eventID := newID()
	in.Thread, in.ID, in.Reply = ref(id), channels.MessageID(eventID), rep.reply
	s.h(channels.AckAfterHandler(s.ctx), in)
	writeJSON(w, http.StatusAccepted, idBody{ID: eventID, Reply: rep.wait(r.Context(), s.ctx, s.a.replyWait)})
}

func (s *server) answer(w http.ResponseWriter, r *http.Request) {
	id, msgID := r.PathValue("id"), r.PathValue("msg")
	req, author, ok := accept(s, w, r, maxBodyBytes, parseAnswerRequest)
	if !ok {
		return
	}
	m, ok := s.message(w, id, msgID)
	if !ok {
		return
	}
	if len(m.Options) == 0 {
		writeError(w, http.StatusConflict, "this message has no options to answer (already answered, or not a prompt)")
		return
	}
	if !offers(m.Options, req.OptionID) {
		writeError(w, http.StatusBadRequest, "the prompt has no option "+quote(req.OptionID))
		return
	}
	s.answered(w, r, id, channels.Inbound{
		Author: author,
		Choice: &channels.ChoiceAnswer{
			Prompt:   channels.Handle{Thread: ref(id), ID: channels.MessageID(msgID)},
			OptionID: req.OptionID,
		},
	})
}

// command serves POST /api/threads/{id}/commands: {"name": "model",
// "args": "opus"} gives the gateway's command name as Inbound.Command
// directly (the header's menus), whether or not a message would parse
// as it. Nothing is added to the thread; the gateway answers there.
func (s *server) command(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	req, author, ok := accept(s, w, r, maxBodyBytes, parseCommandRequest)
	if !ok {
		return
	}
	text := "/" + req.Name
	if req.Args != "" {
		text += " " + req.Args
	}
	s.event(w, id, channels.Inbound{Author: author, Text: text, Command: &channels.Command{Name: req.Name, Args: req.Args}})
}

// answerForm serves POST /api/threads/{id}/forms/{msg}/answer: a
// person's answer to a form, checked against it, arrives as
// Inbound.Form.
func (s *server) answerForm(w http.ResponseWriter, r *http.Request) {
	id, msgID := r.PathValue("id"), r.PathValue("msg")
	req, author, ok := accept(s, w, r, maxBodyBytes, parseFormRequest)
	if !ok {
		return
	}
	m, ok := s.message(w, id, msgID)
	if !ok {
		return
	}
	if m.Form == nil {
		writeError(w, http.StatusConflict, "this message has no form to answer (already answered, or not a form)")
		return
	}
	values, err := checkAnswer(m.Form, req.Action, req.Values)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.answered(w, r, id, channels.Inbound{
		Author: author,
		Form: &channels.FormAnswer{
			Form:   channels.Handle{Thread: ref(id), ID: channels.MessageID(msgID)},
			Action: req.Action,
			Values: values,
		},
	})
}

// message returns message msgID of thread id; when there is none it
// answers 404 and returns false.
func (s *server) message(w http.ResponseWriter, id, msgID string) (message, bool) {
	m, err := s.a.st.message(id, msgID)
	if err != nil {
		writeStateError(w, err)
		return message{}, false
	}
	return m, true
}

// authored is a request body that says who it is from.
type authored interface{ fields() authorFields }

func (a authorFields) fields() authorFields { return a }

// decode reads r's body of at most n bytes and parses it; on failure it
// answers (400 for what parse refuses) and returns false.
func decode[T any](w http.ResponseWriter, r *http.Request, n int64, parse func([]byte) (T, error)) (T, bool) {
	body, ok := readBodyUpTo(w, r, n)
	if !ok {
		var zero T
		return zero, false
	}
	req, err := parse(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return req, false
	}
	return req, true
}

// accept decodes r's body as decode does, then checks the author it names
// against r's token and that Run has not ended; on failure it answers and
// returns false.
func accept[T authored](s *server, w http.ResponseWriter, r *http.Request, n int64, parse func([]byte) (T, error)) (T, channels.Author, bool) {
	req, ok := decode(w, r, n, parse)
	if !ok {
		return req, channels.Author{}, false
	}
	author, ok := s.author(w, r, req.fields())
	if !ok || !s.live(w) {
		return req, channels.Author{}, false
	}
	return req, author, true
}

// author returns the author of r, whose body gave f; when f names someone
// other than r's token, it answers 403 and returns false.
func (s *server) author(w http.ResponseWriter, r *http.Request, f authorFields) (channels.Author, bool) {
	a, err := identityOf(r).author(f)
	if err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return channels.Author{}, false
	}
	return a, true
}

// live answers 503 and returns false once Run's context has ended.
func (s *server) live(w http.ResponseWriter) bool {
	if s.ctx.Err() != nil {
		writeError(w, http.StatusServiceUnavailable, "the web chat is shutting down")
		return false
	}
	return true
}

// notice returns a Reply function that appends a system notice to thread
// id, visible to everyone in the thread.
func (s *server) notice(id string) func(context.Context, string) error {
	return func(ctx context.Context, text string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := checkText(text); err != nil {
			return err
		}
		_, err := s.a.st.addMessage(id, message{Role: roleSystem, Author: authorGateway, Kind: string(channels.KindNotice), Text: text})
		return err
	}
}

// replier hands the gateway's private reply to a prompt answer back to the
// browser that clicked: in the HTTP response while the request waits, as
// a system notice in the thread after.
type replier struct {
	got  chan struct{} // closed at the first reply
	late func(context.Context, string) error

	mu      sync.Mutex // guards the fields below
	waiting bool
	texts   []string
}

// reply is the Inbound.Reply of an answer. It does no I/O.
func (r *replier) reply(ctx context.Context, text string) error {
	r.mu.Lock()
	if !r.waiting {
		r.mu.Unlock()
		return r.late(ctx, text)
	}
	if len(r.texts) == 0 {
		close(r.got)
	}
	r.texts = append(r.texts, text)
	r.mu.Unlock()
	return nil
}

// wait waits up to d for a reply, or until one of the contexts ends, and
// returns the replies that came, joined by blank lines. Later replies
// become notices.
func (r *replier) wait(req, run context.Context, d time.Duration) string {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.got:
	case <-t.C:
	case <-req.Done():
	case <-run.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = false
	return strings.Join(r.texts, "\n\n")
}

func offers(opts []option, id string) bool {
	for _, o := range opts {
		if o.ID == id {
			return true
		}
	}
	return false
}

// takeFiles turns a message's uploads into files for the gateway, with
// the limits of package attach (what does not fit says why).
func takeFiles(ups []upload) []channels.File {
	if len(ups) == 0 {
		return nil
	}
	var r attach.Reader
	files := make([]channels.File, len(ups))
	for i, u := range ups {
		files[i] = channels.File{Name: channels.ShowName(u.Name), ContentType: u.Type}
		r.Take(&files[i], u.data)
	}
	return files
}

// withFileNames is a message's text as the thread shows it: a line per
// file after the text.
func withFileNames(text string, files []channels.File) string {
	var b strings.Builder
	b.WriteString(text)
	for _, f := range files {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("📎 " + f.Name)
		if f.Skipped != "" {
			b.WriteString(" (not sent: " + f.Skipped + ")")
		}
	}
	return b.String()
}

// readBodyUpTo reads a request body of at most n bytes; on failure it
// answers and returns false.
func readBodyUpTo(w http.ResponseWriter, r *http.Request, n int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, n))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d MiB", n>>20))
		return nil, false
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "the request body did not arrive in time")
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		return nil, false
	}
	return body, true
}

// writeStateError answers a state error: 404 for missing threads and
// messages.
func writeStateError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errNoThread):
		writeError(w, http.StatusNotFound, "no such thread")
	case errors.Is(err, errNoMessage):
		writeError(w, http.StatusNotFound, "no such message in this thread")
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(mustJSON(v), '\n'))
}

func quote(s string) string { return string(mustJSON(s)) }
