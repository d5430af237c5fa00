package replay

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// FuzzRun replays any input: recorded permission requests and their
// answers (decoded by agent.DecodePermissionRequest and
// DecodePermissionOutcome), questions and their answers (elicitation/create
// by agent.ParseQuestion, its result's content), cancels and turns in any order and shape
// never panic, and the output depends only on the input.
func FuzzRun(f *testing.F) {
	for _, name := range []string{"demo.permission-stop", "demo.slow-stop", "claude-agent-acp.edit-permission-allow", "demo.questions"} {
		b, err := os.ReadFile("testdata/streams/" + name + ".ndjson")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}
{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"options":7,"toolCall":"x"}}
{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":{"options":[{"kind":"allow_once","name":"Allow","optionId":"a"}],"toolCall":{"toolCallId":"t"}}}
{"jsonrpc":"2.0","id":2,"result":{"outcome":{"outcome":"selected","optionId":"nope"}}}
{"jsonrpc":"2.0","id":1,"result":{"outcome":"cancelled"}}
{"jsonrpc":"2.0","method":"session/cancel","params":{}}
{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}
{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"boom"}}
`))
	// Ids pending on both sides at once; responses told apart by their
	// results, or not (an error, a result of no known shape).
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}
{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":{"options":[{"kind":"allow_once","name":"Allow","optionId":"a"}],"toolCall":{"toolCallId":"t"}}}
{"jsonrpc":"2.0","id":2,"result":{"outcome":{"outcome":"cancelled"}}}
{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}
{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}
{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}
{"jsonrpc":"2.0","id":3,"result":"x"}
{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"boom"}}
`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}
{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"sessionId":"s","mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1},"l":{"type":"array","items":{"enum":["a","b"]}}}}}}
{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"n":1.5,"l":["a",7,null],"x":{}}}}
{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"sessionId":"s","mode":"url","message":"m","url":"u","elicitationId":"e"}}
{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e"}}
{"jsonrpc":"2.0","method":"elicitation/complete","params":7}
{"jsonrpc":"2.0","id":2,"result":{"action":7}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
`))
	f.Fuzz(func(t *testing.T, in []byte) {
		o := Options{Preset: PresetFor(testPresets["discord"].Limits), FrameInterval: DefaultFrameInterval, Summary: true}
		var a, b bytes.Buffer
		_, errA := Run(context.Background(), bytes.NewReader(in), &a, o)
		_, errB := Run(context.Background(), bytes.NewReader(in), &b, o)
		if (errA == nil) != (errB == nil) || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("two replays of the same input differ:\n%s\n%v\n---\n%s\n%v", a.Bytes(), errA, b.Bytes(), errB)
		}
	})
}
