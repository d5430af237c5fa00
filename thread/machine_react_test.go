package thread

import (
	"errors"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

func msgID(by channels.Author, id, text string) PromptIn {
	return PromptIn{In: channels.Inbound{Author: by, Text: text, ID: channels.MessageID(id)}}
}

func stopReaction(by channels.Author, id string, may bool) ReactionStop {
	return ReactionStop{By: by, Message: channels.MessageID(id), MayStop: may}
}

// TestMachineReactions: a person's message is marked queued, taken, and
// done, failed or stopped, each mark replacing the one before; a silent
// turn is marked stalled until the agent speaks; a stop reaction on the
// prompt or a message of the running turn stops it, by someone allowed
// only; with reactions off, nothing is marked.
func TestMachineReactions(t *testing.T) {
	cfg := MachineConfig{Busy: BusyQueue, Grace: 5 * time.Second, StartTimeout: time.Minute, Reactions: true, ReactStallAfter: time.Minute}
	off := cfg
	off.Reactions = false
	interrupt := cfg
	interrupt.Busy = BusyInterrupt
	busy := []step{
		{ev: msgID(mAnn, "m1", "slow"), want: []string{"0s react m1 👀", "0s start-agent new slow"}},
		{ev: SlotTaken{}},
		{ev: AgentStarted{}, want: []string{"0s begin #1 slow"}},
	}
	cases := []struct {
		name  string
		cfg   MachineConfig
		steps [][]step
	}{
		{"taken, then done at the turn's end", cfg, [][]step{busy, {
			{ev: AgentOutput{}},
			{wait: time.Second, ev: TurnDone{StopReason: "end_turn"}, want: []string{"1s end #1 end_turn", "1s react m1 ✅ at end"}},
		}}},
		{"queued, then taken", cfg, [][]step{busy, {
			{ev: msgID(mBob, "m2", "second"), want: []string{"0s react m2 ⏳", "0s notice queued 1 ahead queued-m2"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn", "0s react m1 ✅ at end", "0s react m2 👀", "0s settle queued: ran queued-m2", "0s start-agent second"}},
			{ev: AgentStarted{}, want: []string{"0s begin #2 second"}},
			{ev: TurnDone{Err: errors.New("boom")}, want: []string{"0s end #2  err", "0s react m2 ❌ at end"}},
		}}},
		{"the agent exited: failed", cfg, [][]step{busy, {
			{ev: TurnDone{Err: errCrash, Exited: true}, want: []string{"0s end #1  err exited", "0s react m1 ❌ at end", "0s drop-agent"}},
		}}},
		{"stopped by the word: stopped, the queue kept", cfg, [][]step{busy, {
			{ev: msgID(mBob, "m2", "queued"), want: []string{"0s react m2 ⏳", "0s notice queued 1 ahead queued-m2"}},
			{ev: StopIn{By: mAnn}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn", "0s tell 1 queued stay"}},
			{ev: TurnDone{StopReason: "cancelled"}, want: []string{"0s end #1 cancelled stopped by Ann ack stop-1", "0s react m1 ⏹️ at end", "0s react m2 👀", "0s settle queued: ran queued-m2", "0s start-agent queued"}},
		}}},
		{"stop all: stopped, the queue dropped", cfg, [][]step{busy, {
			{ev: msgID(mBob, "m2", "queued"), want: []string{"0s react m2 ⏳", "0s notice queued 1 ahead queued-m2"}},
			{ev: StopIn{By: mAnn, All: true}, want: []string{"0s react m2 ⏹️", "0s settle queued: dropped queued-m2", "0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{ev: TurnDone{StopReason: "cancelled"}, want: []string{"0s end #1 cancelled stopped by Ann ack stop-1", "0s react m1 ⏹️ at end"}},
		}}},
		{"queued while a stop is under way: told so, without asking for a stop", cfg, [][]step{busy, {
			{ev: StopIn{By: mAnn}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{ev: msgID(mBob, "m2", "after"), want: []string{"0s react m2 ⏳", "0s notice queued 1 ahead (stopping) queued-m2"}},
			{ev: TurnDone{StopReason: "cancelled"}, want: []string{"0s end #1 cancelled stopped by Ann ack stop-1", "0s react m1 ⏹️ at end", "0s react m2 👀", "0s settle queued: ran queued-m2", "0s start-agent after"}},
		}}},
		{"interrupted: stopped, the new one queued then taken", interrupt, [][]step{busy, {
			{ev: msgID(mBob, "m2", "instead"), want: []string{"0s react m2 ⏳", "0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{ev: TurnDone{StopReason: "cancelled"}, want: []string{
				"0s end #1 cancelled stopped by Bob interrupted ack stop-1", "0s react m1 ⏹️ at end", "0s react m2 👀", "0s start-agent instead"}},
		}}},
		{"stalled, then speaking again", cfg, [][]step{busy, {
			{wait: 59 * time.Second},
			{wait: time.Second, want: []string{"1m0s react m1 ⚠️"}},
			{wait: 10 * time.Minute},
			{ev: AgentOutput{}, want: []string{"11m0s react m1 👀"}},
			{ev: AgentOutput{}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"11m0s end #1 end_turn", "11m0s react m1 ✅ at end"}},
		}}},
		{"a prompt waiting is no stall", cfg, [][]step{busy, {
			{ev: PermissionAsked{ID: "p1", Timeout: 10 * time.Minute}, want: []string{"0s show p1"}},
			{wait: 5 * time.Minute},
			{ev: PermissionAnswer{ID: "p1", Option: "allow", By: mAnn, Approver: true}, want: []string{"5m0s settle p1 answered allow by Ann"}},
			{wait: time.Minute, want: []string{"6m0s react m1 ⚠️"}},
		}}},
		{"stop reaction on the prompt", cfg, [][]step{busy, {
			{ev: stopReaction(mBob, "m1", true), want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{ev: TurnDone{StopReason: "cancelled"}, want: []string{"0s end #1 cancelled stopped by Bob ack stop-1", "0s react m1 ⏹️ at end"}},
		}}},
		{"stop reaction on a message of the turn", cfg, [][]step{busy, {
			{ev: Posted{ID: "out-1"}},
			{ev: stopReaction(mBob, "out-1", true), want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
		}}},
		{"stop reaction while the agent starts", cfg, [][]step{{
			{ev: msgID(mAnn, "m1", "hello"), want: []string{"0s react m1 👀", "0s start-agent new hello"}},
			{ev: stopReaction(mAnn, "m1", true), want: []string{"0s cancel-start", "0s typing-off"}},
			{ev: AgentStarted{Err: errors.New("context canceled")}, want: []string{"0s typing-off", "0s react m1 ⏹️", "0s notice stopped before start by Ann"}},
		}}},
		{"stop reaction ignored: not allowed, another message, an earlier turn's", cfg, [][]step{busy, {
			{ev: stopReaction(mBob, "m1", false)},
			{ev: Posted{ID: "out-1"}},
			{ev: stopReaction(mAnn, "elsewhere", true)},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn", "0s react m1 ✅ at end"}},
			{ev: msgID(mAnn, "m2", "next"), want: []string{"0s react m2 👀", "0s start-agent next"}},
			{ev: AgentStarted{}, want: []string{"0s begin #2 next"}},
			{ev: stopReaction(mAnn, "out-1", true)},
			{ev: stopReaction(mAnn, "m1", true)},
		}}},
		{"start failed", cfg, [][]step{{
			{ev: msgID(mAnn, "m1", "hello"), want: []string{"0s react m1 👀", "0s start-agent new hello"}},
			{ev: AgentStarted{Err: errors.New("no such agent")}, want: []string{"0s typing-off", "0s react m1 ❌", "0s notice start failed: no such agent"}},
		}}},
		{"reactions off", off, [][]step{{
			{ev: msgID(mAnn, "m1", "slow"), want: []string{"0s start-agent new slow"}},
			{ev: AgentStarted{}, want: []string{"0s begin #1 slow"}},
			{ev: msgID(mBob, "m2", "second"), want: []string{"0s notice queued 1 ahead queued-m2"}},
			{wait: time.Hour},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"1h0m0s end #1 end_turn", "1h0m0s settle queued: ran queued-m2", "1h0m0s start-agent second"}},
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
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
