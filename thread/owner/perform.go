package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// perform does what the machine asked for, on the owner's goroutine.
// What may block long runs on a child goroutine that reports back.
func (t *Thread) perform(f thread.Effect) {
	switch f := f.(type) {
	case thread.StartAgent:
		t.startAgent(f.In, f.NeedProcess)
	case thread.CancelStart:
		if t.cancelStart != nil {
			t.cancelStart()
		}
	case thread.BeginTurn:
		t.beginTurn(f)
	case thread.Duplicate:
		t.d.Log.Warn("dropping a message the thread took already (delivered twice)", "thread", t.ref, "id", f.ID)
	case thread.MarkPrompt:
		t.mark(store.RunningTurn{Thread: t.ref, Started: f.Key, Prompt: TurnPrompt(f.In, f.In.Files)},
			"cannot mark the prompt taken; a crash before it is answered would lose it")
	case thread.ClearMark:
		// A shutdown under way keeps the marks: the thread's next owner
		// asks those prompts again (the machine may not know of it yet).
		if t.d.Ctx.Err() == nil {
			t.unmark(f.Key, "cannot clear the mark of a prompt that began no turn")
		}
	case thread.CancelTurn:
		if sess := t.sess; sess != nil {
			// Apart from the owner: an agent with a full stdin must not
			// block it. The cancel goes out even when the thread ends
			// meanwhile (forgotten, or the shutdown's grace over).
			t.d.WG.Go(func() {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), 5*time.Second)
				defer cancel()
				if err := sess.Cancel(ctx); err != nil {
					t.d.Log.Warn("session/cancel failed; the agent is killed after the grace period", "thread", t.ref, "err", err)
				}
			})
		}
	case thread.KillAgent:
		if t.proc != nil {
			t.d.Log.Warn("the agent ignored session/cancel; killing it", "thread", t.ref, "grace", t.m.Grace())
			t.proc.Kill()
		}
	case thread.StopAgent:
		proc, sess := t.proc, t.sess
		w := t.dropProcess()
		if proc == nil {
			break
		}
		if f.Why == "shutdown" {
			// The owner returns next: the thread's end (a shutdown, a
			// deleted thread) waits for its agent to be gone.
			t.stopped = true
			if f.End && sess != nil {
				t.endAgentSession(sess)
			}
			t.stopProcess(proc, w)
			break
		}
		t.d.Log.Info("stopping idle agent", "thread", t.ref, "why", f.Why)
		t.d.WG.Go(func() { t.stopProcess(proc, w) })
	case thread.DropAgent:
		proc := t.proc
		w := t.dropProcess()
		t.d.WG.Go(func() { t.closeLogAfterExit(proc, w) })
	case thread.StopTyping:
		t.view().Lane.StopTyping()
	case thread.Notify:
		t.tell(f)
	case thread.ShowPrompt:
		if p := t.prompts[f.ID]; p != nil {
			t.showPrompt(p)
		}
	case thread.QueueKept:
		if in := t.replyTo; in != nil {
			t.reply(*in, sysmsg.QueueKept{Waiting: f.Waiting})
		} else {
			t.notice(sysmsg.QueueKept{Waiting: f.Waiting}) // a 🛑 reaction: no message to answer
		}
	case thread.AnswerByPolicy:
		if p := t.prompts[f.ID]; p != nil {
			t.answerByPolicy(p, f.Allow)
		}
	case thread.SettlePrompt:
		if p := t.prompts[f.ID]; p != nil {
			t.settle(p, f)
		}
	case thread.PromptNotWaiting:
		if in := t.replyTo; in != nil {
			t.reply(*in, sysmsg.RefusePromptGone)
		}
	case thread.NotApprover:
		if in := t.replyTo; in != nil {
			t.reply(*in, sysmsg.RefuseNotApprover)
		}
	case thread.ShowQuestion, thread.SettleQuestion, thread.NotAsker:
		t.performQuestion(f)
	case thread.RunCommand:
		t.runCommand(f.In)
	case thread.ShowWorkspace:
		t.workspaceCommand(false)
	case thread.ShowDiff:
		t.workspaceCommand(true)
	case thread.RefuseCommand:
		t.reply(f.In, sysmsg.RefuseCommand{Command: "/" + f.In.Command.Name})
	case thread.ShowStatus:
		t.showStatus(f)
	case thread.EndSession:
		t.endSession(f)
	case thread.EndTurn:
		t.endTurn(f.Turn)
	case thread.TellInterrupted:
		t.tellInterrupted()
	case thread.Exit:
	case thread.CheckLane:
		t.runner.Do(func(l *dispatch.Lane) { t.inbox.event(thread.LaneIdle{Idle: l.Idle()}) })
	case thread.Evict:
		t.evicted = t.d.Host.Evict(t)
	case thread.React:
		t.react(f)
	default:
		if t.performBudget(f) {
			break
		}
		t.d.Log.Error("unknown effect", "thread", t.ref, "effect", fmt.Sprintf("%T", f))
	}
}

// tell posts a notice the machine gave.
func (t *Thread) tell(f thread.Notify) {
	switch n := f.Notice.(type) {
	case sysmsg.StartTimeout:
		t.d.Log.Error("the agent did not start in time", "thread", t.ref, "timeout", n.After)
	case sysmsg.StartFailed:
		if t.d.Ctx.Err() != nil {
			return // shutting down
		}
		t.d.Log.Error("cannot start the agent", "thread", t.ref, "err", n.Err)
	}
	t.view().Notify(f)
}

// dropProcess forgets the process (it has exited or is being stopped)
// and frees the slot. It returns the process's event log, which the
// caller closes with closeLogAfterExit once the process is stopped: an
// agent may write its last frames while it stops.
func (t *Thread) dropProcess() FrameLog {
	w := t.evlog
	if t.sess != nil && t.proc != nil {
		// Closed once the process is gone (closeLogAfterExit, which
		// every caller runs then): the session's next process waits
		// for it (closingLogs).
		w = t.d.ClosingLogs.closing(t.sess.ID, w)
	}
	t.evlog = nil
	t.proc, t.sess = nil, nil
	if t.slot {
		t.slot = false
		t.d.Host.Release()
	}
	return w
}
