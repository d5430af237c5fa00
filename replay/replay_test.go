package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/internal/golden"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testPresets are gateway replay's --limits profiles, as cmd/gateway
// builds them from the adapters' limits.
var testPresets = map[string]Preset{
	discord.Platform: PresetFor(discord.Limits()),
	slack.Platform:   PresetFor(slack.Limits()),
	web.Platform:     PresetFor(web.Limits()),
	"none":           {},
}

// expandStream turns the compact stream notation of rule files into raw
// frames: "prompt" opens a turn, "end REASON" / "error MSG" closes it, a
// line starting with {"sessionUpdate" is wrapped in a session/update
// notification, any other line is a raw frame.
func expandStream(t *testing.T, src string) string {
	t.Helper()
	var b strings.Builder
	id := 10
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "prompt":
			id++
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`+"\n", id)
		case strings.HasPrefix(line, "end "):
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":%q}}`+"\n", id, strings.TrimPrefix(line, "end "))
		case strings.HasPrefix(line, "error "):
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":%q}}`+"\n", id, strings.TrimPrefix(line, "error "))
		case strings.HasPrefix(line, `{"sessionUpdate"`):
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":%s}}`+"\n", line)
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// optionsFromArgs reads replay flags (one per line or space separated):
// --limits P, --no-edit, --summary, --set k=v, --frame-interval D.
func optionsFromArgs(t *testing.T, args string) Options {
	t.Helper()
	o := Options{Preset: testPresets["web"], FrameInterval: DefaultFrameInterval}
	var sets []string
	fields := strings.Fields(args)
	noEdit := false
	for i := 0; i < len(fields); i++ {
		switch f := fields[i]; f {
		case "--limits":
			i++
			p, ok := testPresets[fields[i]]
			if !ok {
				t.Fatalf("unknown preset %q", fields[i])
			}
			o.Preset = p
		case "--no-edit":
			noEdit = true
		case "--summary":
			o.Summary = true
		case "--set":
			i++
			sets = append(sets, fields[i])
		case "--frame-interval":
			i++
			d, err := time.ParseDuration(fields[i])
			if err != nil {
				t.Fatal(err)
			}
			o.FrameInterval = d
		default:
			t.Fatalf("unknown arg %q", f)
		}
	}
	if noEdit {
		o.Preset.Edit = false
	}
	cfg, err := config.Load("", sets)
	if err != nil {
		t.Fatal(err)
	}
	o.Stream, o.Typing = cfg.ACP.Stream, cfg.Typing
	return o
}

func replayString(t *testing.T, stream string, o Options) (string, string) {
	t.Helper()
	var out, warn bytes.Buffer
	o.Warn = &warn
	if _, err := Run(t.Context(), strings.NewReader(stream), &out, o); err != nil {
		t.Fatal(err)
	}
	return out.String(), warn.String()
}

