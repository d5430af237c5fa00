package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// In the web chat, people are who their token says: access.web names the
// holders of channels.web.users, and a request that claims to be the
// approver neither passes access nor approves.
func TestWebAccessByToken(t *testing.T) {
	t.Setenv("TEST_ANN_TOKEN", "ann-secret-1")
	t.Setenv("TEST_BOB_TOKEN", "bob-secret-2")
	t.Setenv("TEST_CAROL_TOKEN", "carol-secret-3")
	cfg, f := testConfig(t, `
channels:
  web:
    users:
      ann: ${TEST_ANN_TOKEN}
      bob: ${TEST_BOB_TOKEN}
      carol: ${TEST_CAROL_TOKEN}
access:
  web:
    users: [web:ann, web:bob]
    approvers: [web:ann]
`)
	g := startGateway(t, cfg, f, hooks{})
	ann := client{t: t, base: g.webURL, token: "ann-secret-1"}
	bob := client{t: t, base: g.webURL, token: "bob-secret-2"}
	carol := client{t: t, base: g.webURL, token: "carol-secret-3"}
	if strings.Contains(g.webURL, "secret") {
		t.Errorf("printed URL %s carries a token", g.webURL)
	}
	th := bob.post("api/threads", map[string]any{})["id"].(string)
	msgs := "api/threads/" + th + "/messages"

	// carol is no one the rules list, whatever she claims.
	if status, out := carol.try(msgs, map[string]string{"authorId": "web:ann", "text": "echo as ann"}); status != 403 {
		t.Errorf("carol posting as web:ann = %d %v, want 403", status, out)
	}
	carol.post(msgs, map[string]string{"author": "carol", "text": "echo hi"})
	carol.waitMessage(th, "carol's refusal", func(m webMessage) bool {
		return m.Role == "system" && strings.Contains(m.Text, "don't have access")
	})

	// bob may prompt; the agent asks for permission.
	bob.post(msgs, map[string]string{"text": "permission"})
	var prompt struct {
		ID      string
		Options []struct{ ID, Label string }
	}
	bob.waitEvent(th, "the permission prompt", func(event, data string) bool {
		return event == "message" && json.Unmarshal([]byte(data), &prompt) == nil && len(prompt.Options) > 0
	})
	allow := ""
	for _, o := range prompt.Options {
		if strings.HasSuffix(o.ID, "allow_once") {
			allow = o.ID
		}
	}
	answer := "api/threads/" + th + "/prompts/" + prompt.ID + "/answer"

	// bob claiming to be the approver is refused outright ...
	if status, out := bob.try(answer, map[string]string{"author": "ann", "authorId": "web:ann", "optionId": allow}); status != 403 {
		t.Errorf("bob answering as web:ann = %d %v, want 403", status, out)
	}
	// ... and as himself he is no approver.
	if _, out := bob.try(answer, map[string]string{"optionId": allow}); out["reply"] != "Sorry, only approvers can answer this prompt." {
		t.Errorf("bob's answer = %v, want the approvers-only reply", out)
	}
	// ann approves with nothing but her token.
	ann.post(answer, map[string]string{"optionId": allow})
	ann.waitMessage(th, "the prompt answered by ann", func(m webMessage) bool {
		return m.ID == prompt.ID && strings.Contains(m.Text, "chosen by ann")
	})
	ann.waitMessage(th, "the edit applied", func(m webMessage) bool {
		return m.Role == "assistant" && strings.Contains(m.Text, "Applied the edit.")
	})
}

// `gateway run` refuses to serve the web chat beyond loopback without a
// token, naming the settings; `gateway check` masks every web token.
func TestWebTokensAtStartAndInCheck(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open.yaml")
	os.WriteFile(open, []byte("dataDir: "+filepath.Join(dir, "data")+"\nchannels:\n  web:\n    listen: 0.0.0.0:0\n"), 0o600)
	_, errOut, err := runCLI(t, "", "run", "--config", open, "--set", "metrics.listen=")
	if err == nil {
		t.Fatal("run beyond loopback without a token started")
	}
	msg := err.Error() + errOut
	for _, want := range []string{"channels.web.listen", "channels.web.token", "channels.web.users"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal lacks %s: %s", want, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Errorf("the refused run created its data directory")
	}

	named := filepath.Join(dir, "named.yaml")
	os.WriteFile(named, []byte("channels:\n  web:\n    listen: 0.0.0.0:0\n    token: ${TEST_OWNER_TOKEN}\n    users:\n      ann: ${TEST_ANN_TOKEN}\n"), 0o600)
	t.Setenv("TEST_OWNER_TOKEN", "owner-very-secret")
	t.Setenv("TEST_ANN_TOKEN", "ann-very-secret")
	out, errOut, err := runCLI(t, "", "check", "--config", named)
	if err != nil {
		t.Fatalf("check: %v\n%s", err, errOut)
	}
	if strings.Contains(out, "very-secret") {
		t.Errorf("check printed a token:\n%s", out)
	}
	for _, want := range []string{"token: '***'", "ann: '***'"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}
