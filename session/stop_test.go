package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

func isTypingStop(op channeltest.Op) bool { return op.Op == "typing" && op.State == "stop" }

func TestStopCancelsTheTurn(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true, Prompt: true}})
	th := e.rec.Thread("s")
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
	e.say(th, bob, "echo queued behind the slow turn")
	e.say(th, ann, "Stop!")
	end := e.waitEnd(th)
	if end.StopReason != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled (the agent honoured session/cancel)", end.StopReason)
	}
	notices := e.messages(th, channels.KindNotice)
	var stopped int
	for _, n := range notices {
		if strings.Contains(n.Text, "Stopped by Ann.") {
			stopped++
		}
		if strings.Contains(n.Text, "did not stop") {
			t.Errorf("notice %q: the agent stopped in time", n.Text)
		}
	}
	if stopped != 1 {
		t.Errorf("got %d 'Stopped by Ann' notices, want 1; notices: %v", stopped, notices)
	}
	e.waitOp(th, "typing stopped", isTypingStop)
	// The stop ended the running turn only: Ann is told, privately, that
	// Bob's message stays, and it runs next.
	e.waitOp(th, "the queue kept", isReply("1 queued message stays and runs next; say `stop all` to drop it too."))
	e.waitEnd(th)
	if !strings.HasSuffix(e.text(th), "queued behind the slow turn") {
		t.Errorf("text %q, want the queued message answered after the stop", e.text(th))
	}
}

// "stop all" ends the running turn and drops the messages queued behind
// it; the thread's next message runs as usual.
func TestStopAllDropsTheQueue(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true, Prompt: true}})
	th := e.rec.Thread("all")
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
	e.say(th, bob, "echo queued behind the slow turn")
	e.say(th, ann, "Stop all!")
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled", end.StopReason)
	}
	e.say(th, ann, "echo after")
	e.waitEnd(th)
	if strings.Contains(e.text(th), "queued behind") {
		t.Error("a message queued before the stop all ran anyway")
	}
	if !strings.HasSuffix(e.text(th), "after") {
		t.Errorf("text %q, want the next turn to run", e.text(th))
	}
	for _, op := range e.rec.OpsIn(th) {
		if op.Op == "reply" && strings.Contains(op.Text, "stays and runs next") {
			t.Errorf("stop all said the queue stays: %q", op.Text)
		}
	}
}

func TestStopIgnoredKillsTheAgent(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}, grace: 300 * time.Millisecond})
	th := e.rec.Thread("k")
	e.say(th, ann, "ignore-cancel 60")
	e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
	e.say(th, ann, "stop")
	end := e.waitEnd(th)
	if end.StopReason != "cancelled" {
		t.Errorf("stop reason %q", end.StopReason)
	}
	e.waitOp(th, "the kill notice", hasText("Stopped by Ann. The agent did not stop within 300ms, so it was restarted."))
	// The next message gets a working agent (resumed with session/resume).
	e.say(th, ann, "echo alive")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Errorf("next turn: %+v", end)
	}
	if !strings.HasSuffix(e.text(th), "alive") {
		t.Errorf("text %q", e.text(th))
	}
}

func TestStopAnswersPendingPromptsCancelled(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
	th := e.rec.Thread("sp")
	e.say(th, ann, "permission")
	op := e.waitOp(th, "the prompt", isPrompt)
	e.say(th, ann, "stop")
	end := e.waitEnd(th)
	if end.StopReason != "cancelled" {
		t.Errorf("stop reason %q, want cancelled (the agent got a cancelled outcome)", end.StopReason)
	}
	e.waitOp(th, "the prompt edited", func(o channeltest.Op) bool {
		return o.Op == "edit" && o.Msg == op.Msg && strings.Contains(o.Text, "Cancelled (stopped by Ann)")
	})
}

func TestCrashMidTurn(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}})
	th := e.rec.Thread("c")
	e.say(th, ann, "crash")
	end := e.waitEnd(th)
	if end.Err == "" || !strings.Contains(end.Err, "exit status 3") {
		t.Fatalf("turn end %+v, want an error naming the exit status", end)
	}
	e.waitOp(th, "the crash notice", hasText("The agent failed: its process exited (exit status 3). Your next message starts it again."))
	e.waitOp(th, "typing stopped", isTypingStop)
	e.say(th, ann, "echo back again")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Errorf("turn after the crash: %+v", end)
	}
	if !strings.HasSuffix(e.text(th), "back again") {
		t.Errorf("text %q", e.text(th))
	}
}

