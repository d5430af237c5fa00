package agent

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/projector"
)

// FuzzTapLine: any line from an agent is handled without a panic; a
// request goes to exactly one of its handlers, an answer to the call
// waiting for its id and to no other, and a line that does not decode to
// none of them.
func FuzzTapLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no","data":{"details":"x"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s","options":[]}}`,
		`{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"sessionId":"s","mode":"url"}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p1"}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{}}`,
		`{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		`{"jsonrpc":"2.0","method":"_vendor/x","params":{}}`,
		`{this is not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		handled := 0
		tp := &tap{
			log: slog.New(slog.DiscardHandler), stdin: discard{}, done: make(chan struct{}),
			onUpdate:   func(projector.Update) {},
			onAnswered: func(string) {},
			onRequest:  func(id []byte, method string, params []byte) { handled++ },
			onElicit:   func(id, params []byte) { handled++ },
			onComplete: func([]byte) {},
		}
		waiting := make(chan rawReply, 1)
		tp.calls = map[string]chan rawReply{"n:1": waiting}
		tp.line(bytes.Clone(line))

		var fr acpwire.Frame
		if acpwire.Decode(bytes.TrimSpace(line), &fr) != nil {
			if handled != 0 || len(waiting) != 0 {
				t.Fatalf("a line that does not decode was handled (%d) or answered a call (%d)", handled, len(waiting))
			}
			return
		}
		switch fr.Kind {
		case acpwire.Request:
			if handled != 1 {
				t.Fatalf("request handled %d times", handled)
			}
		case acpwire.Result, acpwire.Error:
			want := 0
			if idKey(fr.ID) == "n:1" {
				want = 1
			}
			if len(waiting) != want {
				t.Fatalf("answer with id %s reached the call for id 1 %d times, want %d", fr.ID, len(waiting), want)
			}
			if want == 1 {
				r := <-waiting
				if (fr.Kind == acpwire.Error) != (r.err != nil) {
					t.Fatalf("a %s frame gave error %v", fr.Kind, r.err)
				}
			}
		}
	})
}
