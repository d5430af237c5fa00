// Package sessiontest helps the end-to-end tests that run the session
// router with the demo agent: the agent's spec and the ends of turns to
// wait for.
package sessiontest

import (
	"context"
	"os"
	"sync"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
)

// DemoAgent returns the spec that runs this test binary as the demo
// agent, keeping its sessions in stateDir. The package's TestMain must
// run demoagent.Main when the environment variable env is set.
func DemoAgent(stateDir, env string, extraEnv ...string) agent.Spec {
	exe, _ := os.Executable()
	return agent.Spec{
		Name:    "demo",
		Command: []string{exe, "-test.run=^$", "--state-dir", stateDir},
		// A race-enabled child would otherwise linger a second at exit.
		Env: append([]string{env + "=1", "GORACE=atexit_sleep_ms=0"}, extraEnv...),
	}
}

// TurnEnds records the ends of turns, per thread, for tests to wait on.
// Record is the router's OnTurnEnd. It is safe for concurrent use.
type TurnEnds struct {
	mu      sync.Mutex
	ends    map[channels.ThreadRef][]projector.TurnEnd
	changed chan struct{} // closed and replaced on every Record
}

// NewTurnEnds returns an empty record.
func NewTurnEnds() *TurnEnds {
	return &TurnEnds{ends: map[channels.ThreadRef][]projector.TurnEnd{}, changed: make(chan struct{})}
}

// Record notes that a turn ended in th.
func (e *TurnEnds) Record(th channels.ThreadRef, end projector.TurnEnd) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ends[th] = append(e.ends[th], end)
	close(e.changed)
	e.changed = make(chan struct{})
}

// Next waits for the next turn end in th not yet returned, and returns it;
// false when ctx ends first.
func (e *TurnEnds) Next(ctx context.Context, th channels.ThreadRef) (projector.TurnEnd, bool) {
	for {
		e.mu.Lock()
		if q := e.ends[th]; len(q) > 0 {
			e.ends[th] = q[1:]
			e.mu.Unlock()
			return q[0], true
		}
		changed := e.changed
		e.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return projector.TurnEnd{}, false
		}
	}
}
