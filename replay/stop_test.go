package replay

import (
	"fmt"
	"strings"
	"testing"
)

// TestOneStopOneNotice: however soon after the stop the agent ends the
// turn (opencode took 52 ms, Qwen 7, Gemini 4; Codex up to 390), a stop
// is one notice: "Stopping…" edited into the final notice where the
// channel edits, the final notice alone where it cannot. The replay's
// virtual clock puts the frames exactly that far apart.
func TestOneStopOneNotice(t *testing.T) {
	stream := expandStream(t, `
prompt
{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello "}}
{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}
end cancelled
`)
	for _, preset := range []string{"web", "discord", "slack", "web --no-edit"} {
		for _, gap := range []string{"0s", "1ms", "4ms", "7ms", "52ms", "249ms", "390ms", "2s"} {
			args := fmt.Sprintf("--limits %s --frame-interval %s", preset, gap)
			t.Run(args, func(t *testing.T) {
				got, warn := replayString(t, stream, optionsFromArgs(t, args))
				if warn != "" {
					t.Fatalf("warnings: %s", warn)
				}
				type msg struct{ text string }
				byID := map[string]*msg{}
				var notices []*msg
				for _, op := range decodeOps(t, got) {
					switch {
					case op.Op == "send" && op.Kind == "notice":
						m := &msg{text: op.Text}
						byID[string(op.Msg)] = m
						notices = append(notices, m)
					case op.Op == "edit" && op.Kind == "notice":
						byID[string(op.Msg)].text = op.Text
					}
				}
				if len(notices) != 1 {
					var texts []string
					for _, n := range notices {
						texts = append(texts, n.text)
					}
					t.Fatalf("%d notices %q, want one\n%s", len(notices), texts, got)
				}
				if want := "⚙️ Stopped by someone."; notices[0].text != want {
					t.Errorf("the notice reads %q, want %q", notices[0].text, want)
				}
				if strings.Contains(preset, "no-edit") && strings.Contains(got, `"op":"edit"`) {
					t.Errorf("an edit on a channel that cannot edit:\n%s", got)
				}
			})
		}
	}
}
