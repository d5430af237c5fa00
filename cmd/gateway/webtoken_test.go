package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// channels.web.token alone, with no access.web rule, admits its holder,
// web:owner: the holder's messages are answered and the holder approves a
// permission prompt; a request without the token, or with another, is
// refused, whatever author it names.
func TestWebTokenAdmitsItsHolder(t *testing.T) {
	t.Setenv("TEST_OWNER_TOKEN", "owner-secret-7")
	cfg, f := testConfig(t, "channels:\n  web:\n    token: ${TEST_OWNER_TOKEN}\n")
	g := startGateway(t, cfg, f, hooks{})
	base, query, _ := strings.Cut(g.webURL, "?")
	if query != "token=owner-secret-7" {
		t.Errorf("printed URL %s, want it to carry the token", g.webURL)
	}
	owner := client{t: t, base: base, token: "owner-secret-7"}
	th := owner.post("api/threads", map[string]any{})["id"].(string)
	msgs := "api/threads/" + th + "/messages"
	for _, c := range []client{{t: t, base: base}, {t: t, base: base, token: "owner-secret-8"}} {
		if status, out := c.try(msgs, map[string]string{"author": "owner", "authorId": "web:owner", "text": "echo sneaked in"}); status != 401 {
			t.Errorf("a request with token %q = %d %v, want 401", c.token, status, out)
		}
	}

	owner.post(msgs, map[string]string{"text": "echo hello owner"})
	owner.waitMessage(th, "the owner's answer", func(m webMessage) bool {
		return m.Role == "assistant" && strings.Contains(m.Text, "hello owner")
	})

	owner.post(msgs, map[string]string{"text": "permission"})
	var prompt struct {
		ID      string
		Options []struct{ ID, Label string }
	}
	owner.waitEvent(th, "the permission prompt", func(event, data string) bool {
		return event == "message" && json.Unmarshal([]byte(data), &prompt) == nil && len(prompt.Options) > 0
	})
	allow := ""
	for _, o := range prompt.Options {
		if strings.HasSuffix(o.ID, "allow_once") {
			allow = o.ID
		}
	}
	owner.post("api/threads/"+th+"/prompts/"+prompt.ID+"/answer", map[string]string{"optionId": allow})
	owner.waitMessage(th, "the edit applied", func(m webMessage) bool {
		return m.Role == "assistant" && strings.Contains(m.Text, "Applied the edit.")
	})
	req, err := http.NewRequest("GET", base+msgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	owner.auth(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ Messages []webMessage }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) == 0 {
		t.Fatal("the thread has no messages")
	}
	for _, m := range got.Messages {
		if strings.Contains(m.Text, "sneaked in") {
			t.Errorf("a refused request reached the thread: %+v", m)
		}
		if m.Role == "system" && strings.Contains(m.Text, "access") {
			t.Errorf("the token's holder was refused: %+v", m)
		}
	}
}

