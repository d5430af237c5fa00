package mcpgate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/mcpgate"
)

// TestAskTool: the demo agent calls ask through the gateway mcp
// subprocess; the thread is asked the question with its options, and the
// answer, a decline or a cancel is the tool's result.
func TestAskTool(t *testing.T) {
	d := startDemo(t, 1<<20, false)
	for _, tc := range []struct {
		prompt string
		answer mcpgate.Answer
		asked  string
		reply  string
	}{
		{"ask-tool", mcpgate.Answer{Action: agent.Accept, Text: "green"}, "Which color should the button be? | red,green,blue", "ask answered:\nanswer: green"},
		{"ask-tool text", mcpgate.Answer{Action: agent.Accept, Text: "Aurora"}, "What should the release be called? | ", "ask answered:\nanswer: Aurora"},
		{"ask-tool", mcpgate.Answer{Action: agent.Decline}, "Which color should the button be? | red,green,blue", "ask answered:\ndeclined: the person chose not to answer"},
		{"ask-tool", mcpgate.Answer{Action: agent.Cancel}, "Which color should the button be? | red,green,blue", "ask answered:\ncancelled: the question got no answer (the turn was stopped, nobody answered in time, or it could not be shown)"},
	} {
		d.th.SetAnswer(tc.answer)
		if reply := d.say(tc.prompt); reply != tc.reply {
			t.Errorf("%s answering %+v: reply = %q, want %q", tc.prompt, tc.answer, reply, tc.reply)
		}
		qs := d.th.Questions()
		if diff := cmp.Diff(tc.asked, qs[len(qs)-1]); diff != "" {
			t.Errorf("question (-want +got):\n%s", diff)
		}
	}
}