// TestRules runs testdata/rules/*.txtar: each has an `args` section, a
// compact `stream` and the expected replay output `want` (and `warn`, the
// expected standard error, when not empty).
func TestRules(t *testing.T) {
	files, _ := filepath.Glob("testdata/rules/*.txtar")
	if len(files) == 0 {
		t.Fatal("no rule files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a := golden.Parse(string(data))
			o := optionsFromArgs(t, a.Section("args"))
			got, warn := replayString(t, expandStream(t, a.Section("stream")), o)
			if *update {
				a.Set("want", got)
				if warn != "" || a.Has("warn") {
					a.Set("warn", warn)
				}
				if err := os.WriteFile(file, []byte(a.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(a.Section("want"), got); diff != "" {
				t.Errorf("replay output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(a.Section("warn"), warn); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// variants are the configurations every recorded stream is replayed with.
var variants = []struct{ name, args string }{
	{"web", "--limits web"},
	{"discord", "--limits discord"},
	{"none", "--limits none"},
	{"discord-final", "--limits discord --set acp.stream.deliveryMode=final_only"},
	{"slack-verbose", "--limits slack --set acp.stream.metaMode=verbose --set acp.stream.showUsage=true --set acp.stream.tagVisibility.plan=true --set acp.stream.tagVisibility.agent_thought_chunk=true --set acp.stream.tagVisibility.current_mode_update=true"},
}

func streams(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/streams/*.ndjson")
	if len(files) < 8 {
		t.Fatalf("found %d recorded streams, want 8", len(files))
	}
	return files
}

// TestStreamsGolden replays every recorded stream in every variant and
// compares with testdata/golden (go test ./replay -update rewrites).
func TestStreamsGolden(t *testing.T) {
	for _, file := range streams(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		for _, v := range variants {
			t.Run(base+"/"+v.name, func(t *testing.T) {
				got, warn := replayString(t, string(data), optionsFromArgs(t, v.args+" --summary"))
				if warn != "" {
					t.Errorf("warnings on a recorded stream:\n%s", warn)
				}
				golden := filepath.Join("testdata/golden", base+"."+v.name+".jsonl")
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./replay -update)", err)
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("replay output (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// expectation is the ground truth of a recorded stream.
type expectation struct {
	Turns []struct {
		StopReason *string `json:"stopReason"`
		Text       string  `json:"text"`
		Tools      []struct {
			ToolCallID  string `json:"toolCallId"`
			FinalStatus string `json:"finalStatus"`
			Kind        string `json:"kind"`
			FinalTitle  string `json:"finalTitle"`
		} `json:"tools"`
		// Subagents are the turn's children (ACP 1.33): each one card;
		// FinalState is the last state.state the agent reported.
		Subagents []struct {
			SessionID  string `json:"sessionId"`
			FinalState string `json:"finalState"`
			Title      string `json:"title"`
		} `json:"subagents"`
	} `json:"turns"`
}

// turnView is what one turn left in the thread: the final text of each
// message, by kind, in post order.
type turnView struct {
	text       string
	tools      map[string]string // key → final line
	toolPosts  map[string]int    // key → messages posted for it
	stopReason string
}

func views(ops []channeltest.Op) []turnView {
	var out []turnView
	type msg struct {
		kind, key, text string
	}
	var msgs []*msg
	byID := map[string]*msg{}
	for _, op := range ops {
		switch op.Op {
		case "send", "prompt":
			m := &msg{kind: string(op.Kind), key: op.Key, text: op.Text}
			msgs = append(msgs, m)
			byID[string(op.Msg)] = m
		case "edit":
			byID[string(op.Msg)].text = op.Text
		case "turn_end":
			v := turnView{tools: map[string]string{}, toolPosts: map[string]int{}, stopReason: op.StopReason}
			var b strings.Builder
			for _, m := range msgs {
				switch m.kind {
				case "text":
					b.WriteString(m.text)
				case "tool":
					v.tools[m.key] = m.text
					v.toolPosts[m.key]++
				}
			}
			v.text = b.String()
			out = append(out, v)
			msgs = nil
		}
	}
	return out
}

func decodeOps(t *testing.T, s string) []channeltest.Op {
	t.Helper()
	var ops []channeltest.Op
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var op channeltest.Op
		if err := json.Unmarshal([]byte(line), &op); err != nil {
			t.Fatalf("bad output line %q: %v", line, err)
		}
		ops = append(ops, op)
	}
	return ops
}

// TestStreamsAgainstExpectations checks each recorded stream's replay
// against its ground truth: per turn, the delivered text equals the agent's
// text exactly (channels without a length limit, live and final_only, with
// and without edit), every tool has one message whose final line shows its
// final status, and turns end with the agent's stopReason.
func TestStreamsAgainstExpectations(t *testing.T) {
	statusWord := map[string]string{"completed": "done", "failed": "failed"}
	for _, file := range streams(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var exp expectation
		raw, err := os.ReadFile(strings.TrimSuffix(file, ".ndjson") + ".expect.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		asked := askedTitles(t, data)
		for _, args := range []string{"--limits web", "--limits none", "--limits web --set acp.stream.deliveryMode=final_only", "--limits none --set acp.stream.deliveryMode=final_only"} {
			t.Run(base+"/"+args, func(t *testing.T) {
				got, _ := replayString(t, string(data), optionsFromArgs(t, args))
				vs := views(decodeOps(t, got))
				if len(vs) != len(exp.Turns) {
					t.Fatalf("%d turns delivered, want %d", len(vs), len(exp.Turns))
				}
				for i, want := range exp.Turns {
					v := vs[i]
					if v.text != want.Text {
						t.Errorf("turn %d text:\n got %q\nwant %q", i+1, v.text, want.Text)
					}
					if want.StopReason != nil && v.stopReason != *want.StopReason {
						t.Errorf("turn %d stopReason = %q, want %q", i+1, v.stopReason, *want.StopReason)
					}
					for _, sa := range want.Subagents {
						key := "subagent:" + strconv.Itoa(i+1) + ":" + sa.SessionID
						card, ok := v.tools[key]
						if !ok {
							t.Errorf("turn %d: no card for subagent %s", i+1, sa.SessionID)
							continue
						}
						words := map[string]string{"running": "running", "requires_action": "needs you", "idle": "idle"}[sa.FinalState]
						if words != "idle" && v.stopReason == "cancelled" && !strings.Contains(args, "none") {
							words = "unknown" // at work when the turn was stopped: edited
						}
						if first, _, _ := strings.Cut(card, "\n"); !strings.HasSuffix(first, "`"+sa.Title+"` · "+words) {
							t.Errorf("turn %d subagent %s: card %q, want %q reading %q", i+1, sa.SessionID, card, sa.Title, words)
						}
						if n := v.toolPosts[key]; !strings.Contains(args, "none") && n != 1 {
							t.Errorf("turn %d subagent %s: %d cards", i+1, sa.SessionID, n)
						}
					}
					for _, tool := range want.Tools {
						line, ok := v.tools[tool.ToolCallID]
						if !ok {
							t.Errorf("turn %d: no message for tool %s", i+1, tool.ToolCallID)
							continue
						}
						if w := statusWord[tool.FinalStatus]; !strings.HasSuffix(line, "· "+w) {
							t.Errorf("turn %d tool %s: final line %q, want status %q", i+1, tool.ToolCallID, line, w)
						}
						title := tool.FinalTitle
						if a, ok := asked[tool.ToolCallID]; ok {
							title = a
						}
						if !strings.Contains(line, firstLine(title)) {
							t.Errorf("turn %d tool %s: final line %q lacks the title %q", i+1, tool.ToolCallID, line, title)
						}
						edit := !strings.Contains(args, "none")
						if n := v.toolPosts[tool.ToolCallID]; edit && n != 1 || n > 2 {
							t.Errorf("turn %d tool %s: %d messages (edit %v)", i+1, tool.ToolCallID, n, edit)
						}
					}
				}
			})
		}
	}
}

// askedTitles are the titles of tools whose last title came in a
// session/request_permission's toolCall (an ACP ToolCallUpdate) rather
// than in a session/update: the gateway shows it on the tool's line
// (thread.View.ShowPrompt), while expect.json's finalTitle counts only
// session/update frames (qwen-code names a write "WriteFile" in its
// tool_call and "Writing to hello.txt" in the permission request, and no
// later update names it again).
func askedTitles(t *testing.T, data []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var f struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					ToolCallID string  `json:"toolCallId"`
					Title      *string `json:"title"`
				} `json:"update"`
				ToolCall struct {
					ToolCallID string  `json:"toolCallId"`
					Title      *string `json:"title"`
				} `json:"toolCall"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &f) != nil {
			continue
		}
		switch u, tc := f.Params.Update, f.Params.ToolCall; {
		case f.Method == "session/update" && u.Title != nil && *u.Title != "":
			delete(out, u.ToolCallID)
		case f.Method == "session/request_permission" && tc.Title != nil && *tc.Title != "":
			out[tc.ToolCallID] = *tc.Title
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.Trim(s, "`")
	if len(s) > 30 {
		s = s[:30]
	}
	return s
}

func defaultStream() projector.Settings { return projector.DefaultSettings() }

// An input in which no line is a JSON-RPC message is not an event log: Run
// says so with the count instead of printing an empty replay. One good
// line among malformed ones is a log with damage, replayed as usual.
func TestAllLinesMalformed(t *testing.T) {
	var out, warn bytes.Buffer
	_, err := Run(t.Context(), strings.NewReader("garbage\n\nnot json either\n{\"half\":\n"), &out, Options{Preset: testPresets["none"], Warn: &warn})
	var am *AllMalformedError
	if !errors.As(err, &am) || am.Lines != 3 {
		t.Fatalf("Run = %v, want *AllMalformedError for 3 lines", err)
	}
	if want := "all 3 lines are malformed: the input is not an ACP event log (one JSON-RPC message per line)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("output = %q, want nothing", out.String())
	}
	if got := strings.Count(warn.String(), ": skipped:"); got != 3 {
		t.Errorf("%d lines reported as skipped, want 3:\n%s", got, warn.String())
	}
	good := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`
	if _, err := Run(t.Context(), strings.NewReader("garbage\n"+good+"\n"), io.Discard, Options{Preset: testPresets["none"]}); err != nil {
		t.Errorf("one good line among malformed ones: Run = %v, want nil", err)
	}
}
