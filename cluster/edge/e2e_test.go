package edge_test

import (
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// A prompt published at the edge is answered, through a worker running
// the real session and the demo agent, in the edge's thread with the
// agent's full text; tool lines are edited in place on the edge.
func TestPromptAcrossTheSeam(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true, Typing: true, Prompt: true})
	startEdge(t, url, "e1", rec.Adapter())
	w := startWorker(t, url)

	th := rec.Thread("t1")
	want := "the answer crossed two processes and came back whole"
	if err := rec.Deliver(testCtx(t), channels.Inbound{Thread: th, Author: ann, Text: "echo " + want, ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	w.waitEnd(t, th, rec)
	if got := text(rec, th); got != want {
		t.Fatalf("delivered %q, want %q", got, want)
	}

	if err := rec.Deliver(testCtx(t), channels.Inbound{Thread: th, Author: ann, Text: "tools", ID: "m2"}); err != nil {
		t.Fatal(err)
	}
	w.waitEnd(t, th, rec)
	tools := map[channels.MessageID]bool{}
	for _, m := range rec.Messages() {
		if m.Thread == th && m.Kind == channels.KindTool {
			tools[m.ID] = true
		}
	}
	if len(tools) != 3 {
		t.Fatalf("%d tool messages, want one for each of the 3 tool calls: %v", len(tools), rec.OpsIn(th))
	}
	edits := 0
	for _, op := range rec.OpsIn(th) {
		if op.Op == "edit" {
			if !tools[op.Msg] && op.Kind == channels.KindTool {
				t.Errorf("a tool line edited into a message it did not post: %+v", op)
			}
			if tools[op.Msg] {
				edits++
			}
		}
	}
	if edits == 0 {
		t.Fatalf("no tool line was edited in place: %v", rec.OpsIn(th))
	}
	if text(rec, th) == want {
		t.Fatal("the tools turn delivered no text")
	}
}
