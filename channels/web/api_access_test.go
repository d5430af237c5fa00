package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

func TestAPIErrors(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	msgs := "/api/threads/" + id + "/messages"
	json := http.Header{"Content-Type": {"application/json"}}

	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		header  http.Header
		status  int
		errText string
	}{
		{"unknown thread messages", "GET", "/api/threads/nope/messages", nil, nil, 404, "no such thread"},
		{"unknown thread post", "POST", "/api/threads/nope/messages", map[string]string{"author": "a", "text": "x"}, nil, 404, "no such thread"},
		{"unknown thread stop", "POST", "/api/threads/nope/stop", map[string]string{"author": "a"}, nil, 404, "no such thread"},
		{"unknown thread events", "GET", "/api/threads/nope/events", nil, nil, 404, "no such thread"},
		{"bad JSON", "POST", msgs, `{"author": "a", "text": }`, nil, 400, "invalid JSON at byte 25: invalid character '}' looking for beginning of value"},
		{"cut JSON", "POST", msgs, `{"author": "a"`, nil, 400, "invalid JSON: the body ends in the middle of the object"},
		{"not an object", "POST", msgs, `["hi"]`, nil, 400, "invalid JSON: want an object, got array"},
		{"wrong type", "POST", msgs, `{"author": "a", "text": 3}`, nil, 400, `invalid JSON: "text" must be a string, got number`},
		{"unknown field", "POST", msgs, `{"author": "a", "txt": "x"}`, nil, 400, `invalid JSON: unknown field "txt"`},
		{"two objects", "POST", msgs, `{"author": "a", "text": "x"} {}`, nil, 400, "invalid JSON: unexpected data after the object"},
		{"empty body", "POST", msgs, "", json, 400, "the request body is empty, want a JSON object"},
		{"forged author id", "POST", msgs, map[string]string{"authorId": "web:boss", "text": "x"}, nil, 403, `your token is web:local's; "authorId" "web:boss" names someone else (who you are comes from the token, not the request)`},
		{"blank text", "POST", msgs, map[string]string{"author": "a", "text": " \n"}, nil, 400, `"text" is required (or "files")`},
		{"control in author", "POST", msgs, map[string]string{"author": "a\nb", "text": "x"}, nil, 400, `"author" must not contain control characters`},
		{"long text", "POST", msgs, map[string]string{"author": "a", "text": strings.Repeat("x", maxTextBytes+1)}, nil, 400, `"text" has 65537 bytes, at most 65536 are allowed`},
		{"huge body", "POST", msgs, map[string]string{"author": "a", "text": strings.Repeat("x", maxMessageBodyBytes)}, nil, 413, "the request body is larger than 12 MiB"},
		{"huge stop body", "POST", "/api/threads/" + id + "/stop", map[string]string{"author": strings.Repeat("x", maxBodyBytes)}, nil, 413, "the request body is larger than 1 MiB"},
		{"form body", "POST", msgs, "author=a&text=x", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, 415, "the request body must be JSON with Content-Type: application/json"},
		{"text/plain body", "POST", msgs, `{"author":"a","text":"x"}`, http.Header{"Content-Type": {"text/plain"}}, 415, "the request body must be JSON with Content-Type: application/json"},
		{"unknown endpoint", "GET", "/api/nothing", nil, nil, 404, "no such API endpoint: /api/nothing"},
		{"wrong method", "DELETE", "/api/threads", nil, nil, 405, "DELETE is not allowed here; allowed: GET, HEAD, POST"},
		{"long title", "POST", "/api/threads", map[string]string{"title": strings.Repeat("t", 201)}, nil, 400, `"title" has 201 characters, at most 200 are allowed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.try(ctx, tc.method, tc.path, tc.body, tc.header)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tc.status || r.errorText() != tc.errText {
				t.Errorf("%s %s = %d %s, want %d %q", tc.method, tc.path, r.status, r.body, tc.status, tc.errText)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("error Content-Type = %q, want JSON", ct)
			}
		})
	}
	in.empty(t)
}

func TestAccess(t *testing.T) {
	const token = "s3cret"
	a := New(Options{Listen: "127.0.0.1:0", Token: token})
	serve(t, a, nil)
	c := newClient(t, a)
	c.token = "" // each case sets its own credentials
	ctx := t.Context()
	port := a.Addr()[strings.LastIndex(a.Addr(), ":")+1:]

	tests := []struct {
		name   string
		path   string
		header http.Header
		status int
	}{
		{"no token", "/api/threads", nil, 401},
		{"wrong bearer", "/api/threads", http.Header{"Authorization": {"Bearer nope"}}, 401},
		{"bearer", "/api/threads", http.Header{"Authorization": {"Bearer " + token}}, 200},
		{"query", "/api/threads?token=" + token, nil, 200},
		{"wrong query", "/api/threads?token=s3cre", nil, 401},
		{"events without token", "/api/events", nil, 401},
		{"page is public", "/", nil, 200},
		{"foreign host", "/", http.Header{"Host": {"evil.example:" + port}}, 403},
		{"localhost", "/", http.Header{"Host": {"localhost:" + port}}, 200},
		{"foreign origin", "/api/threads?token=" + token, http.Header{"Origin": {"http://evil.example"}}, 403},
		{"same origin", "/api/threads?token=" + token, http.Header{"Origin": {"http://" + a.Addr()}}, 200},
		{"null origin", "/api/threads?token=" + token, http.Header{"Origin": {"null"}}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, "GET", c.base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			if h := tc.header.Get("Host"); h != "" {
				req.Host = h
			}
			res, err := c.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Errorf("GET %s = %d, want %d", tc.path, res.StatusCode, tc.status)
			}
			if tc.status == 401 && res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
			// A wrong token is told apart from none.
			want := map[bool]string{false: "needs its access token", true: "this access token is not accepted here"}[strings.HasPrefix(tc.name, "wrong")]
			if tc.status == 401 && !strings.Contains(string(body), want) {
				t.Errorf("GET %s: 401 %s, want it to say %q", tc.path, body, want)
			}
		})
	}
}

func TestPage(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	c := newClient(t, a)
	r := c.do(t.Context(), t, "GET", "/", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET / = %d %q, want 200 HTML", r.status, r.header.Get("Content-Type"))
	}
	page := string(r.body)
	for _, want := range []string{`id="new-thread"`, `id="composer"`, `<textarea`, `id="send"`, `id="stop"`, `id="typing"`, `aria-live="polite"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// The icon is inline (a data: URL), not a resource to load.
	local := regexp.MustCompile(`<link rel="icon" href="data:[^"]*">`).ReplaceAllString(page, "")
	for _, external := range []string{"src=", "<link", "@import", "url("} {
		if strings.Contains(local, external) {
			t.Errorf("page loads an external resource (%s)", external)
		}
	}
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q, want hashes of the inline script", csp)
	}
	if r := c.do(t.Context(), t, "GET", "/nothing", nil); r.status != 404 {
		t.Errorf("GET /nothing = %d, want 404", r.status)
	}
}

