package thread

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/google/go-cmp/cmp"
)

// machineHarness drives a Machine on virtual time and writes down the
// effects it asks for, one line each.
type machineHarness struct {
	m     *Machine
	start time.Time
	now   time.Time
	wake  time.Time
	log   []string
}

func (h *machineHarness) apply(e Event) {
	w, fx := h.m.Apply(h.now, e)
	h.wake = w
	for _, f := range fx {
		h.log = append(h.log, fmt.Sprintf("%v %s", h.now.Sub(h.start), describeEffect(f)))
	}
}

// wait advances virtual time by d, ticking at every wake time on the way.
func (h *machineHarness) wait(d time.Duration) {
	target := h.now.Add(d)
	for i := 0; !h.wake.IsZero() && !h.wake.After(target); i++ {
		if i > 1000 {
			panic("the machine never settles")
		}
		h.now = h.wake
		h.apply(Tick{})
	}
	h.now = target
}

func describeEffect(f Effect) string {
	switch f := f.(type) {
	case StartAgent:
		if f.NeedProcess {
			return "start-agent new " + f.In.Text
		}
		return "start-agent " + f.In.Text
	case CancelStart:
		if f.Timeout {
			return "cancel-start timeout"
		}
		return "cancel-start"
	case BeginTurn:
		if f.Marked {
			return fmt.Sprintf("begin #%d %s marked %v", f.Seq, f.In.Text, f.Mark.Sub(harnessStart))
		}
		return fmt.Sprintf("begin #%d %s", f.Seq, f.In.Text)
	case Duplicate:
		return "duplicate " + string(f.ID)
	case MarkPrompt:
		return fmt.Sprintf("mark %s %v", f.In.Text, f.Key.Sub(harnessStart))
	case ClearMark:
		return fmt.Sprintf("clear-mark %v", f.Key.Sub(harnessStart))
	case CancelTurn:
		return "cancel-turn"
	case KillAgent:
		return "kill"
	case StopAgent:
		if f.End {
			return "stop-agent " + f.Why + " end-session"
		}
		return "stop-agent " + f.Why
	case DropAgent:
		return "drop-agent"
	case StopTyping:
		return "typing-off"
	case Notify:
		var s string
		switch n := f.Notice.(type) {
		case sysmsg.Queued:
			s = fmt.Sprintf("notice queued %d ahead", n.Ahead)
			if n.Stopping {
				s += " (stopping)"
			}
		case sysmsg.QueuedRan:
			s = "settle queued: ran"
		case sysmsg.QueuedDropped:
			s = "settle queued: dropped"
		case sysmsg.NothingRunning:
			s = fmt.Sprintf("notice nothing running, %d dropped", n.Dropped)
		case sysmsg.Stopping:
			s = "notice stopping"
		case sysmsg.StoppedBeforeStart:
			s = "notice stopped before start by " + n.By
		case sysmsg.StartTimeout:
			s = fmt.Sprintf("notice start timeout %v", n.After)
		case sysmsg.StartFailed:
			s = "notice start failed: " + n.Err
		case sysmsg.WorkspaceFailed:
			s = "notice workspace failed: " + n.Err
		case sysmsg.Stalled:
			s = fmt.Sprintf("notice stalled %v", n.For)
		default:
			s = fmt.Sprintf("notice %T", n)
		}
		if f.Key != "" {
			s += " " + f.Key
		}
		if f.InTurn {
			s += " in turn"
		}
		return s
	case ShowPrompt:
		return "show " + f.ID
	case AnswerByPolicy:
		if f.Allow {
			return "allow " + f.ID + " by policy"
		}
		return "reject " + f.ID + " by policy"
	case SettlePrompt:
		s := "settle " + f.ID + " " + string(f.Status)
		if f.Option != "" {
			s += " " + f.Option
		}
		if f.By.ID != "" || f.By.Name != "" {
			s += " by " + displayName(f.By)
		}
		if f.NotShown {
			s += " not shown"
		}
		if f.Unshown {
			s += " unshown"
		}
		if f.Shutdown {
			s += " shutdown"
		}
		return s
	case PromptNotWaiting:
		return "not-waiting " + f.ID
	case QueueKept:
		return fmt.Sprintf("tell %d queued stay", f.Waiting)
	case NotApprover:
		return "not-approver " + f.ID
	case EndTurn:
		o := f.Turn
		s := fmt.Sprintf("end #%d %s", o.Seq, o.StopReason)
		if o.Err != nil {
			s += " err"
		}
		if o.Exited {
			s += " exited"
		}
		if o.Stopper != "" {
			s += " stopped by " + o.Stopper
		}
		if o.Interrupted {
			s += " interrupted"
		}
		if o.Killed {
			s += " killed"
		}
		if o.Ack != "" {
			s += " ack " + o.Ack
		}
		if o.Cut {
			s += " cut"
		}
		if o.Forgotten {
			s += " forgotten"
		}
		return s
	case TellInterrupted:
		return "tell-interrupted"
	case Exit:
		return "exit"
	case CheckLane:
		return "check-lane"
	case Evict:
		return "evict"
	case React:
		s := "react " + string(f.Msg) + " " + f.Emoji
		if f.AtTurnEnd {
			s += " at end"
		}
		return s
	}
	if s, ok := describeQuestionEffect(f); ok {
		return s
	}
	return fmt.Sprintf("%T", f)
}

