package agent_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/projector"
)

// approver is a recorder that answers every permission request with its
// first option and keeps the requests.
type approver struct {
	recorder
	mu   sync.Mutex
	reqs []agent.PermissionRequest
	qs   []agent.Question
}

func (a *approver) Question(_ context.Context, q agent.Question) agent.Answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.qs = append(a.qs, q)
	return agent.Answer{Action: agent.Accept, Content: map[string]any{"pick": "this"}}
}

func (a *approver) Permission(_ context.Context, req agent.PermissionRequest) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, req)
	return req.Options[0].ID, true
}

// TestSubagentRouting: a child's updates and requests reach its parent's
// handler marked as the child's, once the parent announced it (earlier
// ones wait for the announce); an announce of the session's own id, of a
// child of a session not its own, or of a 65th child is dropped, and
// their frames reach nobody (a request gets "cancelled"). Cancel cancels
// the session and the children at work that can be cancelled.
func TestSubagentRouting(t *testing.T) {
	fr := &frames{}
	p := start(t, rawSpec(), agent.Options{Frames: fr.sink})
	h := &approver{}
	s, err := p.NewSession(t.Context(), t.TempDir(), h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "subagents"); err != nil {
		t.Fatal(err)
	}
	h.recorder.mu.Lock()
	var kids []string
	var childText []string
	for _, u := range h.updates {
		switch {
		case u.Tag == projector.TagSubagent:
			kids = append(kids, u.Subagent.ID)
		case u.Child != "":
			if u.SessionID != u.Child {
				t.Errorf("a child's update on %q marked %q", u.SessionID, u.Child)
			}
			childText = append(childText, u.Child+":"+u.Text)
		}
	}
	h.recorder.mu.Unlock()
	if len(kids) != 64 || slices.Contains(kids, "raw-1") || slices.Contains(kids, "kid-x") || slices.Contains(kids, "kid-64") {
		t.Errorf("announces delivered: %d %v", len(kids), kids)
	}
	if got, want := strings.Join(childText, "|"), "kid-0:before its announce |kid-0:zero"; got != want {
		t.Errorf("children's updates delivered %q, want %q", got, want)
	}
	h.mu.Lock()
	if len(h.reqs) != 1 || h.reqs[0].Subagent != "kid-1" || h.reqs[0].SessionID != "kid-1" {
		t.Errorf("permission requests reaching the handler: %+v", h.reqs)
	}
	if len(h.qs) != 1 || h.qs[0].Subagent != "kid-1" || h.qs[0].SessionID != "kid-1" {
		t.Errorf("questions reaching the handler: %+v", h.qs)
	}
	h.mu.Unlock()
	for _, want := range []string{`"p1","result":{"outcome":{"outcome":"cancelled"}}`, `"p2","result":{"outcome":{"optionId":"ok","outcome":"selected"}}`, `"q1","result":{"action":"cancel"}`, `"q2","result":{"action":"accept","content":{"pick":"this"}}`} {
		if !strings.Contains(strings.Join(h.texts(), ""), want) {
			t.Errorf("the agent did not get %s; it got %q", want, h.texts())
		}
	}

	if err := s.Cancel(t.Context()); err != nil {
		t.Fatal(err)
	}
	var cancels []string
	fr.mu.Lock()
	for i, l := range fr.lines {
		if fr.dirs[i] == agent.ToAgent && strings.Contains(l, `"session/cancel"`) {
			cancels = append(cancels, l)
		}
	}
	fr.mu.Unlock()
	if len(cancels) != 2 || !strings.Contains(cancels[0], `"sessionId":"raw-1"`) || !strings.Contains(cancels[1], `"sessionId":"kid-0"`) {
		t.Errorf("session/cancel frames %q, want raw-1's and kid-0's (the one child that can be cancelled)", cancels)
	}
}
