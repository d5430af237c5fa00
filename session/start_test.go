package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// muteFIFO makes the FIFO a mute agent reports to and returns its path
// and a function that waits for the agent's pid.
func muteFIFO(t *testing.T) (string, func(context.Context) int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mute")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(path) // blocks until the agent opens it
		got <- string(b)
	}()
	t.Cleanup(func() {
		// Unblock the reader if no agent ever wrote.
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-got
	})
	return path, func(ctx context.Context) int {
		t.Helper()
		select {
		case s := <-got:
			got <- s // for the cleanup
			pid, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				t.Fatalf("the mute agent wrote %q", s)
			}
			return pid
		case <-ctx.Done():
			t.Fatal("the agent was never asked to initialize")
			return 0
		}
	}
}

// gone reports whether process pid no longer exists.
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// An agent that does not start within agents.startTimeout is stopped and
// the thread is told; typing, shown while it started, stops. The mute agent
// never answers initialize, so the budget runs out however fast or slow the
// process comes up: nothing here waits for the agent to do anything, and
// its pid comes from the gateway as soon as it runs. "slow to come up"
// holds the agent before it reads its stdin until it is killed, which is
// what a loaded machine may do to a 300 ms budget.
func TestAgentThatDoesNotStartIsGivenUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		slow bool
	}{
		{name: "reads initialize and never answers"},
		{name: "slow to come up", slow: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"SESSION_TEST_MUTE_AGENT="}
			if tc.slow {
				hold := filepath.Join(t.TempDir(), "hold")
				if err := syscall.Mkfifo(hold, 0o600); err != nil {
					t.Fatal(err)
				}
				// Nobody opens it for writing: the agent waits in open(2).
				env = append(env, "SESSION_TEST_MUTE_HOLD="+hold)
			}
			e := newEnv(t, envOptions{
				rec:      channeltest.Options{Edit: true, Typing: true},
				agentEnv: env,
				limits:   session.Limits{StartTimeout: 300 * time.Millisecond},
			})
			th := e.rec.Thread("mute")
			e.say(th, ann, "hello")
			e.waitOp(th, "typing while the agent starts", func(op channeltest.Op) bool { return op.Op == "typing" && op.State != "stop" })
			p := e.waitSpawned()
			e.waitOp(th, "the notice", func(op channeltest.Op) bool {
				return op.Kind == channels.KindNotice && strings.Contains(op.Text, "did not start within 300ms")
			})
			e.waitOp(th, "typing stopped", isTypingStop)
			if !gone(p) {
				t.Errorf("the agent (pid %d) still runs after it was given up", p)
			}
		})
	}
}

// "stop" while the agent is still starting gives the start up at once.
func TestStopWhileTheAgentStarts(t *testing.T) {
	fifo, pid := muteFIFO(t)
	e := newEnv(t, envOptions{
		rec:      channeltest.Options{Edit: true, Typing: true},
		agentEnv: []string{"SESSION_TEST_MUTE_AGENT=" + fifo},
		limits:   session.Limits{StartTimeout: time.Hour},
	})
	th := e.rec.Thread("mute")
	e.say(th, ann, "hello")
	p := pid(e.ctx()) // the gateway waits for initialize now
	e.say(th, ann, "stop")
	e.waitOp(th, "the notice", func(op channeltest.Op) bool {
		return op.Kind == channels.KindNotice && strings.Contains(op.Text, "Stopped by Ann before the agent began.")
	})
	e.waitOp(th, "typing stopped", isTypingStop)
	if !gone(p) {
		t.Errorf("the agent (pid %d) still runs after the stop", p)
	}
}
