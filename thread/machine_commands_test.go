package thread

import (
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/google/go-cmp/cmp"
)

func cmd(by channels.Author, operator bool, name, args string) CommandIn {
	return CommandIn{In: channels.Inbound{Author: by, Command: &channels.Command{Name: name, Args: args}}, Operator: operator}
}

// describeCommandEffect writes the commands' effects, one line each.
func describeCommandEffect(f Effect) (string, bool) {
	switch f := f.(type) {
	case RunCommand:
		return "run /" + f.In.Command.Name + " " + f.In.Command.Args, true
	case ShowUsage:
		return "usage for " + displayName(f.In.Author), true
	case ShowWorkspace:
		return "workspace for " + displayName(f.In.Author), true
	case ShowDiff:
		return "diff for " + displayName(f.In.Author), true
	case RefuseCommand:
		return "refuse /" + f.In.Command.Name + " to " + displayName(f.In.Author), true
	case ShowStatus:
		return fmt.Sprintf("status turn=%v starting=%v by=%q since=%v queued=%d", f.Turn, f.Starting, f.By, !f.Since.IsZero(), f.Queued), true
	case EndSession:
		s := fmt.Sprintf("end-session by %s stop=%v", displayName(f.By), f.Stop)
		if f.Agent != "" {
			s += " agent=" + f.Agent
		}
		if f.Attach != "" {
			s += " attach=" + f.Attach
		}
		return s, true
	case Notify:
		if n, ok := f.Notice.(sysmsg.CommandBusy); ok {
			return "notice busy " + n.Command, true
		}
	}
	return "", false
}

