package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// details is the recording adapter with the details a line shows on
// click (channels.ToolDetailer), as the web chat keeps them.
type details struct {
	channels.Adapter
	mu   sync.Mutex
	last map[string]channels.ToolDetail
}

func (d *details) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	return d.Adapter.(channels.Editor).Edit(ctx, h, m)
}

func (d *details) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	return d.Adapter.(channels.Prompter).Prompt(ctx, t, c)
}

func (d *details) ToolDetail(_ channels.ThreadRef, key string, td channels.ToolDetail) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last[key] = td
}

func (d *details) of(key string) (channels.ToolDetail, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	td, ok := d.last[key]
	return td, ok
}

// frames are the event log's frames of the thread's one session.
func frames(t *testing.T, dir string) []map[string]any {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "events", "*.ndjson"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("event logs %v, %v; want one", logs, err)
	}
	var out []map[string]any
	raw, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var f map[string]any
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("event log line %q: %v", line, err)
		}
		out = append(out, f)
	}
	return out
}

func params(f map[string]any) map[string]any { p, _ := f["params"].(map[string]any); return p }

// TestSubagents: the demo agent's subagents scenario (ACP 1.33 child
// sessions). Each child is one card under the turn, edited in place with
// its state and its latest tool line; the children's text is not the
// answer's; the child's permission prompt names it and its answer goes
// back on the child's request; the card's details hold its tool lines
// and text.
func TestSubagents(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true, Prompt: true})
	ad := &details{Adapter: rec.Adapter(), last: map[string]channels.ToolDetail{}}
	e := newEnv(t, envOptions{recorder: rec, adapter: ad})
	th := rec.Thread("sub")
	e.say(th, ann, "subagents")
	op := e.waitOp(th, "the subagent's permission prompt", isPrompt)
	for _, want := range []string{"Subagent `Run the tests` asks", "Permission needed", "go test"} {
		if !strings.Contains(op.Text, want) {
			t.Errorf("prompt text lacks %q:\n%s", want, op.Text)
		}
	}
	// While it waits for people, its card says so (the lane delivers the
	// latest state of a card; the child stays there until answered).
	e.waitOp(th, "the tests card needing people", func(o channeltest.Op) bool {
		return o.Kind == channels.KindTool && strings.HasPrefix(o.Text, "🤖 Subagent `Run the tests` · needs you")
	})
	if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, option(t, op, "allow_once")); err != nil {
		t.Fatalf("click: %v", err)
	}
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("stop reason %q", end.StopReason)
	}
	if got, want := e.text(th), "I split the work between two subagents. The review found no risk, and the tests subagent says they all pass."; got != want {
		t.Errorf("answer %q, want only the parent's %q", got, want)
	}

	parent := bindingSession(t, e, th)
	review, tests := "subagent:1:"+parent+".sub-1-1", "subagent:1:"+parent+".sub-1-2"
	cards := map[string]channeltest.Message{}
	for _, m := range e.rec.Messages() {
		if m.Thread != th {
			continue
		}
		if strings.Contains(m.Text, "Read main.go") && m.Key != review {
			t.Errorf("the child's tool line became a line of its own: %+v", m)
		}
		if m.Kind == channels.KindTool && strings.HasPrefix(m.Key, "subagent:") {
			if _, dup := cards[m.Key]; dup {
				t.Errorf("two cards for %s", m.Key)
			}
			cards[m.Key] = m
		}
	}
	if len(cards) != 2 {
		t.Fatalf("cards %v, want one for each child", cards)
	}
	for key, want := range map[string]string{
		review: "🤖 Subagent `Review the diff` · idle\n1 tool · latest: 📖 Read main.go · done",
		tests:  "🤖 Subagent `Run the tests` · idle\n1 tool · latest: 🛠️ Run go test · done",
	} {
		if got := cards[key].Text; got != want {
			t.Errorf("card %s reads\n%s\nwant\n%s", key, got, want)
		}
	}
	// Edited in place: the tests card went running → needs you → running
	// → idle (the lane may skip a state that a newer one replaced before
	// it was delivered, not the one it waited in).
	var states []string
	for _, o := range e.rec.OpsIn(th) {
		if o.Msg == cards[tests].ID && (o.Op == "send" || o.Op == "edit") {
			first, _, _ := strings.Cut(o.Text, "\n")
			if i := strings.LastIndex(first, " · "); i >= 0 && (len(states) == 0 || states[len(states)-1] != first[i+len(" · "):]) {
				states = append(states, first[i+len(" · "):])
			}
		}
	}
	if !subsequence(states, []string{"running", "needs you", "running", "idle"}) || !slices.Contains(states, "needs you") || states[len(states)-1] != "idle" {
		t.Errorf("the tests card's states: %s", strings.Join(states, " → "))
	}
	if d, ok := ad.of(review); !ok || d.Input != "Read the change to main.go and list its risks." ||
		d.Output != "📖 Read main.go · done\n\nThe diff only renames a variable: no risk." {
		t.Errorf("the review card's details: %+v, %v", d, ok)
	}
	if d, ok := ad.of(tests); !ok || d.Input != "Run go test and report failures" || !strings.Contains(d.Output, "All tests pass.") {
		t.Errorf("the tests card's details: %+v, %v", d, ok)
	}

	e.close() // the event log is complete once the agent is gone
	asked := ""
	for _, f := range frames(t, e.dir) {
		switch {
		case f["method"] == "session/request_permission":
			if params(f)["sessionId"] != strings.TrimPrefix(tests, "subagent:1:") {
				t.Errorf("the permission was asked on %v", params(f)["sessionId"])
			}
			raw, _ := json.Marshal(f["id"])
			asked = string(raw)
		case asked != "" && f["method"] == nil && f["result"] != nil:
			if raw, _ := json.Marshal(f["id"]); string(raw) == asked {
				res, _ := json.Marshal(f["result"])
				if !strings.Contains(string(res), `"optionId":"allow_once"`) {
					t.Errorf("the child's request was answered %s", res)
				}
				asked = "answered"
			}
		}
	}
	if asked != "answered" {
		t.Error("no answer to the child's permission request in the event log")
	}
}

// TestSubagentsStop: a stop while a child waits for its permission
// cancels the prompt, the turn and each child that can be cancelled and
// is at work.
func TestSubagentsStop(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
	th := e.rec.Thread("substop")
	e.say(th, ann, "delegate")
	e.waitOp(th, "the subagent's permission prompt", isPrompt)
	e.say(th, ann, "stop")
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled", end.StopReason)
	}
	parent := bindingSession(t, e, th)
	e.close()
	var cancelled []string
	for _, f := range frames(t, e.dir) {
		if f["method"] == "session/cancel" {
			cancelled = append(cancelled, params(f)["sessionId"].(string))
		}
	}
	want := parent + " " + parent + ".sub-1-1 " + parent + ".sub-1-2"
	if got := strings.Join(cancelled, " "); got != want {
		t.Errorf("session/cancel sent for %s, want %s", got, want)
	}
}

func bindingSession(t *testing.T, e *env, th channels.ThreadRef) string {
	t.Helper()
	b, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok {
		t.Fatalf("binding: %v, %v", ok, err)
	}
	return b.SessionID
}

// subsequence reports whether got is want with some elements left out.
func subsequence(got, want []string) bool {
	i := 0
	for _, g := range got {
		for i < len(want) && want[i] != g {
			i++
		}
		if i == len(want) {
			return false
		}
		i++
	}
	return true
}
