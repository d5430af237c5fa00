package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/agent"
)

// patient is a Handler whose permission questions wait for their context
// to end, and note that they did.
type patient struct {
	recorder
	mu        sync.Mutex
	cancelled []string // the tool calls whose question ended unanswered
}

func (w *patient) Permission(ctx context.Context, req agent.PermissionRequest) (string, bool) {
	<-ctx.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancelled = append(w.cancelled, string(req.Tool.ID))
	return "", false
}

// TestAgentRequests: the gateway answers the agent's requests it cannot
// serve with "method not found", one that does not parse with "invalid
// params", and a permission question the agent takes back with
// $/cancel_request stops waiting and is answered cancelled; the turn goes
// on.
func TestAgentRequests(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	var w patient
	s, err := p.NewSession(t.Context(), t.TempDir(), &w)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	stop, err := s.Prompt(t.Context(), "inbound")
	if err != nil || stop != "end_turn" {
		t.Fatalf("Prompt(inbound) = %q, %v", stop, err)
	}
	got := strings.Join(w.texts(), "")
	for _, want := range []string{
		`"id":"r1","error":{"code":-32601,`,
		`"id":"r2","error":{"code":-32602,`,
		`"id":"r3","result":{"outcome":{"outcome":"cancelled"}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the agent did not get %s; it got %q", want, got)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.cancelled) != 1 || w.cancelled[0] != "t2" {
		t.Errorf("questions ended by $/cancel_request: %q, want t2's", w.cancelled)
	}
}

// TestPromptGivenUp: a prompt whose caller gives up (its context ends)
// returns at once, and the agent is told with $/cancel_request for the
// request and session/cancel for the turn.
func TestPromptGivenUp(t *testing.T) {
	var fr frames
	prompted := make(chan string, 1)
	sink := func(dir agent.Direction, line []byte) {
		fr.sink(dir, line)
		if dir == agent.ToAgent && strings.Contains(string(line), `"session/prompt"`) {
			select {
			case prompted <- string(line):
			default:
			}
		}
	}
	p := start(t, rawSpec(), agent.Options{Frames: sink})
	s, err := p.NewSession(t.Context(), t.TempDir(), &recorder{})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-prompted
		cancel()
	}()
	if _, err := s.Prompt(ctx, "hang"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt(hang) after the context ended: %v, want context.Canceled", err)
	}
	fr.mu.Lock()
	var id string
	var told []string
	for i, l := range fr.lines {
		switch {
		case fr.dirs[i] != agent.ToAgent:
		case strings.Contains(l, `"session/prompt"`):
			id = l[strings.Index(l, `"id":`)+len(`"id":`):]
			id = id[:strings.IndexByte(id, ',')]
		case strings.Contains(l, `"$/cancel_request"`), strings.Contains(l, `"session/cancel"`):
			told = append(told, l)
		}
	}
	fr.mu.Unlock()
	want := []string{
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + id + `}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"raw-1"}}`,
	}
	if strings.Join(told, "\n") != strings.Join(want, "\n") {
		t.Errorf("told the agent\n%s\nwant\n%s", strings.Join(told, "\n"), strings.Join(want, "\n"))
	}
	// The connection is alive.
	if stop, err := s.Prompt(t.Context(), "hello"); err != nil || stop != "end_turn" {
		t.Errorf("Prompt(hello) after = %q, %v", stop, err)
	}
}
