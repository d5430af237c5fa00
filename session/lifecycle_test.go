package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

func eventLog(t *testing.T, dir, sessionID string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "events", escape(sessionID)+".ndjson"))
	if err != nil {
		t.Fatalf("event log: %v", err)
	}
	return string(raw)
}

func TestResumeAfterRestart(t *testing.T) {
	e1 := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e1.rec.Thread("r")
	e1.say(th, ann, "echo first answer")
	e1.waitEnd(th)
	b1, _, _ := e1.st.Binding(e1.ctx(), th)
	e1.close()

	e2 := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, dir: e1.dir})
	e2.say(th, ann, "echo second answer")
	if end := e2.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn after restart: %+v", end)
	}
	if got := e2.text(th); got != "second answer" {
		t.Errorf("thread text after restart = %q, want only the new answer (history is not posted again)", got)
	}
	b2, _, _ := e2.st.Binding(e2.ctx(), th)
	if b2.SessionID != b1.SessionID {
		t.Errorf("session %q after restart, want %q resumed", b2.SessionID, b1.SessionID)
	}
	e2.close()
	// The demo agent advertises session/resume: nothing is replayed.
	if log := eventLog(t, e1.dir, b1.SessionID); !strings.Contains(log, `"method":"session/resume"`) || strings.Contains(log, `"method":"session/load"`) {
		t.Error("the session was not resumed with session/resume (and no session/load)")
	}
	// The transcript holds both turns once each.
	es, err := e2e(t, e1.dir).Entries(t.Context(), b1.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, en := range es {
		if m, ok := en.Body.(store.Message); ok {
			msgs = append(msgs, string(m.Role)+":"+m.Text)
		}
	}
	want := "user:echo first answer|assistant:first answer|user:echo second answer|assistant:second answer"
	if got := strings.Join(msgs, "|"); got != want {
		t.Errorf("transcript\n got %s\nwant %s", got, want)
	}
}

func e2e(t *testing.T, dir string) *store.Store { return e2(t, dir) }

func TestProcessCapReapsIdleAndWaits(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, limits: session.Limits{MaxProcesses: 1}})
	a, b := e.rec.Thread("a"), e.rec.Thread("b")
	e.say(a, ann, "echo from a")
	e.waitEnd(a)
	// b needs the only slot: a's idle agent is stopped for it.
	e.say(b, ann, "echo from b")
	e.waitAgent(a, "stopped")
	if end := e.waitEnd(b); end.StopReason != "end_turn" {
		t.Fatalf("b: %+v", end)
	}
	// a comes back, resuming its session; then, while a works, b waits
	// for the slot and gets it when a's turn is over.
	e.say(a, ann, "slow 400")
	e.waitOp(a, "a streaming", func(op channeltest.Op) bool {
		return op.Kind == channels.KindText && strings.Contains(op.Text, "quick")
	})
	e.say(b, bob, "echo again")
	e.waitOp(b, "the waiting notice", hasText("Waiting for a free agent"))
	e.say(a, ann, "stop")
	e.waitEnd(a)
	if end := e.waitEnd(b); end.StopReason != "end_turn" || !strings.HasSuffix(e.text(b), "again") {
		t.Errorf("b after waiting: %+v, text %q", end, e.text(b))
	}
}

func TestIdleAgentIsReapedAndResumed(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, limits: session.Limits{IdleTimeout: 100 * time.Millisecond}})
	th := e.rec.Thread("idle")
	e.say(th, ann, "echo one")
	e.waitEnd(th)
	e.waitAgent(th, "stopped")
	e.say(th, ann, "echo two")
	e.waitEnd(th)
	b, _, _ := e.st.Binding(e.ctx(), th)
	e.close()
	log := eventLog(t, e.dir, b.SessionID)
	if strings.Count(log, `"method":"initialize"`) != 2 || !strings.Contains(log, `"method":"session/resume"`) {
		t.Errorf("want two processes, the second resuming with session/resume; event log:\n%s", log)
	}
}

