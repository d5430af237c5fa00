package web

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// sharedSeed are the records of a thread with two messages, an edit, a
// reaction, typing, a session and a tool's details, as one gateway wrote
// them.
var sharedSeed = []Change{
	{Rev: 1, Key: "t.abc.i", Value: []byte(`{"title":"first","created":"2026-01-02T03:04:05Z"}`)},
	{Rev: 2, Key: "t.abc.m.m1", Value: []byte(`{"id":"m1","role":"user","author":"ann","kind":"text","text":"hi","edits":0,"time":"2026-01-02T03:04:06Z"}`)},
	{Rev: 3, Key: "t.abc.m.m2", Value: []byte(`{"id":"m2","role":"assistant","author":"agent","kind":"tool","key":"call-1","text":"run","edits":0,"time":"2026-01-02T03:04:07Z"}`)},
	{Rev: 4, Key: "t.abc.y", Value: []byte(`{"typing":true}`)},
	{Rev: 5, Key: "t.abc.x.Y2FsbC0x", Value: []byte(`{"input":"ls"}`)},
	{Rev: 6, Key: "t.abc.m.m2", Value: []byte(`{"id":"m2","role":"assistant","author":"agent","kind":"tool","key":"call-1","text":"ran","edits":1,"time":"2026-01-02T03:04:07Z","updated":"2026-01-02T03:04:08Z","first":3}`)},
	{Rev: 7, Key: "t.abc.m.m1", Value: []byte(`{"id":"m1","role":"user","author":"ann","kind":"text","text":"hi","edits":0,"time":"2026-01-02T03:04:06Z","reactions":["👀"],"first":2}`)},
	{Rev: 8, Key: "t.abc.s", Value: []byte(`{"agent":"demo","model":"m","contextPercent":-1}`)},
	{Rev: 9, Key: "t.abc.i", Value: []byte(`{"title":"renamed","agent":"demo","created":"2026-01-02T03:04:05Z"}`)},
	{Rev: 10, Key: "t.abc.m.m1", Deleted: true},
	{Rev: 11, Key: "t.abc.i", Deleted: true},
}

// A gateway that starts later gets each key's latest value in the order
// of the last writes: the thread's details last, its first message after
// the second. It shows the thread as the writer did.
func TestApplySharedOutOfOrder(t *testing.T) {
	s := newStore()
	for _, i := range []int{3, 4, 5, 6, 7} { // the latest records but the info, by revision
		if err := s.applyChange(sharedSeed[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.threadList()) != 0 {
		t.Fatal("a thread listed before its details came")
	}
	if err := s.applyChange(sharedSeed[8]); err != nil {
		t.Fatal(err)
	}
	list := s.threadList()
	if len(list) != 1 || list[0].Title != "renamed" || list[0].Agent != "demo" {
		t.Fatalf("list %+v", list)
	}
	msgs, typing, err := s.messages("abc")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID+":"+m.Text)
	}
	if !slices.Equal(ids, []string{"m1:hi", "m2:ran"}) || !typing {
		t.Fatalf("messages %v typing %v, want m1:hi m2:ran, typing", ids, typing)
	}
	if msgs[1].Tool == nil && s.threads["abc"].tools["call-1"] == nil {
		t.Error("the tool's details were not kept")
	}
	if msgs[0].HTML == "" && msgs[1].HTML == "" {
		t.Error("no message was rendered")
	}
	if v := s.session("abc"); v == nil || v.Model != "m" {
		t.Errorf("session %+v", v)
	}
	if err := s.applyChange(sharedSeed[9]); err != nil {
		t.Fatal(err)
	}
	if err := s.applyChange(sharedSeed[10]); err != nil {
		t.Fatal(err)
	}
	if s.hasThread("abc") || len(s.pending) != 0 {
		t.Fatal("a deleted thread is kept")
	}
}

