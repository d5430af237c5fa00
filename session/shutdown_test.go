package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// wireEnv is an env whose demo agent records the frames it reads and
// writes (recordWire) in wireDir.
func wireEnv(t *testing.T, o envOptions) (*env, string) {
	t.Helper()
	wireDir := t.TempDir()
	o.agentEnv = append(o.agentEnv, "SESSION_TEST_WIRE_DIR="+wireDir)
	return newEnv(t, o), wireDir
}

// agentWire returns the frames the one demo agent that ran read (in) and
// wrote (out), from its own record.
func agentWire(t *testing.T, wireDir string) (in, out []string) {
	t.Helper()
	ins, _ := filepath.Glob(filepath.Join(wireDir, "*.in"))
	if len(ins) != 1 {
		t.Fatalf("%d agent processes recorded their wire, want 1", len(ins))
	}
	read := func(path string) []string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return lines(string(raw))
	}
	return read(ins[0]), read(strings.TrimSuffix(ins[0], ".in") + ".out")
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// checkEventLog checks that the session's event log holds every frame the
// agent exchanged and nothing else: the frames of each direction in order
// (the two directions interleave as they crossed).
func checkEventLog(t *testing.T, e *env, th channels.ThreadRef, wireDir string) {
	t.Helper()
	b, ok, err := e2(t, e.dir).Binding(t.Context(), th)
	if err != nil || !ok {
		t.Fatalf("binding of %s: %v, %v", th, ok, err)
	}
	logged := lines(eventLog(t, e.dir, b.SessionID))
	in, out := agentWire(t, wireDir)
	i, o := 0, 0
	for n, l := range logged {
		switch {
		case i < len(in) && l == in[i]:
			i++
		case o < len(out) && l == out[o]:
			o++
		case i == len(in) && !slices.Contains(out[o:], l):
			// Written to the agent after the last frame it read: it
			// exited with this one unread in its pipe (a session/cancel
			// sent while it was finishing the turn).
			t.Logf("event log line %d was sent but never read by the agent:\n%s", n+1, l)
		default:
			t.Fatalf("event log line %d is not the next frame either way:\n%s", n+1, l)
		}
	}
	if i < len(in) {
		t.Errorf("the event log lacks the last %d frame(s) the agent read, from:\n%s", len(in)-i, in[i])
	}
	if o < len(out) {
		t.Errorf("the event log lacks the last %d frame(s) the agent wrote, from:\n%s", len(out)-o, out[o])
	}
	if strings.Contains(e.logs.String(), "event log write failed") {
		t.Errorf("the log says an event log write failed:\n%s", e.logs.String())
	}
}