// harnessStart is the virtual time every table test starts at.
var harnessStart = time.Unix(1_700_000_000, 0)

var (
	mAnn = channels.Author{ID: "u-ann", Name: "Ann"}
	mBob = channels.Author{ID: "u-bob", Name: "Bob"}
)

func msg(by channels.Author, text string) PromptIn {
	return PromptIn{In: channels.Inbound{Author: by, Text: text}}
}

// step waits, then applies ev (none when nil); want is every effect of
// both, each as "<virtual time> <effect>".
type step struct {
	wait time.Duration
	ev   Event
	want []string
}

var errCrash = errors.New("the agent's process exited")

func TestMachine(t *testing.T) {
	cfg := MachineConfig{Busy: BusyQueue, Grace: 5 * time.Second, StartTimeout: time.Minute, IdleTimeout: 10 * time.Minute}
	interrupt := cfg
	interrupt.Busy = BusyInterrupt
	stall := cfg
	stall.StallTimeout = 30 * time.Second
	evict := cfg
	evict.EvictAfter = 10 * time.Minute
	policy := func(p string) MachineConfig { c := cfg; c.Permissions = p; return c }

	// ready runs a first turn to its end so that the agent is ready.
	ready := []step{
		{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
		{ev: SlotTaken{}},
		{wait: time.Second, ev: AgentStarted{}, want: []string{"1s begin #1 hello"}},
		{wait: time.Second, ev: TurnDone{StopReason: "end_turn"}, want: []string{"2s end #1 end_turn"}},
	}
	// busy starts turn #1 and leaves it running.
	busy := []step{
		{ev: msg(mAnn, "slow"), want: []string{"0s start-agent new slow"}},
		{ev: SlotTaken{}},
		{ev: AgentStarted{}, want: []string{"0s begin #1 slow"}},
	}
	cases := []struct {
		name  string
		cfg   MachineConfig
		steps [][]step
	}{
		{"prompt while idle", cfg, [][]step{ready, {
			{wait: time.Second, ev: msg(mBob, "again"), want: []string{"3s start-agent again"}},
			{ev: SlotTaken{}},
			{ev: AgentStarted{}, want: []string{"3s begin #2 again"}},
		}}},
		{"prompt while busy: queued", cfg, [][]step{busy, {
			{wait: time.Second, ev: msg(mBob, "second"), want: []string{"1s notice queued 1 ahead"}},
			{ev: msg(mBob, "third"), want: []string{"1s notice queued 2 ahead"}},
			{wait: time.Second, ev: TurnDone{StopReason: "end_turn"}, want: []string{"2s end #1 end_turn", "2s start-agent second"}},
			{ev: AgentStarted{}, want: []string{"2s begin #2 second"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"2s end #2 end_turn", "2s start-agent third"}},
		}}},
		{"prompt while busy: caught up, no notice", cfg, [][]step{busy, {
			{ev: PromptIn{In: channels.Inbound{Author: mBob, Text: "backlog"}, Caught: true}},
		}}},
		{"prompt while busy: interrupt", interrupt, [][]step{busy, {
			{wait: time.Second, ev: msg(mBob, "instead"), want: []string{"1s notice stopping stop-1", "1s typing-off", "1s cancel-turn"}},
			{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{
				"2s end #1 cancelled stopped by Bob interrupted ack stop-1", "2s start-agent instead"}},
			{ev: AgentStarted{}, want: []string{"2s begin #2 instead"}},
		}}},
		{"a stop keeps the queue: told, the next message runs once the turn ended", cfg, [][]step{busy, {
			{ev: msg(mBob, "queued"), want: []string{"0s notice queued 1 ahead"}},
			{ev: StopIn{By: mAnn}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn", "0s tell 1 queued stay"}},
			{ev: StopIn{By: mBob}, want: []string{"0s tell 1 queued stay"}},
			{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{"1s end #1 cancelled stopped by Ann ack stop-1", "1s start-agent queued"}},
		}}},
		{"stop all drops the queue", cfg, [][]step{busy, {
			{ev: msg(mBob, "queued"), want: []string{"0s notice queued 1 ahead"}},
			{ev: StopIn{By: mAnn, All: true}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{ev: StopIn{By: mBob}},
			{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{"1s end #1 cancelled stopped by Ann ack stop-1"}},
		}}},
		{"stop all after a plain stop drops what stayed", cfg, [][]step{busy, {
			{ev: msg(mBob, "queued"), want: []string{"0s notice queued 1 ahead"}},
			{ev: StopIn{By: mAnn}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn", "0s tell 1 queued stay"}},
			{ev: StopIn{By: mBob, All: true}},
			{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{"1s end #1 cancelled stopped by Ann ack stop-1"}},
		}}},
		{"stop with nothing running", cfg, [][]step{ready, {
			{ev: StopIn{By: mAnn}, want: []string{"2s notice nothing running, 0 dropped"}},
		}}},
		{"stop while starting", cfg, [][]step{{
			{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
			{wait: time.Second, ev: StopIn{By: mAnn}, want: []string{"1s cancel-start", "1s typing-off"}},
			{wait: time.Second, ev: AgentStarted{Err: errors.New("context canceled")}, want: []string{
				"2s typing-off", "2s notice stopped before start by Ann"}},
			{ev: msg(mAnn, "again"), want: []string{"2s start-agent new again"}},
		}}},
		{"stop while starting, the agent started anyway", cfg, [][]step{{
			{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
			{ev: SlotTaken{}},
			{ev: StopIn{By: mAnn}, want: []string{"0s cancel-start", "0s typing-off"}},
			{ev: AgentStarted{}, want: []string{"0s notice stopped before start by Ann"}},
			{wait: 10 * time.Minute, want: []string{"10m0s stop-agent idle for 10m0s"}},
		}}},
		{"stop ignored: killed after the grace period", cfg, [][]step{busy, {
			{wait: time.Second, ev: StopIn{By: mAnn}, want: []string{"1s notice stopping stop-1", "1s typing-off", "1s cancel-turn"}},
			{wait: 4 * time.Second},
			{wait: time.Second, want: []string{"6s kill"}},
			{ev: TurnDone{StopReason: "", Err: errCrash, Exited: true}, want: []string{
				"6s end #1  err exited stopped by Ann killed ack stop-1", "6s drop-agent"}},
			{ev: msg(mAnn, "again"), want: []string{"6s start-agent new again"}},
		}}},
		{"stop honoured: no kill", cfg, [][]step{busy, {
			{ev: StopIn{By: mAnn}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{"1s end #1 cancelled stopped by Ann ack stop-1"}},
			{wait: time.Minute},
		}}},
		{"permission answered", cfg, [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute}, want: []string{"0s show p1"}},
			{wait: time.Second, ev: PermissionAnswer{ID: "p1", Option: "allow", By: mBob}, want: []string{"1s not-approver p1"}},
			{ev: PermissionAnswer{ID: "p1", Option: "allow", By: mAnn, Approver: true}, want: []string{"1s settle p1 answered allow by Ann"}},
			{ev: PermissionAnswer{ID: "p1", Option: "allow", By: mAnn, Approver: true}, want: []string{"1s not-waiting p1"}},
			{wait: 2 * time.Minute},
		}}},
		{"permission expired", cfg, [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute}, want: []string{"0s show p1"}},
			{wait: 30 * time.Second, ev: PermissionAsked{ID: "p2", Timeout: 10 * time.Second}, want: []string{"30s show p2"}},
			{wait: time.Minute, want: []string{"40s settle p2 expired", "1m0s settle p1 expired"}},
			{ev: PermissionAnswer{ID: "p1", Option: "allow", By: mAnn, Approver: true}, want: []string{"1m30s not-waiting p1"}},
		}}},
		{"permission cancelled by a stop", cfg, [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute}, want: []string{"0s show p1"}},
			{ev: StopIn{By: mBob}, want: []string{"0s notice stopping stop-1", "0s settle p1 cancelled by Bob", "0s typing-off", "0s cancel-turn"}},
			{ev: PermissionAsked{ID: "p2", Timeout: time.Minute}, want: []string{"0s settle p2 cancelled unshown"}},
			{wait: 2 * time.Minute, want: []string{"5s kill"}},
		}}},
		{"permission unshown or withdrawn", cfg, [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute}, want: []string{"0s show p1"}},
			{ev: PermissionUnshown{ID: "p1"}, want: []string{"0s settle p1 cancelled not shown"}},
			{ev: PermissionAsked{ID: "p2", Timeout: time.Minute}, want: []string{"0s show p2"}},
			{ev: PermissionWithdrawn{ID: "p2"}, want: []string{"0s settle p2 cancelled by the agent"}},
			{ev: PermissionWithdrawn{ID: "p2"}},
		}}},
		{"crash mid-turn", cfg, [][]step{busy, {
			{ev: msg(mBob, "next"), want: []string{"0s notice queued 1 ahead"}},
			{wait: time.Second, ev: ProcessExited{}},
			{ev: TurnDone{Err: errCrash, Exited: true}, want: []string{"1s end #1  err exited", "1s drop-agent", "1s start-agent new next"}},
		}}},
		{"crash while idle", cfg, [][]step{ready, {
			{wait: time.Second, ev: ProcessExited{}, want: []string{"3s drop-agent"}},
			{wait: time.Hour},
			{ev: msg(mAnn, "again"), want: []string{"1h0m3s start-agent new again"}},
		}}},
		{"start timeout", cfg, [][]step{{
			{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
			{wait: time.Hour, ev: SlotTaken{}}, // the wait for a slot does not count
			{wait: time.Minute, want: []string{"1h1m0s cancel-start timeout"}},
			{ev: AgentStarted{Err: errors.New("context deadline exceeded")}, want: []string{"1h1m0s typing-off", "1h1m0s notice start timeout 1m0s"}},
			{ev: msg(mAnn, "again"), want: []string{"1h1m0s start-agent new again"}},
		}}},
		{"start failed", cfg, [][]step{{
			{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
			{ev: SlotTaken{}},
			{ev: AgentStarted{Err: errors.New("no such file")}, want: []string{"0s typing-off", "0s notice start failed: no such file"}},
		}}},
		{"workspace failed", cfg, [][]step{{
			{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
			{ev: SlotTaken{}},
			{ev: AgentStarted{Err: errors.New("not a git repository"), Workspace: true}, want: []string{"0s typing-off", "0s notice workspace failed: not a git repository"}},
			{ev: msg(mAnn, "again"), want: []string{"0s start-agent new again"}},
		}}},
		{"idle reap and resume", cfg, [][]step{ready, {
			{wait: 9 * time.Minute, ev: msg(mAnn, "keeps it alive"), want: []string{"9m2s start-agent keeps it alive"}},
			{ev: AgentStarted{}, want: []string{"9m2s begin #2 keeps it alive"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"9m2s end #2 end_turn"}},
			{wait: 10 * time.Minute, want: []string{"19m2s stop-agent idle for 10m0s"}},
			{ev: msg(mAnn, "resume"), want: []string{"19m2s start-agent new resume"}},
		}}},
		{"reaped for another thread", cfg, [][]step{ready, {
			{ev: ReapIdle{Why: "room"}, want: []string{"2s stop-agent room"}},
			{ev: ReapIdle{Why: "room"}},
			{wait: time.Hour},
		}}},
		{"not reaped while busy", cfg, [][]step{busy, {
			{ev: ReapIdle{Why: "room"}},
		}}},
		{"stall told once per silence", stall, [][]step{busy, {
			{wait: 20 * time.Second, ev: AgentOutput{}},
			{wait: 40 * time.Second, want: []string{"50s notice stalled 30s in turn"}},
			{wait: time.Minute, ev: AgentOutput{}},
			{wait: 31 * time.Second, want: []string{"2m30s notice stalled 30s in turn"}},
		}}},
		{"stall: a pending prompt is not silence", stall, [][]step{busy, {
			{wait: 10 * time.Second, ev: PermissionAsked{ID: "p1", Timeout: 5 * time.Minute}, want: []string{"10s show p1"}},
			{wait: 4 * time.Minute, ev: PermissionAnswer{ID: "p1", Option: "allow", By: mAnn, Approver: true}, want: []string{"4m10s settle p1 answered allow by Ann"}},
			{wait: 31 * time.Second, want: []string{"4m40s notice stalled 30s in turn"}},
		}}},
		{"shutdown mid-turn", cfg, [][]step{busy, {
			{ev: msg(mBob, "queued"), want: []string{"0s notice queued 1 ahead"}},
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute}, want: []string{"0s show p1"}},
			{wait: time.Second, ev: Shutdown{}, want: []string{"1s tell-interrupted", "1s settle p1 expired shutdown", "1s cancel-turn"}},
			{ev: msg(mAnn, "late")},
			{ev: PermissionAsked{ID: "p2", Timeout: time.Minute}, want: []string{"1s settle p2 cancelled unshown"}},
			{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{"2s end #1 cancelled cut", "2s stop-agent shutdown", "2s exit"}},
		}}},
		{"shutdown mid-turn, the agent ignores the cancel", cfg, [][]step{busy, {
			{ev: Shutdown{}, want: []string{"0s tell-interrupted", "0s cancel-turn"}},
			{wait: time.Minute, want: []string{"5s kill"}},
			{ev: TurnDone{Err: errCrash, Exited: true}, want: []string{"1m0s end #1  err exited cut", "1m0s drop-agent", "1m0s exit"}},
		}}},
		{"shutdown while starting", cfg, [][]step{{
			{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
			{ev: Shutdown{}, want: []string{"0s cancel-start", "0s tell-interrupted"}},
			{ev: AgentStarted{}, want: []string{"0s stop-agent shutdown", "0s exit"}},
		}}},
		{"forget mid-turn", cfg, [][]step{busy, {
			{ev: msg(mBob, "queued"), want: []string{"0s notice queued 1 ahead"}},
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute}, want: []string{"0s show p1"}},
			{wait: time.Second, ev: Forget{By: mAnn}, want: []string{"1s settle p1 cancelled by Ann", "1s cancel-turn"}},
			{ev: msg(mBob, "late")},
			{wait: 10 * time.Second, want: []string{"6s kill"}},
			{ev: TurnDone{Err: errCrash, Exited: true}, want: []string{"11s end #1  err exited stopped by Ann killed forgotten", "11s drop-agent", "11s exit"}},
		}}},
		{"forget while idle", cfg, [][]step{ready, {
			{ev: Forget{By: mAnn}, want: []string{"2s stop-agent shutdown end-session", "2s exit"}},
		}}},
		{"archived while idle: the session stays at the agent", cfg, [][]step{ready, {
			{ev: Forget{By: mAnn, Archived: true}, want: []string{"2s stop-agent shutdown", "2s exit"}},
		}}},
		{"shutdown while idle", cfg, [][]step{ready, {
			{ev: Shutdown{}, want: []string{"2s stop-agent shutdown", "2s exit"}},
			{ev: Shutdown{}},
		}}},
		{"a bare thread is evicted", evict, [][]step{{
			{ev: StopIn{By: mAnn}, want: []string{"0s notice nothing running, 0 dropped"}},
			{wait: 10 * time.Minute, want: []string{"10m0s check-lane"}},
			{wait: time.Second, ev: LaneIdle{Idle: true}, want: []string{"10m1s evict"}},
		}}},
		{"eviction waits for the lane", evict, [][]step{{
			{ev: StopIn{By: mAnn}, want: []string{"0s notice nothing running, 0 dropped"}},
			{wait: 10 * time.Minute, want: []string{"10m0s check-lane"}},
			{ev: LaneIdle{Idle: false}},
			{wait: 10 * time.Minute, want: []string{"20m0s check-lane"}},
			{ev: LaneIdle{Idle: true}, want: []string{"20m0s evict"}},
		}}},
		{"a message during the lane check keeps the thread", evict, [][]step{{
			{ev: StopIn{By: mAnn}, want: []string{"0s notice nothing running, 0 dropped"}},
			{wait: 10 * time.Minute, want: []string{"10m0s check-lane"}},
			{ev: msg(mAnn, "hello"), want: []string{"10m0s start-agent new hello"}},
			{ev: LaneIdle{Idle: true}},
			{ev: AgentStarted{Err: errors.New("no such file")}, want: []string{"10m0s typing-off", "10m0s notice start failed: no such file"}},
			{wait: 10 * time.Minute, want: []string{"20m0s check-lane"}},
		}}},
		{"ask: every request is shown", policy(PermissionAsk), [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute, Kind: "read"}, want: []string{"0s show p1"}},
			{ev: PermissionAsked{ID: "p2", Timeout: time.Minute, Kind: "execute"}, want: []string{"0s show p2"}},
		}}},
		{"approve-reads: reads, searches and thoughts allowed, the rest shown", policy(PermissionApproveReads), [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute, Kind: "read"}, want: []string{"0s allow p1 by policy"}},
			{ev: PermissionAsked{ID: "p2", Timeout: time.Minute, Kind: "search"}, want: []string{"0s allow p2 by policy"}},
			{ev: PermissionAsked{ID: "p3", Timeout: time.Minute, Kind: "think"}, want: []string{"0s allow p3 by policy"}},
			{ev: PermissionAsked{ID: "p4", Timeout: time.Minute, Kind: "edit"}, want: []string{"0s show p4"}},
			{ev: PermissionAsked{ID: "p5", Timeout: time.Minute, Kind: ""}, want: []string{"0s show p5"}},
		}}},
		{"approve-all and deny-all answer without asking", policy(PermissionApproveAll), [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute, Kind: "execute"}, want: []string{"0s allow p1 by policy"}},
			{ev: Configure{Config: policy(PermissionDenyAll)}},
			{ev: PermissionAsked{ID: "p2", Timeout: time.Minute, Kind: "read"}, want: []string{"0s reject p2 by policy"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn"}},
		}}},
		{"no answer by policy after a stop: the request is cancelled unshown", policy(PermissionApproveAll), [][]step{busy, {
			{ev: StopIn{By: mBob}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{ev: PermissionAsked{ID: "p1", Timeout: time.Minute, Kind: "read"}, want: []string{"0s settle p1 cancelled unshown"}},
		}}},
		{"no eviction while the agent lives", evict, [][]step{ready, {
			{wait: 10 * time.Minute, want: []string{"10m2s stop-agent idle for 10m0s"}},
			{wait: 10 * time.Minute, want: []string{"20m2s check-lane"}},
		}}},
		{"no eviction while a prompt waits", evict, [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: time.Hour}, want: []string{"0s show p1"}},
			{ev: ProcessExited{}},
			{ev: TurnDone{Err: errCrash, Exited: true}, want: []string{"0s end #1  err exited", "0s drop-agent"}},
			{wait: 30 * time.Minute},
			{ev: PermissionWithdrawn{ID: "p1"}, want: []string{"30m0s settle p1 cancelled by the agent"}},
			{wait: 10 * time.Minute, want: []string{"40m0s check-lane"}},
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := harnessStart
			h := &machineHarness{m: NewMachine(tc.cfg), start: start, now: start}
			n := 0
			for _, steps := range tc.steps {
				for _, s := range steps {
					n++
					h.wait(s.wait)
					if s.ev != nil {
						h.apply(s.ev)
					}
					got := h.log
					h.log = nil
					if !cmp.Equal(got, s.want, cmpEmpty) {
						t.Fatalf("step %d (%T): (-got +want):\n%s", n, s.ev, cmp.Diff(got, s.want, cmpEmpty))
					}
				}
			}
		})
	}
}