// The changes of the shared state come from outside (any process that
// reaches the NATS): whatever they hold, applying one never panics, one
// that cannot be read changes nothing, and the thread's message list and
// its index agree.
func FuzzApplyShared(f *testing.F) {
	for _, c := range sharedSeed {
		f.Add(c.Key, c.Value, c.Deleted)
	}
	f.Add("t.abc.m.zz", []byte(`{"id":"other","role":"user","kind":"text"}`), false)
	f.Add("t.abc.x.!!", []byte(`{}`), false)
	f.Add("t..i", []byte(`{}`), false)
	f.Fuzz(func(t *testing.T, key string, value []byte, deleted bool) {
		s := newStore()
		s.now = func() time.Time { return time.Unix(0, 0) }
		for _, c := range sharedSeed[:9] {
			if err := s.applyChange(c); err != nil {
				t.Fatal(err)
			}
		}
		before, _, _ := s.messages("abc")
		list := s.threadList()
		err := s.applyChange(Change{Rev: 100, Key: key, Value: value, Deleted: deleted})
		if err != nil {
			after, _, _ := s.messages("abc")
			if !slices.EqualFunc(before, after, func(a, b message) bool { return a.ID == b.ID && a.Text == b.Text }) ||
				!slices.EqualFunc(list, s.threadList(), func(a, b threadInfo) bool { return a.ID == b.ID && a.Title == b.Title }) {
				t.Fatalf("a change that failed (%v) changed the state", err)
			}
		}
		if s.applied != 100 {
			t.Fatalf("applied %d, want 100", s.applied)
		}
		for _, th := range s.threads {
			if len(th.msgs) != len(th.byID) {
				t.Fatalf("thread %s: %d messages, %d indexed", th.id, len(th.msgs), len(th.byID))
			}
			for _, m := range th.msgs {
				if th.byID[m.ID] != m {
					t.Fatalf("thread %s: message %s not indexed", th.id, m.ID)
				}
			}
		}
	})
}

// fakeShared is a Shared in memory: each write is applied to the store at
// once, or, while hold is set, when release is called.
type fakeShared struct {
	s       *store
	onHead  chan struct{} // told when Head is asked, if set
	onStale chan struct{} // told when a Put is refused, if set

	pump sync.Mutex // one delivery at a time, in order
	mu   sync.Mutex // guards the fields below
	log  []Change
	sent int
	revs map[string]uint64
	hold bool
}

func newFakeShared() (*fakeShared, *store) {
	s := newStore()
	f := &fakeShared{s: s, revs: map[string]uint64{}}
	s.shared = f
	return f, s
}

func (f *fakeShared) add(c Change) uint64 {
	f.mu.Lock()
	c.Rev = uint64(len(f.log) + 1)
	f.log = append(f.log, c)
	if c.Deleted {
		delete(f.revs, c.Key)
	} else {
		f.revs[c.Key] = c.Rev
	}
	f.mu.Unlock()
	f.deliver()
	return c.Rev
}

func (f *fakeShared) deliver() {
	f.pump.Lock()
	defer f.pump.Unlock()
	f.mu.Lock()
	if f.hold {
		f.mu.Unlock()
		return
	}
	todo := f.log[f.sent:]
	f.sent = len(f.log)
	f.mu.Unlock()
	for _, c := range todo {
		f.s.applyChange(c)
	}
}

func (f *fakeShared) release() {
	f.mu.Lock()
	f.hold = false
	f.mu.Unlock()
	f.deliver()
}

func (f *fakeShared) Put(_ context.Context, key string, value []byte, rev uint64) (uint64, error) {
	f.mu.Lock()
	stale := f.revs[key] != rev
	f.mu.Unlock()
	if stale {
		if f.onStale != nil {
			f.onStale <- struct{}{}
		}
		return 0, ErrStale
	}
	return f.add(Change{Key: key, Value: value}), nil
}

func (f *fakeShared) Delete(_ context.Context, key string) (uint64, error) {
	return f.add(Change{Key: key, Deleted: true}), nil
}

func (f *fakeShared) Purge(_ context.Context, prefix string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.revs {
		if strings.HasPrefix(k, prefix) {
			delete(f.revs, k)
		}
	}
	return nil
}

