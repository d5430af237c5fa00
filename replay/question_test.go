package replay

import (
	"os"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels/channeltest"
)

// questionTexts is the final text of each message of kind question, in
// post order.
func questionTexts(ops []channeltest.Op) []string {
	var ids []string
	final := map[string]string{}
	for _, op := range ops {
		if op.Kind != KindQuestion {
			continue
		}
		if _, ok := final[string(op.Msg)]; !ok {
			ids = append(ids, string(op.Msg))
		}
		final[string(op.Msg)] = op.Text
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = final[id]
	}
	return out
}

// TestReplayShowsQuestions: the recorded elicitation/create requests and
// their answers replay through the machine and print as kind question:
// a single choice with its buttons, a form as its card, each folded to
// its outcome (the recorded answer, or the stop that cancelled it).
func TestReplayShowsQuestions(t *testing.T) {
	data, err := os.ReadFile("testdata/streams/demo.questions.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	outcomes := []string{
		"❓ Which color should the button be? — ✅ Green (someone)",
		"❓ Tell me about the release. — ✅ Release name: Aurora; Retries: 3 (someone)",
		"❓ Which color should the button be? — ⏹️ cancelled",
	}
	for _, preset := range []string{"web", "none"} {
		t.Run(preset, func(t *testing.T) {
			got, warn := replayString(t, string(data), optionsFromArgs(t, "--limits "+preset+" --frame-interval 2s"))
			if warn != "" {
				t.Errorf("warnings: %s", warn)
			}
			ops := decodeOps(t, got)
			texts := strings.Join(questionTexts(ops), "\n")
			for _, want := range outcomes {
				if !strings.Contains(texts, want) {
					t.Errorf("no question reads %q; the questions:\n%s", want, texts)
				}
			}
			var buttons []string
			for _, op := range ops {
				if op.Kind == KindQuestion && op.Op == "prompt" {
					buttons = append(buttons, strings.Join(op.Options, ","))
				}
			}
			want := 0
			if preset == "web" {
				want = 2
			}
			if len(buttons) != want || (want > 0 && buttons[0] != "question-1/0,question-1/1,question-1/2,question-1/-") {
				t.Errorf("question buttons = %q, want %d with three choices and Decline", buttons, want)
			}
		})
	}
}

// TestReplayQuestionDeclineAndLink: a declined question and a url question
// finished at its link (elicitation/complete) fold to those outcomes; an
// elicitation that cannot be read is skipped with a warning.
func TestReplayQuestionDeclineAndLink(t *testing.T) {
	stream := expandStream(t, `
prompt
{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"sessionId":"s1","mode":"form","message":"Pick one","requestedSchema":{"type":"object","properties":{"c":{"type":"string","enum":["a","b"]}},"required":["c"]}}}
{"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}
{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"sessionId":"s1","mode":"url","message":"Sign in","url":"https://example.test/login","elicitationId":"e1"}}
{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e1"}}
{"jsonrpc":"2.0","id":2,"result":{"action":"accept"}}
{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"mode":"form","message":"no session"}}
{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}
end end_turn
`)
	got, warn := replayString(t, stream, optionsFromArgs(t, "--limits web --frame-interval 2s"))
	if !strings.Contains(warn, "line 7: question not shown: elicitation params: no sessionId") {
		t.Errorf("warn = %q, want the unreadable question", warn)
	}
	texts := questionTexts(decodeOps(t, got))
	if len(texts) != 2 || !strings.Contains(texts[0], "Pick one — ❌ declined") || !strings.Contains(texts[1], "Sign in — ✅ done at the link") {
		t.Errorf("questions = %q, want a declined choice and a url done at its link", texts)
	}
	if !strings.Contains(got, `"kind":"text","text":"ok"`) {
		t.Errorf("the turn's text is missing:\n%s", got)
	}
}
