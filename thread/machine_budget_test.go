package thread

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/google/go-cmp/cmp"
)

func describeBudgetEffect(f Effect) string {
	switch f := f.(type) {
	case HoldBudget:
		return "hold " + string(f.Budget)
	case AskContinue:
		return "ask-continue " + f.ID + " " + string(f.Budget)
	case ReleaseBudget:
		return "release by " + displayName(f.By) + " ask " + f.Ask
	case RefuseContinue:
		return fmt.Sprintf("refuse-continue %T", f.Notice)
	case ShowUsage:
		return "show-usage " + f.In.Text
	case QueueKept:
		return fmt.Sprintf("tell %d queued stay", f.Waiting)
	case Notify:
		if n, ok := f.Notice.(sysmsg.BudgetReached); ok {
			return fmt.Sprintf("notice budget %s %v of %v", n.Budget, n.Used, n.Limit)
		}
	}
	return describeEffect(f)
}

func TestMachineBudgets(t *testing.T) {
	cfg := MachineConfig{Busy: BusyQueue, Grace: 5 * time.Second, StartTimeout: time.Minute, IdleTimeout: 10 * time.Minute}
	tokens := BudgetReached{Notice: sysmsg.BudgetReached{Budget: sysmsg.BudgetTurnTokens, Used: 31000, Limit: 30000}}
	// busy starts turn #1 and leaves it running.
	busy := []step{
		{ev: msg(mAnn, "slow"), want: []string{"0s start-agent new slow"}},
		{ev: SlotTaken{}},
		{ev: AgentStarted{}, want: []string{"0s begin #1 slow"}},
	}
	// reached stops turn #1 over the tokens budget.
	reached := []step{
		{wait: time.Second, ev: tokens, want: []string{
			"1s hold tokensPerTurn", "1s notice budget tokensPerTurn 31000 of 30000",
			"1s typing-off", "1s cancel-turn"}},
		{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{
			"2s end #1 cancelled stopped by the budget budgets.tokensPerTurn"}},
	}
	cases := []struct {
		name  string
		steps [][]step
	}{
		{"reached: the turn stops, the next prompt waits, an approver continues", [][]step{busy, reached, {
			{wait: time.Second, ev: msg(mBob, "next"), want: []string{"3s ask-continue budget-1 tokensPerTurn"}},
			{ev: msg(mBob, "and then"), want: []string{"3s notice queued 1 ahead"}},
			{ev: ContinueIn{By: mBob, Approver: false}, want: []string{"3s refuse-continue sysmsg.Refusal"}},
			{wait: time.Second, ev: ContinueIn{By: mAnn, Approver: true}, want: []string{
				"4s release by Ann ask budget-1", "4s start-agent next"}},
			{ev: ContinueIn{By: mAnn, Approver: true}, want: []string{"4s refuse-continue sysmsg.NotWaiting"}},
		}}},
		{"a prompt queued during the turn waits too", [][]step{busy, {
			{ev: msg(mBob, "queued"), want: []string{"0s notice queued 1 ahead"}},
		}, {
			{wait: time.Second, ev: tokens, want: []string{
				"1s hold tokensPerTurn", "1s notice budget tokensPerTurn 31000 of 30000",
				"1s typing-off", "1s cancel-turn"}},
			{wait: time.Second, ev: TurnDone{StopReason: "cancelled"}, want: []string{
				"2s end #1 cancelled stopped by the budget budgets.tokensPerTurn",
				"2s ask-continue budget-1 tokensPerTurn"}},
			{ev: ContinueIn{By: mAnn, Approver: true}, want: []string{"2s release by Ann ask budget-1", "2s start-agent queued"}},
		}}},
		{"continue before any prompt: the next one runs at once", [][]step{busy, reached, {
			{ev: ContinueIn{By: mAnn, Approver: true}, want: []string{"2s release by Ann ask "}},
			{ev: msg(mBob, "next"), want: []string{"2s start-agent next"}},
		}}},
		{"the agent ignores the cancel: killed after the grace", [][]step{busy, {
			{wait: time.Second, ev: tokens, want: []string{
				"1s hold tokensPerTurn", "1s notice budget tokensPerTurn 31000 of 30000",
				"1s typing-off", "1s cancel-turn"}},
			{wait: 5 * time.Second, want: []string{"6s kill"}},
		}}},
		{"reached twice, or after a stop: said once", [][]step{busy, {
			{ev: StopIn{By: mAnn}, want: []string{"0s notice stopping stop-1", "0s typing-off", "0s cancel-turn"}},
			{ev: tokens},
		}}},
		{"/usage is answered at once, running, held or idle", [][]step{busy, {
			{ev: CommandIn{In: channels.Inbound{Text: "/usage", Command: &channels.Command{Name: channels.CommandUsage}}}, want: []string{"0s show-usage /usage"}},
		}, reached, {
			{ev: CommandIn{In: channels.Inbound{Text: "/usage", Command: &channels.Command{Name: channels.CommandUsage}}}, want: []string{"2s show-usage /usage"}},
		}}},
		{"no turn: nothing (a late report)", [][]step{{
			{ev: tokens},
			{ev: msg(mAnn, "hi"), want: []string{"0s start-agent new hi"}},
		}}},
		{"restored from the store: held silently, the first prompt asks", [][]step{{
			{ev: BudgetReached{Notice: sysmsg.BudgetReached{Budget: sysmsg.BudgetChannelDayCost}, Restored: true}},
			{ev: msg(mAnn, "hi"), want: []string{"0s ask-continue budget-1 costPerChannelDay"}},
			{ev: ContinueIn{By: mAnn, Approver: true}, want: []string{"0s release by Ann ask budget-1", "0s start-agent new hi"}},
		}}},
		{"a stop while held keeps the waiting prompt, told; the hold stays", [][]step{busy, reached, {
			{ev: msg(mBob, "next"), want: []string{"2s ask-continue budget-1 tokensPerTurn"}},
			{ev: StopIn{By: mAnn}, want: []string{"2s notice nothing running, 0 dropped", "2s tell 1 queued stay"}},
			{ev: ContinueIn{By: mAnn, Approver: true}, want: []string{"2s release by Ann ask budget-1", "2s start-agent next"}},
		}}},
		{"stop all while held drops the waiting prompts; the hold stays", [][]step{busy, reached, {
			{ev: msg(mBob, "next"), want: []string{"2s ask-continue budget-1 tokensPerTurn"}},
			{ev: StopIn{By: mAnn, All: true}, want: []string{"2s notice nothing running, 1 dropped"}},
			{ev: msg(mBob, "again")},
			{ev: ContinueIn{By: mAnn, Approver: true}, want: []string{"2s release by Ann ask budget-1", "2s start-agent again"}},
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
			m := NewMachine(cfg)
			now, wake := start, time.Time{}
			var log []string
			apply := func(e Event) {
				w, fx := m.Apply(now, e)
				wake = w
				for _, f := range fx {
					log = append(log, fmt.Sprintf("%v %s", now.Sub(start), describeBudgetEffect(f)))
				}
			}
			n := 0
			for _, steps := range tc.steps {
				for _, s := range steps {
					n++
					target := now.Add(s.wait)
					for !wake.IsZero() && !wake.After(target) {
						now = wake
						apply(Tick{})
					}
					now = target
					if s.ev != nil {
						apply(s.ev)
					}
					got := log
					log = nil
					if strings.Join(got, "\n") != strings.Join(s.want, "\n") {
						t.Fatalf("step %d (%T): (-got +want):\n%s", n, s.ev, cmp.Diff(got, s.want))
					}
				}
			}
		})
	}
}