// Invariant 5 across a shutdown: every frame exchanged with the agent,
// up to its exit, is in the event log, in order; none is written to a
// closed log.
func TestEventLogKeepsEveryFrameAcrossShutdown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prompt string
		cut    func(e *env, th channels.ThreadRef)
		want   string // a frame the log must hold
	}{
		{"mid-turn", "slow 400", func(e *env, th channels.ThreadRef) {
			e.waitOp(th, "streaming", func(op channeltest.Op) bool { return strings.Contains(op.Text, "quick") })
		}, `"stopReason":"cancelled"`},
		{"permission pending", "permission", func(e *env, th channels.ThreadRef) {
			e.waitOp(th, "the permission prompt", isPrompt)
		}, `"stopReason":"cancelled"`},
		{"at turn end", "echo all done", func(e *env, th channels.ThreadRef) { e.waitEnd(th) }, `"stopReason":"end_turn"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, wireDir := wireEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
			th := e.rec.Thread("log")
			e.say(th, ann, tc.prompt)
			tc.cut(e, th)
			e.close()
			checkEventLog(t, e, th, wireDir)
			b, _, _ := e2(t, e.dir).Binding(t.Context(), th)
			if log := eventLog(t, e.dir, b.SessionID); !strings.Contains(log, tc.want) {
				t.Errorf("the event log lacks %s", tc.want)
			}
		})
	}
}

// promptStatus returns the stored status of the prompt shown as op.
func promptStatus(t *testing.T, dir string, op channeltest.Op) store.PromptStatus {
	t.Helper()
	id, _, _ := strings.Cut(op.Options[0], "/")
	p, ok, err := e2(t, dir).Prompt(t.Context(), id)
	if err != nil || !ok {
		t.Fatalf("stored prompt %s: %v, %v", id, ok, err)
	}
	return p.Status
}

// A permission prompt pending at a shutdown loses its buttons and says
// the gateway restarted; the agent's turn ends cancelled.
func TestPendingPromptExpiresAtShutdown(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
	th := e.rec.Thread("p")
	e.say(th, ann, "permission")
	op := e.waitOp(th, "the permission prompt", isPrompt)
	e.close()
	m, _ := e.rec.Message(op.Msg)
	if !strings.Contains(m.Text, "Expired: the gateway restarted") || m.Options != nil {
		t.Errorf("prompt after shutdown = %q with buttons %v, want it expired without buttons", m.Text, m.Options)
	}
	if got := promptStatus(t, e.dir, op); got != store.PromptExpired {
		t.Errorf("stored prompt status %q, want expired", got)
	}
	// The next start has nothing left to edit.
	edits := len(e.rec.OpsIn(th))
	e2 := newEnv(t, envOptions{recorder: e.rec, dir: e.dir, rec: channeltest.Options{Edit: true, Prompt: true}})
	e2.close()
	if ops := e.rec.OpsIn(th); len(ops) != edits {
		t.Errorf("the next start touched the thread again: %v", ops[edits:])
	}
}

// When the platform cannot take the edit at shutdown, the prompt stays
// pending in the store and the next start edits it, trying again until
// the platform takes it: its buttons never stay live.
func TestPendingPromptLeftForTheNextStart(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
	th := e.rec.Thread("p")
	e.say(th, ann, "permission")
	op := e.waitOp(th, "the permission prompt", isPrompt)
	outage := errors.New("503 service unavailable")
	e.rec.Inject(channeltest.InjectEdit, outage) // at shutdown
	e.rec.Inject(channeltest.InjectEdit, outage) // the next start's first try
	e.close()
	if m, _ := e.rec.Message(op.Msg); m.Options == nil {
		t.Fatalf("the prompt lost its buttons though the edit failed: %q", m.Text)
	}
	if got := promptStatus(t, e.dir, op); got != store.PromptPending {
		t.Fatalf("stored prompt status %q, want pending for the next start", got)
	}
	e2 := newEnv(t, envOptions{recorder: e.rec, dir: e.dir, rec: channeltest.Options{Edit: true, Prompt: true}})
	e2.waitOp(th, "the stale prompt edited", func(o channeltest.Op) bool {
		return o.Op == "edit" && o.Msg == op.Msg && strings.Contains(o.Text, "gateway restarted")
	})
	e2.close()
	m, _ := e.rec.Message(op.Msg)
	if !strings.Contains(m.Text, "gateway restarted") || m.Options != nil {
		t.Errorf("prompt after the restart = %q with buttons %v", m.Text, m.Options)
	}
	if got := promptStatus(t, e.dir, op); got != store.PromptExpired {
		t.Errorf("stored prompt status %q, want expired", got)
	}
	if !strings.Contains(e2.logs.String(), "trying again") {
		t.Errorf("the failed first edit at start was not retried; log:\n%s", e2.logs.String())
	}
}

const interrupted = "Interrupted: the gateway is restarting. Send your message again when it is back."

func notices(e *env, th channels.ThreadRef, sub string) int {
	n := 0
	for _, op := range e.rec.OpsIn(th) {
		if op.Op == "send" && op.Kind == channels.KindNotice && strings.Contains(op.Text, sub) {
			n++
		}
	}
	return n
}

// A shutdown that cuts a turn off says so in the thread, and in the log
// with counts; the next start does not say it again.
func TestShutdownMidTurnTellsTheThread(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th, idle := e.rec.Thread("cut"), e.rec.Thread("idle")
	e.say(idle, bob, "echo done already")
	e.waitEnd(idle)
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streaming", func(op channeltest.Op) bool { return strings.Contains(op.Text, "quick") })
	e.close()
	if n := notices(e, th, interrupted); n != 1 {
		t.Errorf("%d interrupted notices in the cut thread, want 1; ops: %v", n, e.rec.OpsIn(th))
	}
	if n := notices(e, idle, "Interrupted"); n != 0 {
		t.Errorf("the idle thread was told it was interrupted")
	}
	for _, want := range []string{"shutting down", "shut down", "turnsInterrupted=1", "agentsStopped=2"} {
		if !strings.Contains(e.logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, e.logs.String())
		}
	}
	if rs, err := e2(t, e.dir).RunningTurns(t.Context()); err != nil || len(rs) != 0 {
		t.Errorf("running turns left after a shutdown that told the thread: %v, %v", rs, err)
	}
	e2 := newEnv(t, envOptions{recorder: e.rec, dir: e.dir, rec: channeltest.Options{Edit: true}})
	e2.close()
	if n := notices(e, th, "Interrupted"); n != 1 {
		t.Errorf("%d interrupted notices after the restart, want still 1", n)
	}
}

// down is a channel whose posts fail while it is down.
type down struct {
	channels.Adapter
	down atomic.Bool
}

func (d *down) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	if d.down.Load() {
		return channels.Handle{}, errors.New("503 service unavailable")
	}
	return d.Adapter.Post(ctx, t, m)
}

func (d *down) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	return d.Adapter.(channels.Editor).Edit(ctx, h, m)
}

// When the shutdown cannot tell the thread (the platform is down), the
// next start does.
func TestInterruptedTurnIsToldAtTheNextStart(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true})
	ad := &down{Adapter: rec.Adapter()}
	e := newEnv(t, envOptions{recorder: rec, adapter: ad, limits: session.Limits{ShutdownGrace: 300 * time.Millisecond}})
	th := rec.Thread("cut")
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streaming", func(op channeltest.Op) bool { return strings.Contains(op.Text, "quick") })
	ad.down.Store(true)
	e.close()
	if n := notices(e, th, "Interrupted"); n != 0 {
		t.Fatalf("the thread was told while its platform was down?")
	}
	if rs, err := e2(t, e.dir).RunningTurns(t.Context()); err != nil || len(rs) != 1 || rs[0].Thread != th {
		t.Fatalf("running turns after a shutdown that could not tell the thread: %v, %v; want the cut turn", rs, err)
	}
	e2 := newEnv(t, envOptions{recorder: rec, dir: e.dir})
	e2.waitOp(th, "the notice at start", func(op channeltest.Op) bool {
		return op.Kind == channels.KindNotice && strings.Contains(op.Text, "Interrupted: the gateway restarted while the agent was working on this")
	})
	e2.close()
	if rs, err := e2e(t, e.dir).RunningTurns(t.Context()); err != nil || len(rs) != 0 {
		t.Errorf("running turns after the thread was told: %v, %v", rs, err)
	}
}

// downReacting is down with the recorder's reactions.
type downReacting struct{ *down }

func (d downReacting) React(ctx context.Context, h channels.Handle, emoji string) error {
	return d.Adapter.(channels.Reactor).React(ctx, h, emoji)
}

func (d downReacting) Unreact(ctx context.Context, h channels.Handle, emoji string) error {
	return d.Adapter.(channels.Reactor).Unreact(ctx, h, emoji)
}

// A turn a restart cut off has its message marked stopped (⏹️ in place
// of 👀) at the next start, where the thread has reactions.
func TestCutOffTurnsMessageIsMarkedStopped(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true, Typing: true, Prompt: true, React: true})
	d := &down{Adapter: rec.Adapter()}
	e := newEnv(t, envOptions{recorder: rec, adapter: downReacting{d}, limits: session.Limits{ShutdownGrace: 300 * time.Millisecond}})
	th := rec.Thread("cut")
	e.say(th, ann, "slow 400")
	h := channels.MessageID("in-slow 400")
	e.waitOp(th, "the message taken", func(op channeltest.Op) bool { return op.Op == "react" && op.Text == channels.ReactTaken })
	e.waitOp(th, "streaming", func(op channeltest.Op) bool { return strings.Contains(op.Text, "quick") })
	d.down.Store(true)
	e.close()
	e2 := newEnv(t, envOptions{recorder: rec, dir: e.dir})
	e2.waitOp(th, "the message marked stopped", func(op channeltest.Op) bool {
		return op.Op == "react" && op.Msg == h && op.Text == channels.ReactStopped
	})
	e2.close()
	if got := rec.Reactions(h); strings.Join(got, " ") != channels.ReactStopped {
		t.Errorf("the cut-off message's reactions = %q, want only %s", got, channels.ReactStopped)
	}
}

// A shutdown while the agent is still starting tells the thread too: its
// message never ran.
func TestShutdownWhileTheAgentStarts(t *testing.T) {
	fifo, pid := muteFIFO(t)
	e := newEnv(t, envOptions{
		rec:      channeltest.Options{Edit: true},
		agentEnv: []string{"SESSION_TEST_MUTE_AGENT=" + fifo},
		limits:   session.Limits{StartTimeout: time.Hour},
	})
	th := e.rec.Thread("starting")
	e.say(th, ann, "hello")
	p := pid(e.ctx()) // the gateway waits for initialize now
	e.close()
	if n := notices(e, th, interrupted); n != 1 {
		t.Errorf("%d interrupted notices, want 1; ops: %v", n, e.rec.OpsIn(th))
	}
	if !gone(p) {
		t.Errorf("the agent (pid %d) still runs after the shutdown", p)
	}
}