func (f *fakeShared) Head(context.Context) (uint64, error) {
	if f.onHead != nil {
		f.onHead <- struct{}{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return uint64(len(f.log)), nil
}

func (f *fakeShared) Follow(ctx context.Context, _ func(Change), caughtUp func()) error {
	caughtUp()
	<-ctx.Done()
	return nil
}

// A worker's post reaches this gateway just after another made the thread,
// before this one applied it: the post waits for it instead of failing.
func TestSharedCatchesUpWithANewThread(t *testing.T) {
	f, s := newFakeShared()
	f.hold = true
	f.onHead = make(chan struct{})
	f.add(Change{Key: "t.abc.i", Value: []byte(`{"title":"made elsewhere"}`)})
	done := make(chan error, 1)
	go func() {
		_, err := s.addMessage("abc", message{Role: roleAssistant, Author: authorAgent, Kind: "text", Text: "answer"})
		done <- err
	}()
	select {
	case <-f.onHead: // it found no thread and asks how far the log is
	case err := <-done:
		t.Fatalf("the post did not wait for the thread: %v", err)
	}
	f.onHead = nil
	f.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := s.messages("abc")
	if len(msgs) != 1 || msgs[0].Text != "answer" {
		t.Fatalf("messages %+v", msgs)
	}
}

// Two gateways editing one message: the one that wrote second, on a
// revision it had not seen, runs its edit again on the other's, so
// neither is lost.
func TestSharedEditOnAStaleMessage(t *testing.T) {
	f, s := newFakeShared()
	info, _ := s.createThread("t")
	m, err := s.addMessage(info.ID, message{Role: roleUser, Author: "ann", Kind: "text", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	// Another gateway reacts; this one has not seen it yet.
	f.hold = true
	key := recordKey(info.ID, recMessage, m.ID)
	other := m
	other.Reactions = []string{"👀"}
	other.HTML = ""
	if _, err := f.Put(context.Background(), key, mustJSON(messageRecord{message: other, First: s.threads[info.ID].first[m.ID]}), s.threads[info.ID].revs[key]); err != nil {
		t.Fatal(err)
	}
	f.onStale = make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- s.react(info.ID, m.ID, "✅", true) }()
	<-f.onStale // its write is refused; it waits for the other's change
	f.onStale = nil
	f.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, _ := s.message(info.ID, m.ID)
	if !slices.Equal(got.Reactions, []string{"👀", "✅"}) {
		t.Fatalf("reactions %v, want both gateways'", got.Reactions)
	}
}

// Records of a thread whose details are gone (written while it was being
// deleted) are dropped once the state is read, and named for removal.
func TestSharedOrphans(t *testing.T) {
	s := newStore()
	for _, c := range []Change{
		{Rev: 1, Key: "t.abc.i", Value: []byte(`{"title":"kept"}`)},
		{Rev: 2, Key: "t.gone.m.m1", Value: []byte(`{"id":"m1","role":"assistant","author":"agent","kind":"text","text":"late"}`)},
		{Rev: 3, Key: "t.gone.y", Value: []byte(`{"typing":false}`)},
	} {
		if err := s.applyChange(c); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.dropOrphans(); !slices.Equal(got, []string{"t.gone."}) {
		t.Fatalf("orphans %v, want t.gone.", got)
	}
	if len(s.pending) != 0 || !s.hasThread("abc") || len(s.threadList()) != 1 {
		t.Fatalf("pending %v, threads %+v", s.pending, s.threadList())
	}
}

// A tool's details (a diff may hold whole files) are written in their own
// record, never in its line's: the line shows them all the same.
func TestSharedToolDetailsApart(t *testing.T) {
	f, s := newFakeShared()
	info, _ := s.createThread("t")
	m, err := s.addMessage(info.ID, message{Role: roleAssistant, Author: authorAgent, Kind: string(channels.KindTool), Key: "call-1", Text: "edit"})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<16)
	s.setToolDetail(info.ID, "call-1", channels.ToolDetail{Input: "in", Diffs: []channels.Diff{{Path: "a.go", Old: big, New: big + "y"}}})
	if err := s.editMessage(info.ID, m.ID, string(channels.KindTool), "call-1", "edit · done"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.message(info.ID, m.ID)
	if got.Tool == nil || got.Tool.Input != "in" || len(got.Tool.Diffs) != 1 || got.Text != "edit · done" {
		t.Fatalf("the line shows %q with details %+v", got.Text, got.Tool)
	}
	msgKey := recordKey(info.ID, recMessage, m.ID)
	var writes int
	for _, c := range f.log {
		if c.Key == msgKey {
			writes++
			if len(c.Value) > 4096 {
				t.Errorf("the line's record has %d bytes", len(c.Value))
			}
		}
	}
	if writes != 2 {
		t.Errorf("the line was written %d times, want 2 (posted, edited)", writes)
	}
}