// The default gateway (no channels.web.token, users or open) makes a token
// at its first start, keeps it in DATADIR/web-token (0600) and prints the
// chat's URL with it. Another account of the machine, a plain client
// without the token, is refused everything and told where the token is;
// the printed URL's token admits its holder as web:local. A restart keeps
// the token.
func TestWebDefaultMakesAToken(t *testing.T) {
	cfg, f := testConfig(t, "")
	var args []string
	for _, s := range f.sets {
		args = append(args, "--set", s)
	}
	ctx, cancel := context.WithCancel(t.Context())
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runGateway(ctx, args, outW, &stderr)
		outW.Close()
	}()
	printed := ""
	sc := bufio.NewScanner(outR)
	for printed == "" && sc.Scan() {
		printed, _ = strings.CutPrefix(sc.Text(), "gateway: web chat at ")
	}
	go io.Copy(io.Discard, outR)
	cancel()
	if err := <-done; err != nil || printed == "" {
		t.Fatalf("gateway run printed %q, returned %v\n%s", printed, err, stderr.String())
	}
	u, err := url.Parse(printed)
	if err != nil {
		t.Fatalf("printed URL %q: %v", printed, err)
	}
	tok := u.Query().Get("token")
	if len(tok) != 43 {
		t.Fatalf("printed URL %s, want it to carry a 43-character token", printed)
	}
	if strings.Contains(stderr.String(), tok) {
		t.Errorf("the log holds the token:\n%s", stderr.String())
	}
	path := filepath.Join(cfg.DataDir, "web-token")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if st.Mode().Perm() != 0o600 || strings.TrimSpace(string(b)) != tok {
		t.Errorf("%s: mode %v, holds %q; want 0600 holding the printed token", path, st.Mode().Perm(), b)
	}
	if dst, err := os.Stat(cfg.DataDir); err != nil || dst.Mode().Perm() != 0o700 {
		t.Errorf("the data dir: %v, %v; want mode 0700", dst, err)
	}

	g := startGateway(t, cfg, f, hooks{})
	holder := webClient(t, g)
	if holder.token != tok {
		t.Errorf("after a restart the URL carries %q, want the same token %q", holder.token, tok)
	}
	th := holder.post("api/threads", map[string]any{})["id"].(string)
	other := client{t: t, base: holder.base}
	for _, path := range []string{"api/threads", "api/threads/" + th + "/messages"} {
		status, out := other.try(path, map[string]string{"text": "echo sneaked in"})
		if msg, _ := out["error"].(string); status != 401 || !strings.Contains(msg, filepath.Join(cfg.DataDir, "web-token")) {
			t.Errorf("POST %s without the token = %d %v, want 401 naming the token file", path, status, out)
		}
	}
	for _, path := range []string{"api/me", "api/threads", "api/events", "api/threads/" + th + "/messages", "api/threads/" + th + "/events"} {
		resp, err := other.get(path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("GET %s without the token = %d, want 401", path, resp.StatusCode)
		}
	}
	holder.post("api/threads/"+th+"/messages", map[string]string{"text": "echo hello local"})
	m := holder.waitMessage(th, "the answer", func(m webMessage) bool {
		return m.Role == "assistant" && strings.Contains(m.Text, "hello local")
	})
	if m.Text == "" {
		t.Fatal("no answer")
	}
	resp, err := holder.get("api/me")
	if err != nil {
		t.Fatal(err)
	}
	var me struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if me.ID != "web:local" {
		t.Errorf("the holder is %q, want web:local", me.ID)
	}
}

// channels.web.open: true serves without a token (the URL carries none),
// admits a client without one, makes no token file, and warns.
func TestWebOpenAdmitsWithoutAToken(t *testing.T) {
	cfg, f := testConfig(t, "channels:\n  web:\n    open: true\n")
	var logs lockedBuffer
	ctx, cancel := context.WithCancel(t.Context())
	g, err := start(ctx, cfg, f, slog.New(slog.NewTextHandler(&logs, nil)), hooks{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		g.wait()
	})
	if strings.Contains(g.webURL, "token") {
		t.Errorf("printed URL %s, want no token", g.webURL)
	}
	c := client{t: t, base: g.webURL}
	c.post("api/threads", map[string]any{})
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "channels.web.open: true") {
		t.Errorf("no warning about the open chat in the log:\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "web-token")); !os.IsNotExist(err) {
		t.Errorf("an open chat made a token file: %v", err)
	}
}

// gateway edge with the web chat needs a configured token (or open): each
// edge would otherwise make its own, and admit other people.
func TestEdgeWebNeedsAToken(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "edge.yaml")
	yaml := "dataDir: " + filepath.Join(t.TempDir(), "data") + "\nchannels: {web: {listen: 127.0.0.1:0}}\ncluster: {nats: {url: nats://127.0.0.1:1}}\n"
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, "", "edge", "--config", cfgFile, "--id", "e1")
	if err == nil || !strings.Contains(err.Error(), "channels.web.token: gateway edge needs the web chat's token configured") {
		t.Fatalf("gateway edge without a web token = %v, want it refused naming channels.web.token", err)
	}
}

// gateway check says who the web chat admits.
func TestCheckSaysWhoTheWebChatAdmits(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"channels: {web: {listen: 127.0.0.1:0}}\n", "# web chat: for the holder of the token in "},
		{"channels: {web: {open: true}}\n", "# web chat: open to every account of this machine, without a token (channels.web.open: true)"},
		{"channels: {web: {token: tok}}\n", "# web chat: for the holders of channels.web.token and users"},
	} {
		f := filepath.Join(t.TempDir(), "gateway.yaml")
		if err := os.WriteFile(f, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := runCLI(t, "", "check", "--config", f)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("check of %q = %v %s\n%s; want %q", tc.yaml, err, errOut, out, tc.want)
		}
	}
}