func TestCancelCallFailingStillCleansUp(t *testing.T) {
	exe, _ := os.Executable()
	spec := agent.Spec{Name: "deaf", Command: []string{exe, "-test.run=^$"}, Env: []string{"SESSION_TEST_DEAF_AGENT=1", "GORACE=atexit_sleep_ms=0"}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}, spec: &spec, grace: 200 * time.Millisecond})
	th := e.rec.Thread("deaf")
	e.say(th, ann, "work")
	e.waitOp(th, "text", hasText("working"))
	e.say(th, bob, "echo queued")
	e.say(th, ann, "stop all")
	end := e.waitEnd(th)
	if end.StopReason != "cancelled" {
		t.Errorf("turn end %+v", end)
	}
	e.waitOp(th, "the stop notice", hasText("Stopped by Ann. The agent did not stop within 200ms"))
	e.waitOp(th, "typing stopped", isTypingStop)
	e.close()
	for _, m := range e.rec.Messages() {
		if strings.Contains(m.Text, "queued") && m.Kind == channels.KindText {
			t.Error("the queued message ran after the stop")
		}
	}
}

func TestBurstIntoASlowChannel(t *testing.T) {
	p := session.DefaultPolicy()
	p.Stream.MaxTurnChars = 100000 // the burst is 48,890 characters
	e := newEnv(t, envOptions{policy: &p, rec: channeltest.Options{Edit: true, Limits: channels.Limits{MinEditInterval: 200 * time.Millisecond, MinPostInterval: 100 * time.Millisecond}}})
	th := e.rec.Thread("burst")
	for range 5 {
		e.rec.Inject(channeltest.InjectEdit, &channels.RateLimitError{RetryAfter: 50 * time.Millisecond})
	}
	e.say(th, ann, "burst 10000")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("burst turn: %+v", end)
	}
	var want strings.Builder
	for i := range 10000 {
		want.WriteString(strconv.Itoa(i) + " ")
	}
	if got := e.text(th); got != want.String() {
		t.Errorf("delivered %d chars, want %d; first difference at %d", len(got), want.Len(), firstDiff(got, want.String()))
	}
	e.say(th, ann, "echo still connected")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Errorf("after the burst: %+v", end)
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestAuthenticateWhenRequired(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, agentEnv: []string{"DEMO_AGENT_AUTH_ENV=DEMO_TOKEN", "DEMO_TOKEN=secret"}})
	th := e.rec.Thread("auth")
	e.say(th, ann, "echo authenticated")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn: %+v", end)
	}
	b, _, _ := e.st.Binding(e.ctx(), th)
	e.close()
	if log := eventLog(t, e.dir, b.SessionID); !strings.Contains(log, `"method":"authenticate"`) {
		t.Error("no authenticate in the event log")
	}
}

