package main

import (
	"encoding/json"
	"net/http"
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
