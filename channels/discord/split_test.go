package discord

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acpgw/gateway/dispatch/dispatchtest"
)

// TestLongAnswerTakesFewestMessages streams a 125-line answer of 4,495
// characters (claude-agent-acp.long-markdown's, with a 71-line Go listing
// and a YAML block) through a real lane into the real adapter: Discord
// shows a message whole however many lines it has, so the answer takes
// the 3 messages its 2,000 characters a message need, not more, and no
// code block is cut (no fence closed and reopened: the messages together
// are the answer byte for byte, each with its fences paired).
func TestLongAnswerTakesFewestMessages(t *testing.T) {
	data, err := os.ReadFile("testdata/long-answer.md")
	if err != nil {
		t.Fatal(err)
	}
	answer := string(data)
	if n, lines := utf8.RuneCountInString(answer), strings.Count(answer, "\n")+1; n != 4495 || lines != 125 {
		t.Fatalf("testdata/long-answer.md has %d characters and %d lines, want 4,495 and 125", n, lines)
	}
	// As an agent streams it: a few words at a time.
	var chunks []string
	for rest := answer; rest != ""; {
		n := min(len(rest), 24)
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++
		}
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	f := newFake(t)
	a := f.adapter(t, Options{})
	t.Cleanup(a.http.CloseIdleConnections)
	dispatchtest.Stream(t, a, f.threadRef(), chunks)

	msgs := f.botMessages(f.thread)
	var got strings.Builder
	for i, m := range msgs {
		got.WriteString(m.Content)
		if n := utf8.RuneCountInString(m.Content); n > maxMessageChars {
			t.Errorf("message %d has %d characters, over Discord's %d", i+1, n, maxMessageChars)
		}
		if fences := strings.Count("\n"+m.Content, "\n```"); fences%2 != 0 {
			t.Errorf("message %d has %d fence lines, a code block cut:\n%s", i+1, fences, m.Content)
		}
	}
	if len(msgs) != 3 {
		t.Errorf("%d messages, want 3 (4,495 characters at 2,000 a message)", len(msgs))
	}
	if got.String() != answer {
		t.Errorf("the messages together are not the answer:\n got %q\nwant %q", got.String(), answer)
	}
}
