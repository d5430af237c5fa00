package thread

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

// got is a person's message with an id, as the router hands it in.
func got(by channels.Author, id, text string) Received {
	return Received{In: channels.Inbound{Author: by, ID: channels.MessageID(id), Text: text}}
}

func stopMsg(by channels.Author, id string, all bool) Received {
	r := got(by, id, "stop")
	r.Stop, r.All = true, all
	return r
}

func numbered(r Received, approver bool) Received {
	r.Numbered, r.Approver = true, approver
	return r
}

func retaken(r Received, key time.Duration) Received {
	r.Retaken = harnessStart.Add(key)
	return r
}

// Every decision on a person's message is the machine's: a message
// taken before is dropped (unless a take-over asks it again), a stop
// stops, a number answers the oldest prompt where the channel has no
// buttons, and a prompt is marked from the moment it is accepted until
// its turn begins (the mark then goes with the turn), or cleared when
// it begins no turn; a shutdown keeps the marks.
func TestMachineReceived(t *testing.T) {
	cfg := MachineConfig{Busy: BusyQueue, Grace: 5 * time.Second, StartTimeout: time.Minute, IdleTimeout: 10 * time.Minute}
	started := []step{
		{ev: got(mAnn, "m1", "hello"), want: []string{"0s mark hello 0s", "0s start-agent new hello"}},
		{ev: SlotTaken{}},
		{wait: time.Second, ev: AgentStarted{}, want: []string{"1s begin #1 hello marked 0s"}},
	}
	asked := append(append([]step{}, started...),
		step{ev: PermissionAsked{ID: "p1", Timeout: time.Minute, Options: []string{"allow", "reject"}}, want: []string{"1s show p1"}})
	cases := []struct {
		name  string
		steps [][]step
	}{
		{"a prompt is marked when accepted; its turn keeps the mark", [][]step{started}},
		{"the same message again is dropped, in a turn or after", [][]step{started, {
			{ev: got(mAnn, "m1", "hello"), want: []string{"1s duplicate m1"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"1s end #1 end_turn"}},
			{wait: time.Second, ev: got(mAnn, "m1", "hello"), want: []string{"2s duplicate m1"}},
		}}},
		{"a message without an id is always new", [][]step{{
			{ev: got(mAnn, "", "one"), want: []string{"0s mark one 0s", "0s start-agent new one"}},
			{ev: got(mAnn, "", "one"), want: []string{"0s mark one 1ms", "0s notice queued 1 ahead"}},
		}}},
		{"a prompt a take-over asks again keeps its mark and is taken twice", [][]step{{
			{ev: retaken(got(mAnn, "m1", "hello"), -time.Hour), want: []string{"0s start-agent new hello"}},
			{ev: SlotTaken{}},
			{ev: AgentStarted{}, want: []string{"0s begin #1 hello marked -1h0m0s"}},
			{ev: TurnDone{StopReason: "end_turn"}, want: []string{"0s end #1 end_turn"}},
			{ev: retaken(got(mAnn, "m1", "hello"), -time.Hour), want: []string{"0s start-agent hello"}},
		}}},
		{"marks keep their order within a millisecond", [][]step{started, {
			{ev: got(mBob, "m2", "two"), want: []string{"1s mark two 1s", "1s notice queued 1 ahead queued-m2"}},
			{ev: got(mBob, "m3", "three"), want: []string{"1s mark three 1.001s", "1s notice queued 2 ahead queued-m3"}},
		}}},
		{"a stop drops nothing but the turn; stop all clears the queued marks", [][]step{started, {
			{ev: got(mBob, "m2", "two"), want: []string{"1s mark two 1s", "1s notice queued 1 ahead queued-m2"}},
			{ev: stopMsg(mAnn, "s1", false), want: []string{"1s notice stopping stop-1", "1s typing-off", "1s cancel-turn", "1s tell 1 queued stay"}},
			{ev: stopMsg(mAnn, "s2", true), want: []string{"1s settle queued: dropped queued-m2", "1s clear-mark 1s"}},
		}}},
		{"a failed start clears its prompt's mark", [][]step{{
			{ev: got(mAnn, "m1", "hello"), want: []string{"0s mark hello 0s", "0s start-agent new hello"}},
			{ev: SlotTaken{}},
			{ev: AgentStarted{Err: errCrash}, want: []string{"0s typing-off", "0s notice start failed: the agent's process exited", "0s clear-mark 0s"}},
		}}},
		{"a shutdown keeps the marks of what waits", [][]step{started, {
			{ev: got(mBob, "m2", "two"), want: []string{"1s mark two 1s", "1s notice queued 1 ahead queued-m2"}},
			{ev: Shutdown{}, want: []string{"1s tell-interrupted", "1s cancel-turn"}},
			{ev: TurnDone{StopReason: "cancelled"}, want: []string{"1s end #1 cancelled cut", "1s stop-agent shutdown", "1s exit"}},
		}}},
		{"a number answers the oldest prompt where there are no buttons", [][]step{asked, {
			{ev: numbered(got(mBob, "m2", "2."), true), want: []string{"1s settle p1 answered reject by Bob"}},
		}}},
		{"a number a take-over asks again that answers a prompt clears its mark", [][]step{asked, {
			{ev: retaken(numbered(got(mBob, "m2", "1"), true), -time.Hour), want: []string{"1s settle p1 answered allow by Bob", "1s clear-mark -1h0m0s"}},
		}}},
		{"a stop a take-over asks again clears its mark", [][]step{started, {
			{ev: retaken(stopMsg(mAnn, "s1", false), -time.Hour), want: []string{"1s clear-mark -1h0m0s", "1s notice stopping stop-1", "1s typing-off", "1s cancel-turn"}},
		}}},
		{"a number out of range says the range", [][]step{asked, {
			{ev: numbered(got(mBob, "m2", "3"), true), want: []string{"1s notice sysmsg.AnswerRange"}},
		}}},
		{"a number from who may not approve is refused", [][]step{asked, {
			{ev: numbered(got(mBob, "m2", "1"), false), want: []string{"1s not-approver p1"}},
		}}},
		{"a number with no prompt waiting, or with buttons, is a prompt", [][]step{asked, {
			{ev: got(mBob, "m2", "1"), want: []string{"1s mark 1 1s", "1s notice queued 1 ahead queued-m2"}},
			{ev: numbered(got(mBob, "m3", "1"), true), want: []string{"1s settle p1 answered allow by Bob"}},
			{ev: numbered(got(mBob, "m4", "1"), true), want: []string{"1s mark 1 1.001s", "1s notice queued 2 ahead queued-m4"}},
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &machineHarness{m: NewMachine(cfg), start: harnessStart, now: harnessStart}
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

// Took: the id of the message taken before the thread came to memory
// is not taken again.
func TestMachineTookBefore(t *testing.T) {
	h := &machineHarness{m: NewMachine(MachineConfig{Busy: BusyQueue}), start: harnessStart, now: harnessStart}
	h.m.Took("m1")
	h.apply(got(mAnn, "m1", "hello"))
	if want := []string{"0s duplicate m1"}; !cmp.Equal(h.log, want) {
		t.Fatalf("got %v, want %v", h.log, want)
	}
}
