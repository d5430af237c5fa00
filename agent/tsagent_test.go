package agent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/projector"
)

// tsAgent returns the spec of the TypeScript agent (built on
// @agentclientprotocol/sdk). Outside CI a missing node or build is a skip
// with the reason; in CI (where .ci/run builds it) it is a failure.
func tsAgent(t *testing.T) agent.Spec {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("testdata", "tsagent"))
	js := filepath.Join(dir, "dist", "agent.js")
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(js); err != nil {
		missing = "the TypeScript agent is not built; run: npm ci --prefix agent/testdata/tsagent && npm run --prefix agent/testdata/tsagent build"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("interop test cannot run in CI: %s", missing)
		}
		t.Skipf("skipping the TypeScript interop test: %s", missing)
	}
	return agent.Spec{Name: "tsagent", Command: []string{"node", js}, Dir: dir}
}

// permHandler records updates and answers permission requests with allow.
type permHandler struct {
	recorder
	changed chan struct{} // capacity 1: an update arrived
	mu      sync.Mutex
	reqs    []agent.PermissionRequest
}

func (h *permHandler) Update(u projector.Update, history bool) {
	h.recorder.Update(u, history)
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

func (h *permHandler) Permission(ctx context.Context, r agent.PermissionRequest) (string, bool) {
	h.mu.Lock()
	h.reqs = append(h.reqs, r)
	h.mu.Unlock()
	for _, o := range r.Options {
		if o.Kind == "allow_once" {
			return o.ID, true
		}
	}
	return "", false
}

func TestInteropTypeScriptAgent(t *testing.T) {
	spec := tsAgent(t)
	var fr frames
	p := start(t, spec, agent.Options{Frames: fr.sink})
	h := &permHandler{changed: make(chan struct{}, 1)}
	s, err := p.NewSession(t.Context(), t.TempDir(), h)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}

	if stop, err := s.Prompt(t.Context(), "hello"); err != nil || stop != "end_turn" {
		t.Fatalf("hello: %q, %v", stop, err)
	}
	if got := strings.Join(h.texts(), ""); got != "Hello from the TypeScript agent." {
		t.Errorf("hello text = %q", got)
	}

	if stop, err := s.Prompt(t.Context(), "tool"); err != nil || stop != "end_turn" {
		t.Fatalf("tool: %q, %v", stop, err)
	}
	var statuses []string
	h.mu.Lock()
	h.recorder.mu.Lock()
	for _, u := range h.updates {
		if u.Tool.ID == "call_echo_1" {
			statuses = append(statuses, u.Tool.Status.String())
			if u.Tag == projector.TagToolCall && (u.Tool.Title != "Run echo hi" || u.Tool.Kind != "execute") {
				t.Errorf("tool_call = %+v", u.Tool)
			}
		}
	}
	h.recorder.mu.Unlock()
	h.mu.Unlock()
	if got := strings.Join(statuses, ","); got != "pending,in_progress,completed" {
		t.Errorf("tool statuses = %s", got)
	}

	if stop, err := s.Prompt(t.Context(), "permission"); err != nil || stop != "end_turn" {
		t.Fatalf("permission: %q, %v", stop, err)
	}
	h.mu.Lock()
	if len(h.reqs) != 1 || h.reqs[0].Tool.Title != "Write notes.txt" || h.reqs[0].Tool.Kind != "edit" || len(h.reqs[0].Options) != 2 {
		t.Errorf("permission requests = %+v", h.reqs)
	}
	h.mu.Unlock()
	if texts := h.texts(); texts[len(texts)-1] != "Allowed." {
		t.Errorf("after allowing: %q", texts[len(texts)-1])
	}

	// Cancel: the turn ends with the agent's "cancelled" reply, which
	// needs session/cancel rather than cancelling the Prompt's context.
	result := make(chan string, 1)
	go func() {
		stop, err := s.Prompt(context.WithoutCancel(t.Context()), "slow")
		if err != nil {
			stop = err.Error()
		}
		result <- stop
	}()
	waitText(t, h, "tick 1")
	if err := s.Cancel(t.Context()); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	select {
	case stop := <-result:
		if stop != "cancelled" {
			t.Errorf("slow after cancel: %q", stop)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the TypeScript agent did not end the turn after session/cancel")
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if !strings.Contains(fr.lines[0], `"method":"initialize"`) {
		t.Errorf("first frame %s", fr.lines[0])
	}
}

// waitText waits until a chunk containing sub arrived, re-checking after
// every update the handler gets.
func waitText(t *testing.T, h *permHandler, sub string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, s := range h.texts() {
			if strings.Contains(s, sub) {
				return
			}
		}
		select {
		case <-deadline:
			t.Fatalf("no chunk with %q", sub)
		case <-h.changed:
		}
	}
}
