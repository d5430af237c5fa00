package session_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/replay"
	"github.com/acpgw/gateway/session"
	"github.com/google/go-cmp/cmp"
)

// TestReplayDeliversWhatProductionDid runs a turn with the demo agent (a
// permission prompt answered, a second one left open, then a stop), and
// replays the event log the gateway wrote of it: `gateway replay` drives
// the same thread machine and view, so the thread ends up with the same
// messages, in the same order, with the same final text (prompts and
// their outcomes, tool lines, the stop notice), and the same turn end.
// The operations that led there (how many edits, a notice replaced
// before it was posted) depend on the lane's clock, wall time here and
// virtual time in a replay, and are not compared.
func TestReplayDeliversWhatProductionDid(t *testing.T) {
	policy := session.DefaultPolicy()
	e := newEnv(t, envOptions{rec: channeltest.Options{Prompt: true, Edit: true}, policy: &policy})
	th := e.rec.Thread("r")
	e.say(th, ann, "permission 2")
	// Each answer comes once the prompt and its tool line are shown, as
	// a person's would.
	first := e.waitOp(th, "the first prompt", isPrompt)
	e.waitOp(th, "the first tool line", hasText("Edit main.go · pending"))
	if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: first.Msg}, option(t, first, "allow_once")); err != nil {
		t.Fatalf("click: %v", err)
	}
	e.waitOp(th, "the second prompt", func(op channeltest.Op) bool { return isPrompt(op) && op.Msg != first.Msg })
	e.waitOp(th, "the second tool line", func(op channeltest.Op) bool { return op.Key == "call_1_2" })
	e.say(th, ann, "stop")
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled", end.StopReason)
	}
	e.close() // the event log is complete once the agent is gone
	production := shown(e.rec.OpsIn(th))

	logs, err := filepath.Glob(filepath.Join(e.dir, "events", "*.ndjson"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("event logs %v, %v; want one", logs, err)
	}
	in, err := eventlog.OpenReader(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	_, err = replay.Run(t.Context(), in, &out, replay.Options{
		Stream: policy.Stream, Typing: policy.Typing,
		Preset:        replay.Preset{Edit: true, Buttons: true},
		FrameInterval: replay.DefaultFrameInterval,
		Person:        ann,
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	var ops []channeltest.Op
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var op channeltest.Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			t.Fatalf("replay output %q: %v", sc.Text(), err)
		}
		ops = append(ops, op)
	}
	replayed := shown(ops)

	if diff := cmp.Diff(production, replayed); diff != "" {
		t.Errorf("replay differs from production (-production +replay):\n%s", diff)
	}
	var prompts, outcomes, stops int
	for _, m := range production {
		if m.Kind == channels.KindPermission && len(m.Options) == 3 {
			prompts++
		}
		if strings.Contains(m.Text, "✅ Allow — chosen by Ann") || strings.Contains(m.Text, "Cancelled (stopped by Ann)") {
			outcomes++
		}
		if m.Text == "⚙️ Stopped by Ann." {
			stops++
		}
	}
	if prompts != 2 || outcomes != 2 || stops != 1 || production[len(production)-1].Op != "turn_end" {
		t.Errorf("production shows %d prompts, %d outcomes, %d stop notices, want 2, 2, 1, then the turn's end:\n%v", prompts, outcomes, stops, production)
	}
}

// shown is what ops leave in the thread: each message's kind, key,
// buttons and final text, in post order, and the turn ends among them.
// The prompts' ids (random in production, from the request's id in a
// replay), which name the buttons and the prompts' keys, are dropped.
// And a permission prompt comes before the tool line posted next to it:
// the agent sends the request first, but in production the request
// reaches the thread through the SDK's goroutine and the tool_call
// through the tap, so which is posted first is a race; a replay follows
// the wire.
func shown(ops []channeltest.Op) []channeltest.Op {
	var out []channeltest.Op
	at := map[channels.MessageID]int{}
	for _, op := range ops {
		switch op.Op {
		case "send", "prompt":
			at[op.Msg] = len(out)
			out = append(out, channeltest.Op{Op: "message", Kind: op.Kind, Key: op.Key, Text: op.Text, Options: op.Options})
		case "edit":
			if i, ok := at[op.Msg]; ok {
				out[i].Text, out[i].Key = op.Text, op.Key
			}
		case "turn_end":
			out = append(out, channeltest.Op{Op: op.Op, StopReason: op.StopReason})
		}
	}
	for i := range out {
		if out[i].Options != nil {
			opts := make([]string, len(out[i].Options))
			for j, o := range out[i].Options {
				_, opts[j], _ = strings.Cut(o, "/")
			}
			out[i].Options = opts
		}
		if strings.HasPrefix(out[i].Key, "prompt:") {
			out[i].Key = "prompt:"
		}
	}
	for i := 1; i < len(out); i++ {
		if out[i].Kind == channels.KindPermission && out[i-1].Kind == channels.KindTool {
			out[i-1], out[i] = out[i], out[i-1]
		}
	}
	return out
}
