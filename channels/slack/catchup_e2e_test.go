package slack

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/channeltest/e2e"
	"github.com/acpgw/gateway/session"
)

// What the suite's CatchUpAfterRestart does not show, on Slack: a
// message the catch-up read and Slack then delivers live, or redelivers,
// is not answered again; a message delivered live while the backlog
// waits (its history read asked to wait) is answered after it.
func TestCatchUpMeetsSlacksRedelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	e2e.LeakCheck(t)
	d := newDriver(t, fakeOptions{})
	f := d.f
	c := e2e.Config{
		Dir:      t.TempDir(),
		AgentEnv: demoAgentEnv,
		Access:   session.AccessRule{Users: []string{ann}},
		CatchUp:  session.CatchUp{Window: 24 * time.Hour, MaxMessages: 3},
	}
	first := e2e.Start(t, d, c)
	a := first.Mention(e2e.Ann, "echo a0")
	first.WaitEnd(a)
	first.Stop()
	n := len(d.Messages(a))
	a1 := f.sayWhileDown(ann, a.Thread, "echo a1")
	a2 := f.sayWhileDown(ann, a.Thread, "echo a2")

	// The first read is asked to wait; meanwhile Slack delivers a1's
	// event after all (it retries what it could not deliver), and Ann
	// writes again. a1 is still answered before a2.
	f.failNext("conversations.replies", failure{status: 429, retryAfter: "2"})
	second := e2e.Start(t, d, c)
	second.Wait("a history read", func() bool { return d.HistoryReads(a) > 0 })
	if err := f.send(second.Ctx(), a1.raw[0]); err != nil {
		t.Fatal(err)
	}
	second.Say(e2e.Ann, a, "echo live")
	for range 3 {
		second.WaitEnd(a)
	}
	if got := e2e.AnswerText(second.Since(a, n)); got != "a1 a2 live" {
		t.Errorf("answers in a after the restart = %q, want \"a1 a2 live\"\n%s", got, second.Dump(a))
	}
	// Slack redelivers a2: not answered again.
	f.mustRedeliver(second.Ctx(), a2.raw[0], 1)
	second.Say(e2e.Ann, a, "echo a3")
	second.WaitEnd(a)
	if got := e2e.AnswerText(second.Since(a, n)); got != "a1 a2 live a3" {
		t.Errorf("answers in a = %q, want \"a1 a2 live a3\" (each once)\n%s", got, second.Dump(a))
	}
	second.Stop()
}
