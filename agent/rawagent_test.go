package agent_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// afterAnswer is how many updates the raw agent's "after-answer" sends
// after its answer to the prompt.
const afterAnswer = 200

// rawAgent is a minimal ACP agent written with raw JSON lines, so that
// tests control exactly what goes on the wire (malformed lines, huge lines,
// unknown tags, bursts). The test binary runs it when RAW_AGENT is set.
func rawAgent() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	send := func(s string) {
		out.WriteString(s)
		out.WriteByte('\n')
	}
	update := func(sid, u string) {
		send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":` + u + `}}`)
	}
	chunk := func(sid, text string) {
		b, _ := json.Marshal(text)
		update(sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+string(b)+`}}`)
	}
	authed := os.Getenv("RAW_AGENT_AUTH") == ""
	// The prompt waiting for the answers to its questions, and how many.
	var asking json.RawMessage
	awaited := 0
	// RAW_AGENT_STDIN names a file that gets every line as it came.
	var stdinCopy *os.File
	if p := os.Getenv("RAW_AGENT_STDIN"); p != "" {
		stdinCopy, _ = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	for in.Scan() {
		if stdinCopy != nil {
			stdinCopy.Write(append(in.Bytes(), '\n'))
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Prompt []struct {
					Text string `json:"text"`
				} `json:"prompt"`
				McpServers json.RawMessage `json:"mcpServers"`
				MethodID   string          `json:"methodId"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "raw agent: bad line:", err)
			continue
		}
		result := func(r string) { send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + r + `}`) }
		const sid = "raw-1"
		if req.Method == "" && awaited > 0 {
			// An answer to a question: said back as it came.
			chunk(sid, in.Text()+"\n")
			if awaited--; awaited == 0 {
				send(`{"jsonrpc":"2.0","id":` + string(asking) + `,"result":{"stopReason":"end_turn"}}`)
			}
			out.Flush()
			continue
		}
		switch req.Method {
		case "initialize":
			if !authed {
				result(`{"protocolVersion":1,"agentCapabilities":{},"authMethods":[{"id":"chatgpt","name":"Browser login"},{"type":"env_var","id":"openai-api-key","name":"OpenAI key","vars":[{"name":"RAW_OPENAI_KEY"}]}]}`)
				break
			}
			result(`{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"authMethods":[]}`)
		case "authenticate":
			authed = req.Params.MethodID == "openai-api-key"
			result(`{}`)
		case "session/new":
			if !authed {
				send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32000,"message":"Authentication required"}}`)
				break
			}
			if !strings.HasPrefix(string(req.Params.McpServers), "[") {
				msg, _ := json.Marshal("mcpServers must be an array, got " + string(req.Params.McpServers))
				send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32602,"message":` + string(msg) + `}}`)
				break
			}
			// An update for the session before the answer that names it.
			update(sid, `{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"early","description":"sent before session/new returned"}]}`)
			chunk(sid, "early ")
			// RAW_AGENT_NEW_RESULT adds members to the answer (modes,
			// models, config options).
			result(`{"sessionId":"` + sid + `"` + os.Getenv("RAW_AGENT_NEW_RESULT") + `}`)
		case "session/prompt":
			text := ""
			if len(req.Params.Prompt) > 0 {
				text = req.Params.Prompt[0].Text
			}
			switch {
			case text == "noise":
				send(`{this is not json`)
				chunk(sid, "a")
				// Over 10 MiB (the limit of the SDK's reader, which the
				// gateway once used).
				chunk(sid, strings.Repeat("x", 11<<20))
				// A notification of no known method, also over it.
				send(`{"jsonrpc":"2.0","method":"_x/huge","params":{"blob":"` + strings.Repeat("y", 11<<20) + `"}}`)
				update(sid, `{"sessionUpdate":"future_widget_update","title":"Widget","content":{"type":"text","text":"not a user message"}}`)
				chunk(sid, "b")
				result(`{"stopReason":"end_turn"}`)
			case text == "vendor-notify":
				// Notifications of an agent's own, as Qwen Code sends
				// after every turn (qwen/notify/session/prompt-suggestion).
				send(`{"jsonrpc":"2.0","method":"qwen/notify/session/prompt-suggestion","params":{"sessionId":"raw-1","suggestion":"next"}}`)
				send(`{"jsonrpc":"2.0","method":"_vendor/thing","params":{}}`)
				chunk(sid, "after")
				result(`{"stopReason":"end_turn"}`)
			case strings.HasPrefix(text, "burst "):
				var n int
				fmt.Sscan(strings.TrimPrefix(text, "burst "), &n)
				for i := range n {
					chunk(sid, fmt.Sprintf("%d ", i))
				}
				result(`{"stopReason":"end_turn"}`)
			case text == "stderr":
				// A 3 MiB line, then a short one, then an answer.
				os.Stderr.WriteString(strings.Repeat("e", 3<<20) + "\n" + "after the long line\n")
				chunk(sid, "answered")
				result(`{"stopReason":"end_turn"}`)
			case text == "spawn":
				// A child in the agent's process group that only SIGKILL
				// ends, as a tool an agent runs.
				exe, _ := os.Executable()
				c := exec.Command(exe, "-test.run=^$")
				c.Env = append(os.Environ(), "RAW_SLEEPER=1")
				if err := c.Start(); err != nil {
					chunk(sid, "spawn: "+err.Error())
				} else {
					chunk(sid, fmt.Sprintf("spawned %d", c.Process.Pid))
				}
				result(`{"stopReason":"end_turn"}`)
			case text == "elicit-bad":
				// Questions the gateway cannot show, and one for a
				// session it does not know.
				asking, awaited = req.ID, 4
				send(`{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"mode":"form","message":"no session","requestedSchema":{"type":"object","properties":{}}}}`)
				send(`{"jsonrpc":"2.0","id":"q2","method":"elicitation/create","params":{"sessionId":"raw-1","mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"x":{"type":"object"}}}}}`)
				send(`{"jsonrpc":"2.0","id":"q3","method":"elicitation/create","params":{"sessionId":"raw-1","mode":"carrier-pigeon","message":"m"}}`)
				send(`{"jsonrpc":"2.0","id":"q4","method":"elicitation/create","params":{"sessionId":"nope","mode":"url","message":"m","url":"https://example.com","elicitationId":"e"}}`)
			case text == "elicit-url-done":
				// A url question the agent itself reports done.
				asking, awaited = req.ID, 1
				send(`{"jsonrpc":"2.0","id":"u1","method":"elicitation/create","params":{"sessionId":"raw-1","mode":"url","message":"Sign in","url":"https://example.com/in","elicitationId":"el-1"}}`)
				send(`{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"el-1"}}`)
			case text == "subagents":
				// Children announced as ACP 1.33 has it, and as no
				// agent may: its own id, a child of a session not its
				// own, one child too many; then the children's frames.
				asking, awaited = req.ID, 4
				sub := func(parent, child, rest string) {
					update(parent, `{"sessionUpdate":"subagent_update","sessionId":"`+child+`"`+rest+`}`)
				}
				chunk("kid-0", "before its announce ")
				sub(sid, "kid-0", `,"title":"Zero","state":{"state":"running"},"capabilities":{"cancel":{}}`)
				sub(sid, "kid-1", `,"state":{"state":"running"}`)
				sub(sid, sid, `,"title":"me"`)
				sub("other", "kid-x", `,"title":"not yours"`)
				for i := 2; i <= 64; i++ {
					sub(sid, fmt.Sprintf("kid-%d", i), ``)
				}
				chunk("kid-0", "zero")
				chunk("kid-x", "x")
				chunk("kid-64", "sixty-four")
				send(`{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"kid-x","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}}`)
				send(`{"jsonrpc":"2.0","id":"p2","method":"session/request_permission","params":{"sessionId":"kid-1","toolCall":{"toolCallId":"t2"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}}`)
				ask := func(id, session string) {
					send(`{"jsonrpc":"2.0","id":"` + id + `","method":"elicitation/create","params":{"sessionId":"` + session + `","mode":"form","message":"Which?","requestedSchema":{"type":"object","properties":{"pick":{"type":"string","title":"Pick"}}}}}`)
				}
				ask("q1", "kid-x")
				ask("q2", "kid-1")
			case text == "inbound":
				// Requests the gateway cannot serve, one that does not
				// parse, and a permission question the agent takes back.
				asking, awaited = req.ID, 3
				send(`{"jsonrpc":"2.0","id":"r1","method":"fs/read_text_file","params":{"sessionId":"raw-1","path":"/etc/hostname"}}`)
				send(`{"jsonrpc":"2.0","id":"r2","method":"session/request_permission","params":{"sessionId":"raw-1","toolCall":{"toolCallId":"t1"}}}`)
				send(`{"jsonrpc":"2.0","id":"r3","method":"session/request_permission","params":{"sessionId":"raw-1","toolCall":{"toolCallId":"t2"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}}`)
				send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"r3"}}`)
			case text == "hang":
				// No answer: the caller gives up.
			case text == "steer-updates":
				update(sid, `{"sessionUpdate":"usage_update","used":31000,"size":200000,"cost":{"amount":0.21,"currency":"USD"}}`)
				update(sid, `{"sessionUpdate":"current_mode_update","currentModeId":"plan"}`)
				update(sid, `{"sessionUpdate":"config_option_update","configOptions":[{"type":"select","id":"model","name":"Model","category":"model","currentValue":"big","options":[{"value":"big","name":"Big"}]}]}`)
				result(`{"stopReason":"end_turn"}`)
			case text == "after-answer":
				// Updates after the answer, as Gemini sends its mode
				// change outside the turn.
				chunk(sid, "before")
				result(`{"stopReason":"end_turn"}`)
				for i := range afterAnswer {
					chunk(sid, fmt.Sprintf("after %d", i))
				}
			case text == "env":
				chunk(sid, strings.Join(os.Environ(), "\n"))
				result(`{"stopReason":"end_turn"}`)
			case text == "die":
				chunk(sid, "last words")
				out.Flush()
				os.Exit(3)
			case text == "deaf":
				// Ignores stdin EOF and SIGTERM.
				out.Flush()
				rawIgnoreTerm()
			default:
				chunk(sid, "echo: "+text)
				result(`{"stopReason":"end_turn"}`)
			}
		case "session/cancel":
		default:
			if req.ID != nil {
				send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"method not found"}}`)
			}
		}
		out.Flush()
	}
	if os.Getenv("RAW_AGENT_IGNORE_EOF") != "" {
		rawIgnoreTerm()
	}
}
