package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// A shutdown (SIGTERM) in the middle of a turn says so in the thread,
// which the web chat keeps across the restart, and in the log, with
// counts.
func TestShutdownMidTurnIsAnnounced(t *testing.T) {
	cfg, f := testConfig(t, "")
	var logs logBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := start(ctx, cfg, f, slog.New(slog.NewTextHandler(&logs, nil)), hooks{})
	if err != nil {
		t.Fatal(err)
	}
	c := webClient(t, g)
	th := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "slow 400"})
	c.waitMessage(th, "streaming", func(m webMessage) bool { return strings.Contains(m.Text, "quick brown") })
	cancel()
	if err := g.wait(); err != nil {
		t.Fatalf("wait: %v", err)
	}
	for _, want := range []string{`msg="shutting down`, `msg="shut down" turnsInterrupted=1 agentsStopped=1`, `msg="gateway stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, logs.String())
		}
	}

	g = startGateway(t, cfg, f, hooks{})
	c = webClient(t, g) // another port, the same token
	resp, err := c.get("api/threads/" + th + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Messages []webMessage }
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	n := 0
	for _, m := range got.Messages {
		if strings.Contains(m.Text, "Interrupted: the gateway is restarting. Send your message again when it is back.") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d interrupted notices in the thread after the restart, want 1: %+v", n, got.Messages)
	}
}