func TestURL(t *testing.T) {
	tests := []struct {
		name   string
		listen string
		token  string
		want   string // with the port replaced by PORT
	}{
		{"loopback", "127.0.0.1:0", "", "http://127.0.0.1:PORT/"},
		{"token", "127.0.0.1:0", "a b&c", "http://127.0.0.1:PORT/?token=a+b%26c"},
		{"localhost", "localhost:0", "", "http://127.0.0.1:PORT/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Options{Listen: tc.listen, Token: tc.token})
			if a.URL() != "" || a.Addr() != "" {
				t.Errorf("URL, Addr before Run = %q, %q, want empty", a.URL(), a.Addr())
			}
			serve(t, a, nil)
			port := a.Addr()[strings.LastIndex(a.Addr(), ":")+1:]
			if got, want := a.URL(), strings.Replace(tc.want, "PORT", port, 1); got != want {
				t.Errorf("URL() = %q, want %q", got, want)
			}
		})
	}
}

// logBuffer collects log records for checks.
type logBuffer struct {
	mu   sync.Mutex
	text strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.text.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.text.String()
}

// Beyond loopback, anyone who can reach the port could talk to the agent:
// without a token Run refuses to serve at all.
func TestRunRefusesBeyondLoopbackWithoutToken(t *testing.T) {
	tests := []struct {
		name    string
		listen  string
		token   string
		users   map[string]string
		refused bool
	}{
		{"loopback", "127.0.0.1:0", "", nil, false},
		{"all interfaces without token", "0.0.0.0:0", "", nil, true},
		{"all interfaces with token", "0.0.0.0:0", "t0ken-value", nil, false},
		{"all interfaces with named tokens", "0.0.0.0:0", "", map[string]string{"ann": "t0ken-value"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			a := New(Options{Listen: tc.listen, Token: tc.token, Users: tc.users, Logger: newTextLogger(&logs)})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
			select {
			case <-a.Ready():
				if tc.refused {
					t.Fatalf("Run listens on %s without a token", a.Addr())
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("Run = %v", err)
				}
			case err := <-done:
				if !tc.refused || err == nil || !strings.Contains(err.Error(), "no access token is set (Options.Token or Options.Users)") {
					t.Fatalf("Run = %v, want it to serve: %v", err, !tc.refused)
				}
				if a.Check() == nil {
					t.Errorf("Check = nil after a refusal, want not listening")
				}
			}
			if strings.Contains(logs.String(), "t0ken-value") {
				t.Errorf("logs contain the token:\n%s", logs.String())
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	if err := a.Run(t.Context(), func(context.Context, channels.Inbound) {}); err == nil {
		t.Errorf("second Run = nil, want an error")
	}
	busy := New(Options{Listen: a.Addr()})
	if err := busy.Run(t.Context(), func(context.Context, channels.Inbound) {}); err == nil || !strings.Contains(err.Error(), "web: listen") {
		t.Errorf("Run on a used port = %v, want a listen error", err)
	}
}

// Options.Listener is served as given (the program binds it first) and
// closed when Run ends.
func TestRunOnAGivenListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := New(Options{Listen: "127.0.0.1:1", Listener: ln})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
	<-a.Ready()
	if got, want := a.Addr(), ln.Addr().String(); got != want {
		t.Errorf("Addr = %s, want the listener's %s", got, want)
	}
	resp, err := http.Get(a.URL())
	if err != nil {
		t.Fatalf("GET %s: %v", a.URL(), err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if again, err := net.Listen("tcp", ln.Addr().String()); err != nil {
		t.Errorf("the listener is still open after Run: %v", err)
	} else {
		again.Close()
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
	<-a.Ready()
	c := newClient(t, a)
	id := c.newThread(t.Context(), t)
	s := c.openStream(t, "/api/threads/"+id+"/events")
	s.next(t, "typing")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(testWait):
		t.Fatal("Run did not return with a stream open")
	}
	s.ended(t)
}