// cmpEmpty: a nil and an empty list are equal.
var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") })

func TestMachineQueries(t *testing.T) {
	now := time.Unix(0, 0)
	m := NewMachine(MachineConfig{Busy: BusyQueue, Grace: time.Second})
	if _, ok := m.IdleSince(); ok {
		t.Error("a thread with no agent is not idle")
	}
	m.Apply(now, msg(mAnn, "a"))
	if !m.Active() || m.Agent() != AgentStarting {
		t.Errorf("active %v, agent %v; want a start under way", m.Active(), m.Agent())
	}
	m.Apply(now, AgentStarted{})
	m.Apply(now, PermissionAsked{ID: "p1", Timeout: time.Minute})
	m.Apply(now, PermissionAsked{ID: "p2", Timeout: time.Second})
	if got := m.OldestPrompt(); got != "p1" {
		t.Errorf("oldest prompt %q, want p1", got)
	}
	if m.Stopped() {
		t.Error("stopped before any stop")
	}
	m.Apply(now, StopIn{By: mAnn})
	if !m.Stopped() || m.Pending("p1") {
		t.Errorf("stopped %v, p1 pending %v after a stop", m.Stopped(), m.Pending("p1"))
	}
	m.Apply(now.Add(time.Second), TurnDone{StopReason: "cancelled"})
	at, ok := m.IdleSince()
	if !ok || !at.Equal(now.Add(time.Second)) {
		t.Errorf("idle since %v %v", at, ok)
	}
	if m.Agent() != AgentReady {
		t.Errorf("agent %v after an honoured stop, want ready", m.Agent())
	}
}