func TestQueueAndInterrupt(t *testing.T) {
	t.Run("queue", func(t *testing.T) {
		e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
		th := e.rec.Thread("q")
		e.say(th, ann, "slow 10")
		e.say(th, bob, "echo second")
		e.waitOp(th, "the queued notice", hasText("Queued: 1 ahead of it."))
		if end := e.waitEnd(th); end.StopReason != "end_turn" {
			t.Errorf("first turn %+v", end)
		}
		if end := e.waitEnd(th); end.StopReason != "end_turn" {
			t.Errorf("second turn %+v", end)
		}
		if !strings.HasSuffix(e.text(th), "second") {
			t.Errorf("text %q", e.text(th))
		}
		// The queued notice no longer says it waits: it ran.
		ran := sysmsg.Text(sysmsg.QueuedRan{})
		e.waitOp(th, "the queued notice corrected", hasText(ran))
		for _, m := range e.messages(th, channels.KindNotice) {
			if strings.Contains(m.Text, "ahead of it") {
				t.Errorf("a notice still says %q after its message ran", m.Text)
			}
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		p := session.DefaultPolicy()
		p.Busy = thread.BusyInterrupt
		e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, policy: &p})
		th := e.rec.Thread("i")
		e.say(th, ann, "slow 400")
		e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
		e.say(th, bob, "echo instead")
		if end := e.waitEnd(th); end.StopReason != "cancelled" {
			t.Errorf("interrupted turn %+v", end)
		}
		e.waitOp(th, "the interrupt notice", hasText("Interrupted by a new message from Bob."))
		if end := e.waitEnd(th); end.StopReason != "end_turn" {
			t.Errorf("new turn %+v", end)
		}
		if !strings.HasSuffix(e.text(th), "instead") {
			t.Errorf("text %q", e.text(th))
		}
	})
}

// A notice posted outside the lane waits out a rate limit instead of
// being lost.
func TestNoticeWaitsOutARateLimit(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e.rec.Thread("idle")
	e.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 50 * time.Millisecond, Scope: "post"})
	e.say(th, ann, "stop")
	e.waitOp(th, "the notice after the rate limit", hasText("Nothing is running."))
}

// TestStopIsAcknowledgedAtOnce: against an agent that ignores the cancel,
// "Stopping…" shows before the grace period ends, the agent's later
// output never shows, and the Stopping message becomes the final notice.
func TestStopIsAcknowledgedAtOnce(t *testing.T) {
	const grace = 3 * time.Second
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}, grace: grace})
	th := e.rec.Thread("ack")
	e.say(th, ann, "ignore-cancel 60")
	e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
	e.say(th, ann, "stop")
	ack := e.waitOp(th, "the Stopping notice", func(op channeltest.Op) bool {
		return op.Op == "send" && op.Kind == channels.KindNotice && strings.Contains(op.Text, "Stopping…")
	})
	select {
	case te := <-e.finished:
		t.Fatalf("the turn ended (%+v) before Stopping… showed: the stop was not acknowledged at once", te)
	default:
	}
	e.waitEnd(th)
	final := "Stopped by Ann. The agent did not stop within 3s, so it was restarted."
	e.waitOp(th, "Stopping… edited into the final notice", func(op channeltest.Op) bool {
		return op.Op == "edit" && op.Msg == ack.Msg && strings.Contains(op.Text, final)
	})
	if m, _ := e.rec.Message(ack.Msg); !strings.Contains(m.Text, final) {
		t.Errorf("the Stopping message shows %q, want the final notice", m.Text)
	}
	// The agent kept talking for the grace period (about 15 ticks); none
	// of what it said after the stop is in the thread.
	b, _, _ := e.st.Binding(e.ctx(), th)
	sent := strings.Count(eventLog(t, e.dir, b.SessionID), "tick ")
	shown := strings.Count(e.text(th), "tick ")
	if shown == 0 || shown > sent-5 {
		t.Errorf("the agent sent %d ticks and the thread shows %d: output after the stop was shown", sent, shown)
	}
}

// TestExplicitStop: a Stop button's event (Inbound.Stop) stops the turn
// with stop words turned off, and a stop word then is a prompt like any
// other text.
func TestExplicitStop(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}, noWords: true})
	th := e.rec.Thread("x")
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Stop: true, ID: "stop-button"}); err != nil {
		t.Fatal(err)
	}
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled", end.StopReason)
	}
	e.say(th, ann, "stop")
	if end := e.waitEnd(th); end.StopReason == "cancelled" {
		t.Errorf("with stop words off, \"stop\" ended a turn as cancelled; want it run as a prompt")
	}
}

