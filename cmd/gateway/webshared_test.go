package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/webshare"
	"github.com/nats-io/nats.go/jetstream"
)

// sharedMessage is a message as the web chat's API and events show it.
type sharedMessage struct {
	ID, Role, Kind, Text string
	Edits                int
	Reactions            []string
	Files                []struct{ URL string }
}

// webEdge is a web chat adapter on the cluster's shared web state, served
// on a loopback port until the test ends.
type webEdge struct {
	a    *web.Adapter
	base string
}

func startWebEdge(t *testing.T, js jetstream.JetStream) *webEdge {
	t.Helper()
	l, err := webshare.Open(t.Context(), js, webshare.Options{Cluster: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := web.New(web.Options{Listener: ln, Shared: webShared{l}, FilesDir: t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctx, func(context.Context, channels.Inbound) {}); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	<-a.Ready()
	return &webEdge{a: a, base: "http://" + a.Addr() + "/"}
}

// events follows one of the edge's event streams (path: api/events or
// api/threads/ID/events) until the test ends.
func (e *webEdge) events(t *testing.T, path string) *lineWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.base+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := newLineWatch()
	done := make(chan struct{})
	go func() { defer close(done); w.read(resp.Body) }()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return w
}

// eventMessage returns the message of an event's data line, if it is one.
func eventMessage(l string) (sharedMessage, bool) {
	var m sharedMessage
	v, ok := strings.CutPrefix(l, "data: ")
	return m, ok && json.Unmarshal([]byte(v), &m) == nil && m.ID != "" && m.Role != ""
}

// listed reports whether the event data line l lists thread id: the
// whole list (threads, on connect) holding it, or a change of its entry
// (thread: the thread object).
func listed(l, id string) bool {
	v, ok := strings.CutPrefix(l, "data: ")
	if !ok {
		return false
	}
	var list struct {
		Threads []struct{ ID string }
	}
	if json.Unmarshal([]byte(v), &list) == nil && list.Threads != nil {
		return slices.ContainsFunc(list.Threads, func(th struct{ ID string }) bool { return th.ID == id })
	}
	var entry map[string]json.RawMessage
	if json.Unmarshal([]byte(v), &entry) != nil || string(entry["id"]) != strconv.Quote(id) {
		return false
	}
	_, isThread := entry["title"]
	return isThread
}

// unlisted reports whether l says thread id is not listed: the whole list
// without it, or its removal (threadRemoved: {"id"} alone).
func unlisted(l, id string) bool {
	v, ok := strings.CutPrefix(l, "data: ")
	if !ok {
		return false
	}
	var list struct {
		Threads []struct{ ID string }
	}
	if json.Unmarshal([]byte(v), &list) == nil && list.Threads != nil {
		return !slices.ContainsFunc(list.Threads, func(th struct{ ID string }) bool { return th.ID == id })
	}
	var entry map[string]json.RawMessage
	return json.Unmarshal([]byte(v), &entry) == nil && len(entry) == 1 && string(entry["id"]) == strconv.Quote(id)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// Two web chats on one JetStream node's shared state, as two edges: what
// one does (a person through its API, a worker through its adapter) the
// other shows live, with the same message ids, and a third started later
// shows it all.
func TestWebSharedBetweenEdges(t *testing.T) {
	js := clustertest.JetStream(t, clustertest.StartNode(t).ClientURL())
	a, b := startWebEdge(t, js), startWebEdge(t, js)
	ctx := t.Context()

	// A thread created through A's API is listed by B, live and by GET.
	bList := b.events(t, "api/events")
	created, err := webAPI{base: a.base}.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	id := created["id"].(string)
	bList.wait(t, "the new thread in B's list", func(l string) bool { return listed(l, id) })
	var list struct{ Threads []struct{ ID string } }
	getJSON(t, b.base+"api/threads", &list)
	if len(list.Threads) != 1 || list.Threads[0].ID != id {
		t.Fatalf("B lists %+v, want thread %s", list.Threads, id)
	}

	// A person writes on B; the worker's answer is posted through A and
	// edited through B (its operations go to any edge): both streams
	// show each step, with A's message id.
	ref := channels.ThreadRef{Platform: web.Platform, Channel: web.Channel, Thread: id}
	aEv, bEv := a.events(t, "api/threads/"+id+"/events"), b.events(t, "api/threads/"+id+"/events")
	if _, err := (webAPI{base: b.base}).post("api/threads/"+id+"/messages", map[string]string{"text": "hello from B"}); err != nil {
		t.Fatal(err)
	}
	var prompt sharedMessage
	for name, w := range map[string]*lineWatch{"A": aEv, "B": bEv} {
		l := w.wait(t, "the person's message on "+name, func(l string) bool { m, ok := eventMessage(l); return ok && m.Text == "hello from B" })
		m, _ := eventMessage(l)
		if prompt.ID != "" && m.ID != prompt.ID {
			t.Fatalf("the person's message is %s on A, %s on B", prompt.ID, m.ID)
		}
		prompt = m
	}
	h, err := a.a.Post(ctx, ref, channels.Message{Text: "an answer, beginning"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.a.Typing(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if err := b.a.Edit(ctx, h, channels.Message{Text: "an answer, whole"}); err != nil {
		t.Fatal(err)
	}
	if err := a.a.React(ctx, channels.Handle{Thread: ref, ID: channels.MessageID(prompt.ID)}, "👀"); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]*lineWatch{"A": aEv, "B": bEv} {
		w.wait(t, "the answer on "+name, func(l string) bool {
			m, ok := eventMessage(l)
			return ok && m.ID == string(h.ID) && m.Text == "an answer, beginning"
		})
		w.wait(t, "typing on "+name, func(l string) bool { return l == `data: {"typing":true}` })
		w.wait(t, "the edit on "+name, func(l string) bool {
			m, ok := eventMessage(l)
			return ok && m.ID == string(h.ID) && m.Text == "an answer, whole" && m.Edits == 1
		})
		w.wait(t, "the reaction on "+name, func(l string) bool {
			m, ok := eventMessage(l)
			return ok && m.ID == prompt.ID && slices.Equal(m.Reactions, []string{"👀"})
		})
	}
	a.a.ShowSession(ref, channels.SessionInfo{Agent: "demo", Model: "m1"})
	bEv.wait(t, "the session on B", func(l string) bool { return strings.HasPrefix(l, "data: ") && strings.Contains(l, `"model":"m1"`) })
	if err := b.a.StopTyping(ctx, ref); err != nil {
		t.Fatal(err)
	}
	aEv.wait(t, "typing off on A", func(l string) bool { return l == `data: {"typing":false}` })
	if _, err := (webAPI{base: b.base}).patch("api/threads/"+id, map[string]string{"title": "Renamed on B"}); err != nil {
		t.Fatal(err)
	}

	// A file the agent sent through B is served by A.
	fh, err := b.a.Upload(ctx, ref, channels.Upload{Name: "notes.txt", Data: []byte("kept on the cluster"), Caption: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	l := aEv.wait(t, "the file's message on A", func(l string) bool { m, ok := eventMessage(l); return ok && m.ID == string(fh.ID) })
	fm, _ := eventMessage(l)
	if len(fm.Files) != 1 {
		t.Fatalf("the file's message has files %+v", fm.Files)
	}
	fileURL := a.base + strings.TrimPrefix(fm.Files[0].URL, "/")
	if got := getBody(t, fileURL, http.StatusOK); got != "kept on the cluster" {
		t.Fatalf("A serves the file B kept as %q", got)
	}

	// An edge started later (or restarted) shows the same thread.
	var aMsgs struct{ Messages []sharedMessage }
	getJSON(t, a.base+"api/threads/"+id+"/messages", &aMsgs)
	c := startWebEdge(t, js)
	var cMsgs struct {
		Messages []sharedMessage
		Session  struct{ Model string }
	}
	getJSON(t, c.base+"api/threads/"+id+"/messages", &cMsgs)
	if len(aMsgs.Messages) != 3 || !slices.EqualFunc(aMsgs.Messages, cMsgs.Messages, func(x, y sharedMessage) bool {
		return x.ID == y.ID && x.Text == y.Text && x.Edits == y.Edits && slices.Equal(x.Reactions, y.Reactions)
	}) {
		t.Fatalf("a new edge shows\n%+v\nA shows\n%+v", cMsgs.Messages, aMsgs.Messages)
	}
	if cMsgs.Session.Model != "m1" {
		t.Errorf("a new edge shows the session %+v, want model m1", cMsgs.Session)
	}
	var cList struct{ Threads []struct{ ID, Title string } }
	getJSON(t, c.base+"api/threads", &cList)
	if len(cList.Threads) != 1 || cList.Threads[0].Title != "Renamed on B" {
		t.Fatalf("a new edge lists %+v, want the thread renamed on B", cList.Threads)
	}

	// Deleted on C: gone from A's list too, and from a later edge's.
	aList := a.events(t, "api/events")
	req, _ := http.NewRequest("DELETE", c.base+"api/threads/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	aList.wait(t, "the thread gone from A's list", func(l string) bool { return unlisted(l, id) })
	if _, err := a.a.Post(ctx, ref, channels.Message{Text: "late"}); err == nil {
		t.Error("A posted in a thread deleted on C")
	}
	getBody(t, fileURL, http.StatusNotFound)
	d := startWebEdge(t, js)
	var dList struct{ Threads []struct{ ID string } }
	getJSON(t, d.base+"api/threads", &dList)
	if len(dList.Threads) != 0 {
		t.Fatalf("an edge started after the deletion lists %+v", dList.Threads)
	}
}

func (a webAPI) patch(path string, body any) (map[string]any, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("PATCH", a.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("PATCH %s: %s %v", path, resp.Status, out)
	}
	return out, nil
}

// getBody GETs url, wants status and returns the body.
func getBody(t *testing.T, url string, status int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %s, want %d", url, resp.Status, status)
	}
	return string(b)
}
