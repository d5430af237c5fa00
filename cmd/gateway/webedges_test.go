package main

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/acpgw/gateway/cluster/natsnode"
)

// Two edges serving the web chat and a worker, as processes: a thread
// created through one edge is listed by the other; the answer the worker
// streams, its typing and its status reactions show live on both edges'
// event streams with the same message ids (the worker's operations go to
// either edge); an edge restarted shows the thread with every message.
func TestClusterWebOnTwoEdges(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()
	edgeAt := func(r *role) *webEdge {
		line := r.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
		return &webEdge{base: line[strings.Index(line, "http"):]}
	}
	cfgB := clusterConfig(t, url, "edge-b")
	a := edgeAt(startRole(t, "edge-a", clusterConfig(t, url, "edge-a"), "edge", "--id", "a"))
	edgeB := startRole(t, "edge-b", cfgB, "edge", "--id", "b")
	b := edgeAt(edgeB)
	w := startRole(t, "worker", clusterConfig(t, url, "w1"), "worker", "--id", "w1")
	w.stdout.wait(t, "the worker running", func(l string) bool { return strings.Contains(l, "running") })

	bList := b.events(t, "api/events")
	created, err := webAPI{base: a.base}.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	id := created["id"].(string)
	bList.wait(t, "A's thread in B's list", func(l string) bool { return listed(l, id) })

	aEv, bEv := a.events(t, "api/threads/"+id+"/events"), b.events(t, "api/threads/"+id+"/events")
	const answer = "an answer streamed to both edges"
	if _, err := (webAPI{base: b.base}).post("api/threads/"+id+"/messages", map[string]string{"text": "echo " + answer}); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for name, ev := range map[string]*lineWatch{"A": aEv, "B": bEv} {
		l := ev.wait(t, "the answer on "+name, func(l string) bool { m, ok := eventMessage(l); return ok && m.Role == "assistant" && m.Text == answer })
		m, _ := eventMessage(l)
		ids[name] = m.ID
		l = ev.wait(t, "the prompt on "+name, func(l string) bool { m, ok := eventMessage(l); return ok && m.Role == "user" })
		p, _ := eventMessage(l)
		ids[name+" prompt"] = p.ID
		ev.wait(t, "typing on "+name, func(l string) bool { return l == `data: {"typing":true}` })
		ev.wait(t, "a status reaction on "+name, func(l string) bool {
			m, ok := eventMessage(l)
			return ok && m.ID == p.ID && len(m.Reactions) > 0
		})
	}
	if ids["A"] != ids["B"] || ids["A prompt"] != ids["B prompt"] {
		t.Fatalf("the messages' ids differ between the edges: %v", ids)
	}

	// B restarted (as a new process) shows the thread as A does, once
	// the turn ended.
	aEv.wait(t, "the turn's end on A", func(l string) bool { return l == `data: {"typing":false}` })
	var aMsgs struct{ Messages []sharedMessage }
	getJSON(t, a.base+"api/threads/"+id+"/messages", &aMsgs)
	edgeB.stop(syscall.SIGTERM)
	b = edgeAt(startRole(t, "edge-b2", cfgB, "edge", "--id", "b"))
	var bMsgs struct{ Messages []sharedMessage }
	getJSON(t, b.base+"api/threads/"+id+"/messages", &bMsgs)
	if len(aMsgs.Messages) < 2 || !slices.EqualFunc(aMsgs.Messages, bMsgs.Messages, func(x, y sharedMessage) bool {
		return x.ID == y.ID && x.Text == y.Text
	}) {
		t.Fatalf("B restarted shows\n%+v\nA shows\n%+v", bMsgs.Messages, aMsgs.Messages)
	}
	var list struct{ Threads []struct{ ID string } }
	getJSON(t, b.base+"api/threads", &list)
	if len(list.Threads) != 1 || list.Threads[0].ID != id {
		t.Fatalf("B restarted lists %+v", list.Threads)
	}
}