func TestStalePromptsExpireOnRestart(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true, Prompt: true})
	th := rec.Thread("stale")
	h, err := rec.Adapter().(channels.Prompter).Prompt(t.Context(), th, channels.Choice{Text: "🔐 Edit main.go?", Options: []channels.Option{{ID: "old/allow_once", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := e2(t, dir)
	if err := st.AddPrompt(t.Context(), store.Prompt{ID: "old", Thread: th, Title: "Edit main.go", MessageID: string(h.ID), Status: store.PromptPending, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	e := newEnv(t, envOptions{recorder: rec, dir: dir})
	e.waitOp(th, "the stale prompt edited", func(op channeltest.Op) bool {
		return op.Op == "edit" && op.Msg == h.ID && strings.Contains(op.Text, "gateway restarted")
	})
	// Its buttons are gone; a click that still arrives is answered "expired".
	e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Choice: &channels.ChoiceAnswer{Prompt: h, OptionID: "old/allow_once"}, Reply: rec.ReplyFunc(th)})
	e.waitOp(th, "the expired answer", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, "no longer waiting")
	})
}

func TestAccessPolicy(t *testing.T) {
	t.Run("default deny, refused once", func(t *testing.T) {
		e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, access: map[string]session.AccessRule{"discord": {}}})
		th := e.rec.Thread("x")
		e.say(th, ann, "echo hi")
		e.say(th, ann, "echo hi again")
		e.close()
		var replies, texts int
		for _, op := range e.rec.OpsIn(th) {
			switch {
			case op.Op == "reply" && strings.Contains(op.Text, "don't have access"):
				replies++
			case op.Kind == channels.KindText:
				texts++
			}
		}
		if replies != 1 || texts != 0 {
			t.Errorf("%d refusals and %d answers, want 1 and 0", replies, texts)
		}
	})
	t.Run("users and roles", func(t *testing.T) {
		rule := session.AccessRule{Users: []string{ann.ID}, Roles: []string{"r-dev"}}
		e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, access: map[string]session.AccessRule{"web": rule}})
		dev := channels.Author{ID: "u-dev", Name: "Dev", Roles: []string{"r-dev"}}
		for i, who := range []channels.Author{ann, dev} {
			th := e.rec.Thread("u" + strconv.Itoa(i))
			e.say(th, who, "echo ok")
			if end := e.waitEnd(th); end.StopReason != "end_turn" {
				t.Errorf("%s: %+v", who.Name, end)
			}
		}
		th := e.rec.Thread("bob")
		e.say(th, bob, "echo no")
		e.waitOp(th, "the refusal", func(op channeltest.Op) bool { return op.Op == "reply" })
		// Bob cannot stop Ann's turn either.
		th2 := e.rec.Thread("annslow")
		e.say(th2, ann, "slow 20")
		e.say(th2, bob, "stop")
		if end := e.waitEnd(th2); end.StopReason != "end_turn" {
			t.Errorf("Bob stopped Ann's turn: %+v", end)
		}
	})
	t.Run("an open platform's rule that lists only approvers admits everyone", func(t *testing.T) {
		// The web chat admits people itself (by token); naming who
		// approves must not shut everyone else out.
		rule := session.AccessRule{Approvers: []string{ann.ID}}
		e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, access: map[string]session.AccessRule{"web": rule}, open: true})
		th := e.rec.Thread("bob-open")
		e.say(th, bob, "echo ok")
		if end := e.waitEnd(th); end.StopReason != "end_turn" {
			t.Errorf("bob on an open platform: %+v, want his turn answered", end)
		}
	})
	t.Run("bots are ignored", func(t *testing.T) {
		e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
		th := e.rec.Thread("bot")
		e.say(th, channels.Author{ID: "b1", Name: "OtherBot", Bot: true}, "echo beep")
		e.close()
		if ops := e.rec.OpsIn(th); len(ops) != 0 {
			t.Errorf("a bot's message caused %v", ops)
		}
	})
}

func TestNoLoadMeansANewSessionWithANotice(t *testing.T) {
	dir := t.TempDir()
	spec := demoSpec(filepath.Join(dir, "demo-state"))
	spec.Command = append(spec.Command, "--no-load")
	e1 := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, dir: dir, spec: &spec})
	th := e1.rec.Thread("nl")
	e1.say(th, ann, "echo one")
	e1.waitEnd(th)
	b1, _, _ := e1.st.Binding(e1.ctx(), th)
	e1.close()
	e2 := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, dir: dir, spec: &spec})
	e2.say(th, ann, "echo two")
	e2.waitEnd(th)
	e2.waitOp(th, "the new-session notice", hasText("This agent cannot resume sessions, so this is a new session"))
	b2, _, _ := e2.st.Binding(e2.ctx(), th)
	if b2.SessionID == b1.SessionID {
		t.Errorf("same session %q: want a new one", b2.SessionID)
	}
}

// stalled is a channel whose posts block until released: a thread whose
// platform hangs.
type stalled struct {
	channels.Adapter
	release chan struct{}
	entered chan struct{}
}

func (s *stalled) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return channels.Handle{}, ctx.Err()
	}
	return s.Adapter.Post(ctx, t, m)
}

func TestStopDoesNotWaitBehindDelivery(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	st := &stalled{Adapter: rec.Adapter(), release: make(chan struct{}), entered: make(chan struct{}, 1)}
	dir := t.TempDir()
	e := newEnv(t, envOptions{recorder: rec, dir: dir, adapter: st, rec: channeltest.Options{Platform: "web"}})
	th := rec.Thread("stall")
	e.say(th, ann, "slow 400")
	<-st.entered // the lane is stuck in a post
	e.say(th, ann, "stop")
	if end := e.waitEndRaw(th); end.StopReason != "cancelled" {
		t.Errorf("turn end %+v, want cancelled while the channel was stalled", end)
	}
	close(st.release)
}

// titled is a channel whose threads have names.
type titled struct {
	channels.Adapter
	titles chan string
}

func (a *titled) SetTitle(ctx context.Context, t channels.ThreadRef, title string) error {
	a.titles <- title
	return nil
}

