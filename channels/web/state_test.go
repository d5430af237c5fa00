package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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

// Without a state file, a thread past the memory bound is forgotten: the
// least recently active one without an open page.
func TestStoreEvictsLeastRecentlyActiveThread(t *testing.T) {
	st := newStore()
	st.maxInMemory = 3
	a, b := st.mustCreate("a"), st.mustCreate("b")
	st.mustCreate("c")
	if _, err := st.addMessage(a.ID, message{Role: roleUser, Kind: "text", Text: "still here"}); err != nil {
		t.Fatal(err)
	}
	sub, _, err := st.subscribe(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	st.mustCreate("d")
	var got []string
	for _, th := range st.threadList() {
		got = append(got, th.Title)
	}
	if want := []string{"d", "a", "b"}; !cmp.Equal(got, want) {
		t.Errorf("threads after eviction = %q, want %q, the most recently active first (c was the least recently active without a page)", got, want)
	}
	select {
	case <-sub.gone:
		t.Errorf("the stream of the kept thread ended")
	default:
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

// A thread at its bound of messages takes a new one at the cost of one
// below it: the oldest leaves without the others being copied (they were,
// 1,000 pointers a message).
func TestStoreBoundsMessagesWithoutCopying(t *testing.T) {
	st := newStore()
	st.maxMessages = 1000
	full, below := st.mustCreate("full").ID, st.mustCreate("below").ID
	for range st.maxMessages {
		st.addMessage(full, message{Role: roleAssistant, Kind: "text", Text: "x"})
	}
	// Below the bound, append grows the array now and then; give it room.
	st.mu.Lock()
	st.threads[below].msgs = make([]*message, 0, 4*st.maxMessages)
	st.mu.Unlock()
	add := func(id string) func() {
		return func() { st.addMessage(id, message{Role: roleAssistant, Kind: "text", Text: "x"}) }
	}
	atBound, under := testing.AllocsPerRun(500, add(full)), testing.AllocsPerRun(500, add(below))
	if atBound > under {
		t.Errorf("allocations of a message added at the bound = %v, below it = %v; want no more", atBound, under)
	}
	if msgs, _, _ := st.messages(full); len(msgs) != st.maxMessages {
		t.Errorf("messages kept = %d, want %d", len(msgs), st.maxMessages)
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

// A new thread is never refused: the memory bound never forgets (nor
// sends to disk) a thread whose turn runs, and when every other thread
// runs it is passed until one ends.
func TestNewThreadNeverRefused(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	a.st.maxInMemory = 3
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	ids := func() []string {
		var out []string
		for _, th := range a.st.threadList() {
			out = append(out, th.ID)
		}
		return out
	}
	running, idle, third := c.newThread(ctx, t), c.newThread(ctx, t), c.newThread(ctx, t)
	if err := a.Typing(ctx, ref(running)); err != nil {
		t.Fatal(err)
	}
	fourth := c.newThread(ctx, t)
	if got, want := ids(), []string{fourth, third, running}; !cmp.Equal(got, want) {
		t.Errorf("threads after a fourth = %v, want %v (idle %s forgotten, running kept)", got, want, idle)
	}
	for _, id := range []string{third, fourth} {
		if err := a.Typing(ctx, ref(id)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		r := c.do(ctx, t, "POST", "/api/threads", nil)
		if r.status != http.StatusCreated {
			t.Fatalf("new thread while every thread runs = %d %q, want 201", r.status, r.errorText())
		}
	}
	if got := len(ids()); got != 4 {
		t.Errorf("threads while every other runs = %d, want 4 (the bound passed by the new one only)", got)
	}
	if err := a.StopTyping(ctx, ref(third)); err != nil {
		t.Fatal(err)
	}
	last := c.newThread(ctx, t)
	if got, want := ids(), []string{last, fourth, running}; !cmp.Equal(got, want) {
		t.Errorf("threads after a turn ended = %v, want %v", got, want)
	}
}
