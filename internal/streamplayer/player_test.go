package streamplayer

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

const recording = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/workspace","mcpServers":[]}}
{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}
{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"[MODE]"}}}}
{"jsonrpc":"2.0","id":3,"result":{}}
{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}
{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}],"toolCall":{"toolCallId":"t1"}}}
{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}
{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}
`

// gateway plays the client: it sends each of its frames after reading
// the agent's frames up to the one wanted before it ("" for none), and
// returns what the agent wrote and Play's error.
func gateway(t *testing.T, steps [][2]string) ([]string, error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Play([]byte(recording), inR, outW)
		outW.Close()
		done <- err
	}()
	var got []string
	sc := bufio.NewScanner(outR)
	for _, s := range steps {
		if want := s[0]; want != "" {
			for !strings.Contains(strings.Join(got, "\n"), want) {
				if !sc.Scan() {
					break
				}
				got = append(got, sc.Text())
			}
		}
		if _, err := io.WriteString(inW, s[1]+"\n"); err != nil {
			break // the player gave up
		}
	}
	inW.Close()
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	return got, <-done
}

func steps(answer string) [][2]string {
	return [][2]string{
		{"", `{"jsonrpc":"2.0","id":"acpgw-1","method":"initialize","params":{}}`},
		{`"id":"acpgw-1"`, `{"jsonrpc":"2.0","id":7,"method":"session/new","params":{}}`},
		{`"sessionId":"s1"`, `{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{}}`},
		{`session/request_permission`, `{"jsonrpc":"2.0","id":0,"result":{"outcome":` + answer + `}}`},
	}
}

// The recorded answers go out under the gateway's ids; the skipped
// set_mode's answer and the text sent while it was pending do not; the
// turn's text, the permission request and the prompt's answer do.
func TestPlayAnswersUnderTheGatewaysIDs(t *testing.T) {
	got, err := gateway(t, steps(`{"outcome":"selected","optionId":"allow"}`))
	if err != nil {
		t.Fatalf("Play: %v", err)
	}
	want := []string{
		`{"id":"acpgw-1","jsonrpc":"2.0","result":{"protocolVersion":1}}`,
		`{"id":7,"jsonrpc":"2.0","result":{"sessionId":"s1"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}],"toolCall":{"toolCallId":"t1"}}}`,
		`{"id":8,"jsonrpc":"2.0","result":{"stopReason":"end_turn"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("agent wrote:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A permission answered otherwise than recorded, a call the recording
// does not have there, and a frame after the recording's end fail.
func TestPlayFailsLoudly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps [][2]string
		want  string
	}{
		{"other option", steps(`{"outcome":"selected","optionId":"reject"}`), "permission 0 answered selected reject, the recording answered selected allow"},
		{"cancelled", steps(`{"outcome":"cancelled"}`), "permission 0 answered cancelled"},
		{"unexpected call", [][2]string{
			{"", `{"jsonrpc":"2.0","id":"acpgw-1","method":"initialize","params":{}}`},
			{`"id":"acpgw-1"`, `{"jsonrpc":"2.0","id":7,"method":"session/load","params":{}}`},
		}, `the recording has the client's line 3: {"jsonrpc":"2.0","id":2,"method":"session/new"`},
		{"after the end", append(steps(`{"outcome":"selected","optionId":"allow"}`),
			[2]string{`"stopReason"`, `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{}}`}),
			"after the recording ended, the gateway sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gateway(t, tc.steps)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Play = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// The people's side: a prompt, then a click on the recorded option.
func TestScript(t *testing.T) {
	got, err := Script([]byte(recording))
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{{Kind: "prompt", Permission: -1}, {Kind: "answer", Permission: 0, Option: "allow"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Script = %+v, want %+v", got, want)
	}
}

// An id pending on both sides at once (a prompt and a permission request
// both 11): the answer with an outcome is the permission's, the one
// with a stopReason the prompt's.
func TestParseSameIDBothSides(t *testing.T) {
	frames, err := Parse([]byte(`{"jsonrpc":"2.0","id":11,"method":"session/prompt","params":{}}
{"jsonrpc":"2.0","id":11,"method":"session/request_permission","params":{}}
{"jsonrpc":"2.0","id":11,"result":{"stopReason":"cancelled"}}
{"jsonrpc":"2.0","id":11,"result":{"outcome":{"outcome":"cancelled"}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if f := frames[2]; f.client || f.answer != "session/prompt" {
		t.Errorf("frame 3: client %v, answers %s; want the agent's answer to the prompt", f.client, f.answer)
	}
	if f := frames[3]; !f.client || f.answer != "session/request_permission" {
		t.Errorf("frame 4: client %v, answers %s; want the client's answer to the permission request", f.client, f.answer)
	}
}

// A stop on a permission prompt names the prompt's tool call when the
// turn's own session announced it, so the people wait for its line;
// a subagent's tool call has no line of its own (its card shows it).
func TestScriptStopNamesTheTurnsOwnToolCall(t *testing.T) {
	stopOn := func(toolSession string) string {
		return strings.Join([]string{
			`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + toolSession + `","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Run","content":[{"type":"diff","path":"a","newText":"b"}]}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"` + toolSession + `","toolCall":{"toolCallId":"t1"},"options":[]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled"}}}`,
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}`,
		}, "\n") + "\n"
	}
	for _, tc := range []struct{ session, want string }{{"s", "t1"}, {"s.sub-1", ""}} {
		got, err := Script([]byte(stopOn(tc.session)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[1].Kind != "stop" || got[1].Tool != tc.want {
			t.Errorf("tool call on %q: Script = %+v, want a stop with Tool %q", tc.session, got, tc.want)
		}
	}
}