func TestMachineCommands(t *testing.T) {
	cfg := MachineConfig{Busy: BusyQueue, Grace: 5 * time.Second, StartTimeout: time.Minute, IdleTimeout: 10 * time.Minute}
	ready := []step{
		{ev: msg(mAnn, "hello"), want: []string{"0s start-agent new hello"}},
		{ev: SlotTaken{}},
		{wait: time.Second, ev: AgentStarted{}, want: []string{"1s begin #1 hello"}},
		{wait: time.Second, ev: TurnDone{StopReason: "end_turn"}, want: []string{"2s end #1 end_turn"}},
	}
	busy := []step{
		{ev: msg(mAnn, "slow"), want: []string{"0s start-agent new slow"}},
		{ev: SlotTaken{}},
		{ev: AgentStarted{}, want: []string{"0s begin #1 slow"}},
	}
	cases := []struct {
		name  string
		steps [][]step
	}{
		{"status while idle", [][]step{ready, {
			{ev: cmd(mBob, false, "status", ""), want: []string{"2s status turn=false starting=false by=\"\" since=false queued=0"}},
		}}},
		{"status while busy names who started the turn and the queue", [][]step{busy, {
			{ev: msg(mBob, "next"), want: []string{"0s notice queued 1 ahead"}},
			{wait: time.Second, ev: cmd(mBob, false, "status", ""), want: []string{"1s status turn=true starting=false by=\"Ann\" since=true queued=1"}},
		}}},
		{"status while the agent starts", [][]step{{
			{ev: msg(mBob, "hello"), want: []string{"0s start-agent new hello"}},
			{ev: cmd(mAnn, false, "status", ""), want: []string{"0s status turn=false starting=true by=\"Bob\" since=false queued=0"}},
		}}},
		{"help and choices for anyone", [][]step{ready, {
			{ev: cmd(mBob, false, "help", ""), want: []string{"2s run /help "}},
			{ev: cmd(mBob, false, "model", ""), want: []string{"2s run /model "}},
			{ev: cmd(mBob, false, "effort", ""), want: []string{"2s run /effort "}},
		}}},
		{"changes only for operators", [][]step{ready, {
			{ev: cmd(mBob, false, "model", "demo-smart"), want: []string{"2s refuse /model to Bob"}},
			{ev: cmd(mBob, false, "mode", "plan"), want: []string{"2s refuse /mode to Bob"}},
			{ev: cmd(mBob, false, "effort", "high"), want: []string{"2s refuse /effort to Bob"}},
			{ev: cmd(mBob, false, "set", "model demo-smart"), want: []string{"2s refuse /set to Bob"}},
			{ev: cmd(mBob, false, "new", ""), want: []string{"2s refuse /new to Bob"}},
			{ev: cmd(mAnn, true, "model", "demo-smart"), want: []string{"2s run /model demo-smart"}},
			{ev: cmd(mAnn, true, "set", "effort high"), want: []string{"2s run /set effort high"}},
		}}},
		{"new stops the idle agent; the next message starts a new one", [][]step{ready, {
			{wait: time.Second, ev: cmd(mAnn, true, "new", ""), want: []string{"3s end-session by Ann stop=true"}},
			{wait: time.Hour}, // no reaper: the agent is gone
			{ev: msg(mAnn, "again"), want: []string{"1h0m3s start-agent new again"}},
		}}},
		{"new before any agent", [][]step{{
			{ev: cmd(mAnn, true, "new", ""), want: []string{"0s end-session by Ann stop=false"}},
		}}},
		{"new waits for the turn", [][]step{busy, {
			{ev: cmd(mAnn, true, "new", ""), want: []string{"0s notice busy /new"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn"}},
			{ev: cmd(mAnn, true, "new", ""), want: []string{"0s end-session by Ann stop=true"}},
		}}},
		{"agent: the list for anyone, a move for operators once idle", [][]step{busy, {
			{ev: cmd(mBob, false, "agent", ""), want: []string{"0s run /agent "}},
			{ev: cmd(mBob, false, "agent", "claude"), want: []string{"0s refuse /agent to Bob"}},
			{ev: cmd(mAnn, true, "agent", "claude"), want: []string{"0s notice busy /agent"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn"}},
			{ev: cmd(mAnn, true, "agent", "claude"), want: []string{"0s run /agent claude"}},
			{ev: SwitchAgent{By: mAnn, Agent: "claude"}, want: []string{"0s end-session by Ann stop=true agent=claude"}},
			{ev: msg(mAnn, "hi"), want: []string{"0s start-agent new hi"}},
		}}},
		{"a switch that comes while a turn starts waits", [][]step{{
			{ev: msg(mAnn, "hi"), want: []string{"0s start-agent new hi"}},
			{ev: SwitchAgent{By: mAnn, Agent: "claude"}, want: []string{"0s notice busy /agent"}},
		}}},
		{"sessions for anyone; attach for operators once idle", [][]step{ready, {
			{ev: cmd(mBob, false, "sessions", ""), want: []string{"2s run /sessions "}},
			{ev: cmd(mBob, false, "attach", ""), want: []string{"2s run /attach "}},
			{ev: cmd(mBob, false, "attach", "s-9"), want: []string{"2s refuse /attach to Bob"}},
			{ev: msg(mAnn, "work"), want: []string{"2s start-agent work"}},
			{ev: cmd(mAnn, true, "attach", "s-9"), want: []string{"2s notice busy /attach"}},
			{ev: AttachSession{By: mAnn, ID: "s-9"}, want: []string{"2s notice busy /attach"}},
			{ev: AgentStarted{}, want: []string{"2s begin #2 work"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"2s end #2 end_turn"}},
			{ev: cmd(mAnn, true, "attach", "s-9"), want: []string{"2s run /attach s-9"}},
			{ev: AttachSession{By: mAnn, ID: "s-9"}, want: []string{"2s end-session by Ann stop=true attach=s-9"}},
		}}},
		{"usage, workspace and diff for anyone, also while a turn runs", [][]step{busy, {
			{ev: cmd(mBob, false, "usage", ""), want: []string{"0s usage for Bob"}},
			{ev: cmd(mBob, false, "workspace", ""), want: []string{"0s workspace for Bob"}},
			{ev: cmd(mBob, false, "diff", ""), want: []string{"0s diff for Bob"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn"}},
			{ev: cmd(mAnn, true, "diff", ""), want: []string{"0s diff for Ann"}},
		}}},
		{"commands after the shutdown are dropped", [][]step{ready, {
			{ev: Shutdown{}, want: []string{"2s stop-agent shutdown", "2s exit"}},
			{ev: cmd(mAnn, true, "new", "")},
			{ev: cmd(mAnn, true, "status", "")},
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
			h := &machineHarness{m: NewMachine(cfg), start: start, now: start}
			n := 0
			for _, steps := range tc.steps {
				for _, s := range steps {
					n++
					h.wait(s.wait)
					if s.ev != nil {
						w, fx := h.m.Apply(h.now, s.ev)
						h.wake = w
						for _, f := range fx {
							d, ok := describeCommandEffect(f)
							if !ok {
								d = describeEffect(f)
							}
							h.log = append(h.log, fmt.Sprintf("%v %s", h.now.Sub(h.start), d))
						}
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