func TestSessionTitleRenamesTheThread(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true})
	ad := &titled{Adapter: rec.Adapter(), titles: make(chan string, 4)}
	e := newEnv(t, envOptions{recorder: rec, adapter: ad, rec: channeltest.Options{Platform: "web"}})
	th := rec.Thread("title")
	e.say(th, ann, "title Fix the flaky test")
	e.waitEnd(th)
	select {
	case got := <-ad.titles:
		if got != "Fix the flaky test" {
			t.Errorf("title = %q", got)
		}
	case <-e.ctx().Done():
		t.Fatal("the thread was never renamed")
	}
	b, _, _ := e.st.Binding(e.ctx(), th)
	if b.Title != "Fix the flaky test" {
		t.Errorf("binding title = %q", b.Title)
	}
}

// TestResumeByLoadWithoutResume: an agent that advertises session/load
// but not session/resume is resumed by replaying its history, which the
// thread does not show again.
func TestResumeByLoadWithoutResume(t *testing.T) {
	dir := t.TempDir()
	spec := demoSpec(filepath.Join(dir, "demo-state"))
	spec.Command = append(spec.Command, "--no-resume")
	e1 := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, dir: dir, spec: &spec})
	th := e1.rec.Thread("nr")
	e1.say(th, ann, "echo first answer")
	e1.waitEnd(th)
	b1, _, _ := e1.st.Binding(e1.ctx(), th)
	e1.close()
	e2 := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, dir: dir, spec: &spec})
	e2.say(th, ann, "echo second answer")
	e2.waitEnd(th)
	if got := e2.text(th); got != "second answer" {
		t.Errorf("thread text after restart = %q, want only the new answer (the replayed history is not posted)", got)
	}
	b2, _, _ := e2.st.Binding(e2.ctx(), th)
	e2.close()
	if b2.SessionID != b1.SessionID {
		t.Errorf("session %q after restart, want %q resumed", b2.SessionID, b1.SessionID)
	}
	log := eventLog(t, dir, b1.SessionID)
	if !strings.Contains(log, `"method":"session/load"`) || strings.Contains(log, `"method":"session/resume"`) {
		t.Errorf("want the session loaded with session/load (no session/resume advertised); event log:\n%s", log)
	}
}

// slowClose is an event log whose Close waits for release: the last
// frames of a process being stopped are still being written.
type slowClose struct {
	session.FrameLog
	release <-chan struct{}
}

func (s slowClose) Close() error {
	<-s.release
	return s.FrameLog.Close()
}

// TestIdleAgentResumedWhileItsLogCloses (issue 30 point 13, the cause of
// TestIdleAgentIsReapedAndResumed's failure under load): a reaped agent's
// event log is closed once its process is gone, on a goroutine of its
// own; a message that starts the session's next process before that
// close is done waits for it, instead of finding the log locked and
// losing the new process's frames ("cannot open the event log").
func TestIdleAgentResumedWhileItsLogCloses(t *testing.T) {
	logs := t.TempDir()
	release := make(chan struct{})
	var opened atomic.Int32
	open := func(id string) (session.FrameLog, error) {
		w, err := eventlog.Open(filepath.Join(logs, "events"), id, eventlog.Config{})
		if err != nil {
			return nil, err
		}
		if opened.Add(1) == 1 {
			return slowClose{FrameLog: w, release: release}, nil
		}
		return w, nil
	}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, frameLog: open, limits: session.Limits{IdleTimeout: 100 * time.Millisecond}})
	th := e.rec.Thread("idle")
	e.say(th, ann, "echo one")
	e.waitEnd(th)
	e.waitAgent(th, "stopped") // reaped; its log's Close waits for release
	e.say(th, ann, "echo two")
	const waits, locked = "waiting for the session's last event log to close", "cannot open the event log"
	if got := e.logs.waitForAny(t, e.ctx(), waits, locked); got != waits {
		close(release)
		t.Fatalf("the second process's log: %q, want it to wait for the first's", got)
	}
	close(release)
	e.waitEnd(th)
	b, _, _ := e.st.Binding(e.ctx(), th)
	e.close()
	log := eventLog(t, logs, b.SessionID)
	if strings.Count(log, `"method":"initialize"`) != 2 || !strings.Contains(log, `"method":"session/resume"`) {
		t.Errorf("want both processes in the event log, the second resuming; event log:\n%s", log)
	}
	if strings.Contains(e.logs.String(), "cannot open the event log") {
		t.Errorf("the second process's log could not be opened:\n%s", e.logs.String())
	}
}