// TestStopCommand: the /stop command (Inbound.Command, as the adapters
// deliver it) stops the turn with stop words turned off. The router goes
// by the intent, not the text: the same text as a plain message is a
// prompt like any other, and an event with two intents stops nothing.
func TestStopCommand(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}, noWords: true})
	th := e.rec.Thread("cmd")
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
	stop := channels.Inbound{Thread: th, Author: ann, Text: "/stop", Command: &channels.Command{Name: channels.CommandStop}, ID: "stop-command"}
	if err := e.rec.Deliver(e.ctx(), stop); err != nil {
		t.Fatal(err)
	}
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled", end.StopReason)
	}
	e.waitOp(th, "the stop notice", hasText("Stopped by Ann."))

	other := e.rec.Thread("cmd-two")
	e.say(other, ann, "slow 20")
	e.waitOp(other, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
	twice := channels.Inbound{Thread: other, Author: ann, Text: "/stop", Stop: true, Command: &channels.Command{Name: channels.CommandStop}, ID: "two-intents"}
	if err := e.rec.Deliver(e.ctx(), twice); err != nil {
		t.Fatal(err)
	}
	if end := e.waitEnd(other); end.StopReason != "end_turn" {
		t.Errorf("after an event with two intents the turn ended %q, want end_turn (the event is ignored)", end.StopReason)
	}

	e.say(th, ann, "/stop")
	if end := e.waitEnd(th); end.StopReason == "cancelled" {
		t.Errorf("\"/stop\" as a plain message (no Command) ended a turn as cancelled; want it run as a prompt")
	}
}

// TestIntentsNotHandledYet: a request for suggestions is answered (with
// none) so the platform is not left waiting, and a form's answer or a
// reaction never runs as a prompt; the thread goes on as before.
func TestIntentsNotHandledYet(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}})
	th := e.rec.Thread("later")
	answered := make(chan []channels.Option, 1)
	suggest := channels.Inbound{Thread: th, Author: ann, Text: "/stop", Command: &channels.Command{Name: channels.CommandStop},
		Suggest: func(_ context.Context, opts []channels.Option) error { answered <- opts; return nil }, ID: "suggest"}
	for _, in := range []channels.Inbound{
		suggest,
		{Thread: th, Author: ann, Text: "echo form", Form: &channels.FormAnswer{Action: channels.FormAccept}, ID: "form"},
		{Thread: th, Author: ann, Text: "echo reaction", Reaction: &channels.Reaction{Message: "m1", Emoji: "🛑"}, ID: "reaction"},
	} {
		if err := e.rec.Deliver(e.ctx(), in); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case opts := <-answered:
		if len(opts) != 0 {
			t.Errorf("suggested %v, want none yet", opts)
		}
	case <-e.ctx().Done():
		t.Fatal("the request for suggestions was never answered")
	}
	e.say(th, ann, "echo after")
	end := e.waitEnd(th)
	if end.StopReason != "end_turn" {
		t.Fatalf("turn ended %q", end.StopReason)
	}
	for _, op := range e.rec.Ops() {
		if strings.Contains(op.Text, "form") || strings.Contains(op.Text, "reaction") {
			t.Errorf("a form's answer or a reaction ran as a prompt: %q", op.Text)
		}
	}
}

// TestAgentCancelsAfterRejection: an agent that ends the whole turn
// cancelled when a permission is rejected (Codex does) was stopped by
// nobody: the thread says the agent ended the turn after the rejection.
func TestAgentCancelsAfterRejection(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true, Prompt: true}})
	th := e.rec.Thread("abort")
	e.say(th, ann, "permission-abort")
	op := e.waitOp(th, "the permission prompt", isPrompt)
	if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, option(t, op, "reject_once")); err != nil {
		t.Fatalf("click: %v", err)
	}
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled (the agent's own)", end.StopReason)
	}
	e.waitOp(th, "typing stopped", isTypingStop)
	var notices []string
	for _, n := range e.messages(th, channels.KindNotice) {
		notices = append(notices, n.Text)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "The agent ended the turn after the rejection.") {
		t.Errorf("notices %q, want one saying the agent ended the turn after the rejection", notices)
	}
}

// TestOneStopOneNotice: the demo agent's slow turn ends at once on
// session/cancel, so the turn's end reaches the lane right behind the
// stop (as Gemini's, 4 ms later, did). Where the channel edits, the one
// notice is "Stopping…" edited into the final one, or the final one
// alone; where it cannot, the final words are said at once and not again.
func TestOneStopOneNotice(t *testing.T) {
	for _, edit := range []bool{true, false} {
		t.Run(map[bool]string{true: "edit", false: "no edit"}[edit], func(t *testing.T) {
			e := newEnv(t, envOptions{rec: channeltest.Options{Edit: edit, Typing: true, Prompt: true, Limits: channels.Limits{MinEditInterval: 250 * time.Millisecond}}})
			th := e.rec.Thread("one")
			e.say(th, ann, "slow 400")
			e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
			e.say(th, ann, "Stop!")
			if end := e.waitEnd(th); end.StopReason != "cancelled" {
				t.Fatalf("stop reason %q, want cancelled", end.StopReason)
			}
			e.waitOp(th, "typing stopped", isTypingStop)
			var notices []string
			for _, n := range e.messages(th, channels.KindNotice) {
				notices = append(notices, n.Text)
			}
			if len(notices) != 1 || notices[0] != "⚙️ Stopped by Ann." {
				t.Errorf("notices %q, want just \"⚙️ Stopped by Ann.\"", notices)
			}
		})
	}
}
