package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

// mustCreate is createThread for tests that expect room for the thread.
func (s *store) mustCreate(title string) threadInfo {
	t, err := s.createThread(title)
	if err != nil {
		panic(err)
	}
	return t
}

// clock is a settable time for a store.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) get() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestStoreEvictsLeastRecentlyActiveThread(t *testing.T) {
	st := newStore()
	clk := &clock{now: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	st.now = clk.get
	st.maxThreads = 3
	a, b := st.mustCreate("a"), st.mustCreate("b")
	st.mustCreate("c")
	if _, err := st.addMessage(a.ID, message{Role: roleUser, Kind: "text", Text: "still here"}); err != nil {
		t.Fatal(err)
	}
	sub, _, err := st.subscribe(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(keepFor) // none was used in the last hour
	st.mustCreate("d")
	var got []string
	for _, th := range st.threadList() {
		got = append(got, th.Title)
	}
	if want := []string{"d", "a", "c"}; !cmp.Equal(got, want) {
		t.Errorf("threads after eviction = %q, want %q, the most recently active first (b was the least recently active)", got, want)
	}
	select {
	case <-sub.gone:
	default:
		t.Errorf("the stream of the forgotten thread is still open")
	}
}

func TestStoreBoundsMessages(t *testing.T) {
	st := newStore()
	st.maxMessages = 5
	id := st.mustCreate("t").ID
	var ids []string
	for i := range 7 {
		m, err := st.addMessage(id, message{Role: roleAssistant, Kind: "text", Text: strings.Repeat("x", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	msgs, _, _ := st.messages(id)
	var got []string
	for _, m := range msgs {
		got = append(got, m.ID)
	}
	if diff := cmp.Diff(ids[2:], got); diff != "" {
		t.Errorf("kept messages (-want +got):\n%s", diff)
	}
	if err := st.editMessage(id, ids[0], "text", "", "late"); !errors.Is(err, errNoMessage) {
		t.Errorf("edit of a forgotten message = %v, want errNoMessage", err)
	}
}

func TestTitleFrom(t *testing.T) {
	long := strings.Repeat("é", maxTitleRunes+5)
	tests := []struct{ in, want string }{
		{"", ""},
		{"\n\n  fix the build \nnow", "fix the build"},
		{long, strings.Repeat("é", maxTitleRunes-1) + "…"},
	}
	for _, tc := range tests {
		if got := titleFrom(tc.in); got != tc.want {
			t.Errorf("titleFrom(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSlowSubscriberIsDropped(t *testing.T) {
	st := newStore()
	id := st.mustCreate("t").ID
	sub, _, err := st.subscribe(id)
	if err != nil {
		t.Fatal(err)
	}
	for range subscriberBuffer + 1 {
		st.addMessage(id, message{Role: roleAssistant, Kind: "text", Text: "x"})
	}
	select {
	case <-sub.gone:
	default:
		t.Fatal("a subscriber that fell behind was not dropped")
	}
	// Later events do not block and do not reach it.
	st.addMessage(id, message{Role: roleAssistant, Kind: "text", Text: "y"})
	if n := len(sub.ch); n != subscriberBuffer {
		t.Errorf("events queued for the dropped subscriber = %d, want %d", n, subscriberBuffer)
	}
	st.unsubscribe(sub) // a second drop is harmless
}

// syncBuffer is a writer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStreamEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStore()
		id := st.mustCreate("t").ID
		m, _ := st.addMessage(id, message{Role: roleAssistant, Author: "agent", Kind: "text", Text: "hi"})
		sub, snap, err := st.subscribe(id)
		if err != nil {
			t.Fatal(err)
		}
		var w syncBuffer
		flushes := 0
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- streamEvents(ctx, nil, &w, func() error { flushes++; return nil }, sub, snap, 15*time.Second)
		}()
		synctest.Wait()
		start := w.String()
		for _, want := range []string{"retry: 2000\n\n", "event: threads\ndata: {\"threads\":[", "event: message\ndata: " + string(mustJSON(m)) + "\n\n", "event: typing\ndata: {\"typing\":false}\n\n"} {
			if !strings.Contains(start, want) {
				t.Errorf("stream start lacks %q:\n%s", want, start)
			}
		}
		if strings.Contains(start, "heartbeat") {
			t.Errorf("heartbeat before 15 s:\n%s", start)
		}

		time.Sleep(15 * time.Second) // the bubble's clock
		synctest.Wait()
		if got := strings.Count(w.String(), ": heartbeat\n\n"); got != 1 {
			t.Errorf("heartbeats after 15 s = %d, want 1", got)
		}
		st.setTyping(id, true)
		synctest.Wait()
		if rest := w.String()[len(start):]; !strings.Contains(rest, "event: typing\ndata: {\"typing\":true}\n\n") {
			t.Errorf("stream after setTyping = %q, want a typing event", rest)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := strings.Count(w.String(), ": heartbeat\n\n"); got != 3 {
			t.Errorf("heartbeats after 45 s = %d, want 3", got)
		}
		if flushes < 5 {
			t.Errorf("flushes = %d, want one after the snapshot and each event", flushes)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("streamEvents after cancel = %v, want nil", err)
		}
		st.unsubscribe(sub)
	})
}

func TestReplierWait(t *testing.T) {
	tests := []struct {
		name      string
		replyAt   time.Duration // -1: never
		wantReply string
		wantLate  []string
	}{
		{"reply in time", 300 * time.Millisecond, "ok", nil},
		{"no reply", -1, "", nil},
		{"late reply", 2 * time.Second, "", []string{"ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lateCh := make(chan string, 1)
				r := &replier{got: make(chan struct{}), waiting: true, late: func(_ context.Context, s string) error {
					lateCh <- s
					return nil
				}}
				if tc.replyAt >= 0 {
					go func() {
						time.Sleep(tc.replyAt)
						r.reply(t.Context(), "ok")
					}()
				}
				start := time.Now()
				got := r.wait(t.Context(), t.Context(), time.Second)
				waited := time.Since(start)
				synctest.Wait()
				time.Sleep(5 * time.Second)
				synctest.Wait()
				var late []string
				if len(lateCh) > 0 {
					late = append(late, <-lateCh)
				}
				if got != tc.wantReply || !cmp.Equal(late, tc.wantLate) {
					t.Errorf("wait = %q, late notices %q; want %q, %q", got, late, tc.wantReply, tc.wantLate)
				}
				if want := min(time.Second, max(tc.replyAt, 0)); tc.replyAt >= 0 && tc.replyAt < time.Second && waited != want {
					t.Errorf("waited %v, want %v (until the reply)", waited, want)
				}
				if tc.replyAt < 0 && waited != time.Second {
					t.Errorf("waited %v without a reply, want 1s", waited)
				}
			})
		})
	}
}

// The thread cap never forgets a thread in use: one whose turn is running
// (typing on) or that was active in the last hour. When every thread is in
// use, a new thread is refused with a message the page shows, instead of
// forgetting one.
func TestThreadCapKeepsThreadsInUse(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	clk := &clock{now: t0}
	a := New(Options{Listen: "127.0.0.1:0"})
	a.st.now, a.st.maxThreads = clk.get, 3
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	running, used, idle := c.newThread(ctx, t), c.newThread(ctx, t), c.newThread(ctx, t)
	if err := a.Typing(ctx, ref(running)); err != nil {
		t.Fatal(err)
	}
	ids := func() []string {
		var out []string
		for _, th := range a.st.threadList() {
			out = append(out, th.ID)
		}
		return out
	}
	before := ids()

	// Half an hour later all three were used within the hour.
	clk.add(30 * time.Minute)
	r := c.do(ctx, t, "POST", "/api/threads", nil)
	wantErr := "the web chat already keeps 3 threads, and each one is running or was used in the last hour, so none is forgotten to make room; continue an existing thread, or try again in about 30m0s"
	if r.status != http.StatusTooManyRequests || r.errorText() != wantErr || r.header.Get("Retry-After") != "1800" {
		t.Errorf("new thread when all are in use = %d %q (Retry-After %q), want 429 %q (1800)", r.status, r.errorText(), r.header.Get("Retry-After"), wantErr)
	}
	if got := ids(); !cmp.Equal(got, before) {
		t.Errorf("threads after the refusal = %v, want %v unchanged", got, before)
	}

	// used is written in; after an hour and five minutes, idle is the only
	// one neither running nor used in the last hour.
	clk.add(20 * time.Minute)
	if _, err := a.Post(ctx, ref(used), channels.Message{Kind: channels.KindText, Text: "still at it"}); err != nil {
		t.Fatal(err)
	}
	clk.add(15 * time.Minute)
	fourth := c.newThread(ctx, t)
	if got, want := ids(), []string{fourth, used, running}; !cmp.Equal(got, want) {
		t.Errorf("threads after a new one = %v, want %v (idle %s forgotten)", got, want, idle)
	}

	// An hour later used and fourth are idle; running is the least recently
	// active but its turn still runs: used goes, running stays.
	clk.add(time.Hour)
	fifth := c.newThread(ctx, t)
	if got, want := ids(), []string{fifth, fourth, running}; !cmp.Equal(got, want) {
		t.Errorf("threads after another = %v, want %v (used forgotten, running kept)", got, want)
	}

	// Every thread running: refused, with no time to promise.
	for _, id := range []string{fifth, fourth} {
		if err := a.Typing(ctx, ref(id)); err != nil {
			t.Fatal(err)
		}
	}
	clk.add(2 * time.Hour)
	r = c.do(ctx, t, "POST", "/api/threads", nil)
	if r.status != http.StatusTooManyRequests || !strings.HasSuffix(r.errorText(), "try again when a running turn ends and its thread has been idle for an hour") {
		t.Errorf("new thread when all are running = %d %q, want 429 and when to try again", r.status, r.errorText())
	}
	// A turn ends: its thread can make room again.
	if err := a.StopTyping(ctx, ref(fourth)); err != nil {
		t.Fatal(err)
	}
	if got := c.newThread(ctx, t); slices.Contains(ids(), fourth) || !slices.Contains(ids(), got) {
		t.Errorf("threads after a turn ended = %v, want %s forgotten for %s", ids(), fourth, got)
	}
}
