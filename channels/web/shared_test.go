package web

import (
	"slices"
	"testing"
	"time"
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
	if s.hasThread("abc") || len(s.revs) != 0 {
		t.Fatalf("a deleted thread is kept (revisions %v)", s.revs)
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
