package thread

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

func describeQuestionEffect(f Effect) (string, bool) {
	switch f := f.(type) {
	case ShowQuestion:
		return "ask " + f.ID, true
	case SettleQuestion:
		s := fmt.Sprintf("settle-question %s %s %s", f.ID, f.Status, f.Action)
		if len(f.Values) > 0 {
			var kv []string
			for k, v := range f.Values {
				kv = append(kv, k+"="+strings.Join(v, ","))
			}
			slices.Sort(kv)
			s += " " + strings.Join(kv, " ")
		}
		if f.By.ID != "" || f.By.Name != "" {
			s += " by " + displayName(f.By)
		}
		for _, flag := range []struct {
			on   bool
			name string
		}{{f.Done, "done"}, {f.NotShown, "not shown"}, {f.Unshown, "unshown"}, {f.Shutdown, "shutdown"}} {
			if flag.on {
				s += " " + flag.name
			}
		}
		return s, true
	case NotAsker:
		return "not-asker " + f.ID, true
	}
	return "", false
}

// TestMachineQuestions: an agent's question waits like a permission
// prompt: answered by the person who started the turn or an approver
// (others refused), done at its link, expired after the timeout, cancelled
// by a stop, withdrawn by the agent, settled by the shutdown; while it
// waits, the agent's silence is no stall.
func TestMachineQuestions(t *testing.T) {
	cfg := MachineConfig{Busy: BusyQueue, Grace: 5 * time.Second, StallTimeout: 30 * time.Second}
	busy := []step{
		{ev: msg(mAnn, "ask"), want: []string{"0s start-agent new ask"}},
		{ev: SlotTaken{}},
		{ev: AgentStarted{}, want: []string{"0s begin #1 ask"}},
		{ev: QuestionAsked{ID: "q1", Timeout: 5 * time.Minute}, want: []string{"0s ask q1"}},
	}
	accept := func(by channels.Author, approver bool) QuestionAnswer {
		return QuestionAnswer{ID: "q1", Action: channels.FormAccept, Values: map[string][]string{"color": {"green"}}, By: by, Approver: approver}
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"answered by the person who started the turn", []step{
			{wait: time.Minute, ev: accept(mAnn, false), want: []string{"1m0s settle-question q1 answered accept color=green by Ann"}},
			{ev: accept(mAnn, false), want: []string{"1m0s not-waiting q1"}},
		}},
		{"a stranger refused, an approver may", []step{
			{ev: accept(mBob, false), want: []string{"0s not-asker q1"}},
			{ev: QuestionAnswer{ID: "q1", Action: channels.FormDecline, By: mBob, Approver: true}, want: []string{"0s settle-question q1 answered decline by Bob"}},
		}},
		{"an unknown action is a cancel", []step{
			{ev: QuestionAnswer{ID: "q1", Action: "shrug", By: mAnn}, want: []string{"0s settle-question q1 answered cancel by Ann"}},
		}},
		{"no answer in time: cancel; no stall notice meanwhile", []step{
			{wait: 5*time.Minute - time.Second},
			{wait: time.Second, want: []string{"5m0s settle-question q1 expired cancel"}},
			{ev: accept(mAnn, false), want: []string{"5m0s not-waiting q1"}},
			{wait: 30 * time.Second, want: []string{"5m30s notice stalled 30s in turn"}},
		}},
		{"a stop cancels", []step{
			{ev: StopIn{By: mBob}, want: []string{"0s notice stopping stop-1", "0s settle-question q1 cancelled cancel by Bob", "0s typing-off", "0s cancel-turn"}},
			{ev: QuestionAsked{ID: "q2", Timeout: time.Minute}, want: []string{"0s settle-question q2 cancelled cancel unshown"}},
		}},
		{"done at the link", []step{
			{ev: QuestionDone{ID: "q1"}, want: []string{"0s settle-question q1 answered accept done"}},
			{ev: QuestionDone{ID: "q1"}},
		}},
		{"withdrawn by the agent, or not shown", []step{
			{ev: QuestionWithdrawn{ID: "q1"}, want: []string{"0s settle-question q1 cancelled cancel by the agent"}},
			{ev: QuestionAsked{ID: "q2", Timeout: time.Minute}, want: []string{"0s ask q2"}},
			{ev: QuestionUnshown{ID: "q2"}, want: []string{"0s settle-question q2 cancelled cancel not shown"}},
		}},
		{"the shutdown settles it", []step{
			{ev: Shutdown{}, want: []string{"0s tell-interrupted", "0s settle-question q1 expired cancel shutdown", "0s cancel-turn"}},
		}},
		{"asked with no turn: only approvers", []step{
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn"}},
			{ev: QuestionAsked{ID: "q2", Timeout: time.Minute}, want: []string{"0s ask q2"}},
			{ev: QuestionAnswer{ID: "q2", Action: channels.FormAccept, By: mAnn}, want: []string{"0s not-asker q2"}},
			{ev: QuestionAnswer{ID: "q2", Action: channels.FormAccept, By: mAnn, Approver: true}, want: []string{"0s settle-question q2 answered accept by Ann"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
			h := &machineHarness{m: NewMachine(cfg), start: start, now: start}
			for n, s := range append(slices.Clone(busy), tc.steps...) {
				h.wait(s.wait)
				if s.ev != nil {
					h.apply(s.ev)
				}
				got := h.log
				h.log = nil
				if !cmp.Equal(got, s.want, cmpEmpty) {
					t.Fatalf("step %d (%T): (-got +want):\n%s", n+1, s.ev, cmp.Diff(got, s.want, cmpEmpty))
				}
			}
		})
	}
}
