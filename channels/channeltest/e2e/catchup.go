package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// AnswerText joins the texts of the messages that hold the agent's
// answer (not the gateway's notices, prompts or forms), in order, with
// single spaces.
func AnswerText(ms []Message) string {
	var parts []string
	for _, m := range ms {
		if strings.HasPrefix(m.Text, "⚙") || m.Controls {
			continue
		}
		parts = append(parts, m.Text)
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// Messages written to bound threads while the gateway was down are
// answered by the next gateway on the same data directory: in order and
// once, not those of people without access, not in a thread quiet for
// longer than the window, and past the limit the thread is told instead.
func testCatchUpAfterRestart(t *testing.T, s Setup) {
	c := Config{
		Dir:     t.TempDir(),
		Access:  session.AccessRule{Users: []string{s.UserID(Ann)}},
		CatchUp: session.CatchUp{Window: 24 * time.Hour, MaxMessages: 3},
	}

	// Three bound threads: a, b (its last message two days old by the
	// time of the restart) and c.
	first := s.start(t, c)
	open := func(text string) channels.ThreadRef {
		th := first.Mention(Ann, text)
		first.WaitEnd(th)
		return th
	}
	a, b, cc := open("echo a0"), open("echo b0"), open("echo c0")
	first.Stop()

	// Down: b's last activity was two days ago.
	st, err := store.Open(t.Context(), filepath.Join(c.Dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MarkSeen(t.Context(), b, channels.MessageID(b.Thread), time.Now().Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	n := map[channels.ThreadRef]int{a: len(s.Messages(a)), b: len(s.Messages(b)), cc: len(s.Messages(cc))}
	s.SayWhileDown(t, Ann, a, "echo a1")
	s.SayWhileDown(t, Bob, a, "echo from bob")
	s.SayWhileDown(t, Ann, a, "echo a2")
	s.SayWhileDown(t, Ann, b, "echo stale")
	for i := range 4 {
		s.SayWhileDown(t, Ann, cc, "echo c"+string(rune('1'+i)))
	}

	second := s.start(t, c)
	second.WaitEnd(a)
	second.WaitEnd(a)
	if got := AnswerText(second.Since(a, n[a])); got != "a1 a2" {
		t.Errorf("answers in a after the restart = %q, want \"a1 a2\"\n%s", got, second.Dump(a))
	}
	// c had more than the limit: told, nothing run.
	second.WaitText(cc, n[cc], "4 messages arrived")
	// b is not read: a live message there is answered alone.
	second.Say(Ann, b, "echo live")
	second.WaitEnd(b)
	if got := AnswerText(second.Since(b, n[b])); got != "live" {
		t.Errorf("answers in b = %q, want only \"live\" (b was quiet for longer than the window)\n%s", got, second.Dump(b))
	}
	// Nothing more came in a, and nothing ran in c.
	second.Say(Ann, a, "echo a3")
	second.WaitEnd(a)
	if got := AnswerText(second.Since(a, n[a])); got != "a1 a2 a3" {
		t.Errorf("answers in a = %q, want \"a1 a2 a3\" (each once)\n%s", got, second.Dump(a))
	}
	if got := AnswerText(second.Since(cc, n[cc])); got != "" {
		t.Errorf("answers in c = %q, want none past the limit\n%s", got, second.Dump(cc))
	}
	if reads := s.HistoryReads(b); reads != 0 {
		t.Errorf("b's history was read %d times, want never", reads)
	}
	second.Stop()
}
