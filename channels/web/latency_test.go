package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// streamers runs n threads of a as the gateway streams into them: typing,
// a long reply drafted by edits that grow it from 20 KB to 40 KB, a tool line
// edited in place, typing off; over and over until ctx ends, at the pace
// dispatch keeps (an edit per thread every Limits().MinEditInterval, 400
// a second for 100 threads). Each thread
// has a live event stream that a reader drains, as an open page would.
// Each thread starts with history messages. It returns the thread ids
// and waits for its goroutines at cleanup.
func streamers(tb testing.TB, ctx context.Context, a *Adapter, base string, n, history int) []string {
	tb.Helper()
	var wg sync.WaitGroup
	tb.Cleanup(wg.Wait)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = a.st.mustCreate(fmt.Sprintf("streaming %d", i)).ID
		for j := range history {
			a.st.addMessage(ids[i], message{Role: roleUser, Author: "ann", Kind: "text", Text: fmt.Sprintf("earlier message %d: %s", j, strings.Repeat("words ", 40))})
		}
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/threads/"+ids[i]+"/events", nil)
		if err != nil {
			tb.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		wg.Go(func() {
			defer res.Body.Close()
			io.Copy(io.Discard, res.Body)
		})
		th := ref(ids[i])
		wg.Go(func() {
			chunk := strings.Repeat("word ", 20)
			tick := time.NewTicker(a.Limits().MinEditInterval)
			defer tick.Stop()
			for ctx.Err() == nil {
				a.Typing(ctx, th)
				h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: chunk})
				if err != nil {
					return
				}
				tool, _ := a.Post(ctx, th, channels.Message{Kind: channels.KindTool, Key: "call", Text: "🛠️ Run ls · running"})
				var text strings.Builder
				text.WriteString(strings.Repeat(chunk, 200))
				for range 200 {
					select {
					case <-tick.C:
					case <-ctx.Done():
						return
					}
					text.WriteString(chunk)
					if a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: text.String()}) != nil {
						return
					}
				}
				a.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "call", Text: "🛠️ Run ls · done"})
				a.StopTyping(ctx, th)
			}
		})
	}
	return ids
}

// BenchmarkPostWhileStreaming measures POST /api/threads/{id}/messages
// while 100 threads stream (with a state file, 200 earlier messages per
// thread and a reader per thread):
// what a person waits for when they send a message to a busy gateway.
func BenchmarkPostWhileStreaming(b *testing.B) {
	a := New(Options{Listen: "127.0.0.1:0", StateFile: filepath.Join(b.TempDir(), "web-chat.json")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
	<-a.Ready()
	base := "http://" + a.Addr()
	sctx, stopStreams := context.WithCancel(ctx)
	ids := streamers(b, sctx, a, base, 99, 200)
	b.Cleanup(func() {
		stopStreams()
		cancel()
		<-done
	})
	target := ids[0]
	body := []byte(`{"author":"ann","text":"are you done yet?"}`)
	hc := &http.Client{}
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		res, err := hc.Post(base+"/api/threads/"+target+"/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			b.Fatalf("POST = %d", res.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(q(1), "max-µs")
}

// A person's message is answered while the gateway's outbound work is
// stuck: here encoding an edit for a live stream blocks until released.
// The POST, and the edit itself, must not wait for it; they did while the
// store encoded events with its lock held, so that every request queued
// behind every edit of every thread.
func TestPostDoesNotWaitForOutbound(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a.st.encode = func(v any) []byte {
		if m, ok := v.(message); ok && m.Text == "stuck edit" {
			once.Do(func() { close(entered) })
			<-release
		}
		return mustJSON(v)
	}
	in := serve(t, a, nil)
	t.Cleanup(func() { close(release) }) // before serve's cleanup stops Run
	c := newClient(t, a)
	ctx := t.Context()
	busy := c.newThread(ctx, t)
	s := c.openStream(t, "/api/threads/"+busy+"/events")
	s.next(t, "typing") // the stream is live: its state was sent
	h, err := a.Post(ctx, ref(busy), channels.Message{Kind: channels.KindText, Text: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	edited := make(chan error, 1)
	go func() { edited <- a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "stuck edit"}) }()
	select {
	case <-entered:
	case <-time.After(testWait):
		t.Fatal("the edit was never encoded")
	}
	// The outbound path is blocked now.
	type result struct {
		r   response
		err error
	}
	posted := make(chan result, 1)
	go func() {
		r, err := c.try(ctx, "POST", "/api/threads/"+busy+"/messages", map[string]string{"text": "are you there?"}, nil)
		posted <- result{r, err}
	}()
	select {
	case res := <-posted:
		if res.err != nil {
			t.Fatal(res.err)
		}
		if err := res.r.want(http.StatusAccepted); err != nil {
			t.Fatal(err)
		}
	case <-time.After(testWait):
		t.Fatal("POST /messages did not return while an outbound edit was stuck")
	}
	if ev := in.next(t); ev.Text != "are you there?" {
		t.Errorf("inbound = %+v, want the message", ev)
	}
	select {
	case err := <-edited:
		if err != nil {
			t.Errorf("Edit = %v", err)
		}
	case <-time.After(testWait):
		t.Error("Edit waited for a live stream")
	}
}

// BenchmarkSaveWhileStreaming measures one save of the state file while
// 100 threads of 200 messages each stream: each has one message edited
// since the last save.
func BenchmarkSaveWhileStreaming(b *testing.B) {
	st := newStore()
	p := newPersister(filepath.Join(b.TempDir(), "web-chat.json"), st, nil)
	var drafts [][2]string
	for i := range 100 {
		id := st.mustCreate(fmt.Sprint("thread ", i)).ID
		for j := range 200 {
			st.addMessage(id, message{Role: roleUser, Author: "ann", Kind: "text", Text: fmt.Sprintf("earlier message %d: %s", j, strings.Repeat("words ", 40))})
		}
		m, _ := st.addMessage(id, message{Role: roleAssistant, Author: "agent", Kind: "text", Text: "draft"})
		drafts = append(drafts, [2]string{id, m.ID})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.encodeLocked()
	text := strings.Repeat("word ", 4000)
	var size int
	for b.Loop() {
		for _, d := range drafts {
			st.editMessage(d[0], d[1], "text", "", text)
		}
		data, _, _, _ := p.encodeLocked()
		size = len(data)
	}
	b.ReportMetric(float64(size)/1e6, "MB/save")
}
