package web

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pageView is what a page makes of its stream, as page-core.js does: the
// thread list (a "threads" event replaces it, "thread" puts one entry,
// "threadRemoved" takes one out) and its thread's messages by id, in
// the order they first came.
type pageView struct {
	threads map[string]threadInfo
	order   []string // message ids, first arrival
	texts   map[string]string
}

func readPage(t *testing.T, sse string) pageView {
	t.Helper()
	v := pageView{threads: map[string]threadInfo{}, texts: map[string]string{}}
	for block := range strings.SplitSeq(sse, "\n\n") {
		var name, data string
		for line := range strings.Lines(block) {
			line = strings.TrimSuffix(line, "\n")
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
		switch name {
		case "threads":
			var b threadsBody
			mustUnmarshal(t, data, &b)
			clear(v.threads)
			for _, ti := range b.Threads {
				v.threads[ti.ID] = ti
			}
		case "thread":
			var ti threadInfo
			mustUnmarshal(t, data, &ti)
			v.threads[ti.ID] = ti
		case "threadRemoved":
			var b removedBody
			mustUnmarshal(t, data, &b)
			delete(v.threads, b.ID)
		case "message":
			var m message
			mustUnmarshal(t, data, &m)
			if _, ok := v.texts[m.ID]; !ok {
				v.order = append(v.order, m.ID)
			}
			v.texts[m.ID] = m.Text
		}
	}
	return v
}

func mustUnmarshal(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatalf("event data %q: %v", data, err)
	}
}

// TestPageBehindGetsItsThreadAndList opens a page on one thread of many,
// lets it read nothing while the list changes in many frames (more than
// the feed keeps, or fewer) and its own thread gets messages and edits,
// then lets it read: it has every message of its thread, in order, with
// its last text, and the list as the store has it.
func TestPageBehindGetsItsThreadAndList(t *testing.T) {
	for _, frames := range []int{3, listKeep * 2} {
		t.Run(fmt.Sprint("frames=", frames), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { pageBehind(t, frames) })
		})
	}
}

func pageBehind(t *testing.T, frames int) {
	st := newStore()
	var ids []string
	for i := range 20 {
		ids = append(ids, st.mustCreate(fmt.Sprint("thread ", i)).ID)
	}
	own := ids[0]
	sub, snap, err := st.subscribe(own)
	if err != nil {
		t.Fatal(err)
	}
	defer st.unsubscribe(sub)
	var want []string // own thread's message ids
	wantText := map[string]string{}
	for f := range frames {
		// A frame's worth of list changes: other threads talk, one is
		// renamed, one goes and a new one comes.
		for k, id := range ids[1:] {
			if (f+k)%3 == 0 {
				st.addMessage(id, message{Role: roleUser, Author: "bo", Kind: "text", Text: "hi"})
			}
		}
		if f%5 == 4 {
			gone := ids[len(ids)-1]
			if err := st.deleteThread(gone); err != nil {
				t.Fatal(err)
			}
			ids = append(ids[:len(ids)-1], st.mustCreate(fmt.Sprint("new ", f)).ID)
			st.setTitle(ids[1], fmt.Sprint("renamed ", f))
		}
		if f%10 == 0 { // own thread: a message and an edit, in the same frame
			m, err := st.addMessage(own, message{Role: roleAssistant, Author: authorAgent, Kind: "text", Text: "draft"})
			if err != nil {
				t.Fatal(err)
			}
			text := fmt.Sprint("reply ", f)
			st.editMessage(own, m.ID, "text", "", text)
			want = append(want, m.ID)
			wantText[m.ID] = text
		}
		time.Sleep(listInterval) // the frame goes out
	}
	if len(sub.ch) >= subscriberBuffer {
		t.Fatalf("the test queued %d events, more than a stream may fall behind", len(sub.ch))
	}

	var out syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { streamEvents(ctx, nil, &out, func() error { return nil }, sub, snap, time.Hour) })
	synctest.Wait() // the page read all there was
	cancel()
	wg.Wait()

	got := readPage(t, out.String())
	if diff := cmp.Diff(want, got.order); diff != "" {
		t.Errorf("own thread's messages, in order (-want +got):\n%s", diff)
	}
	for _, id := range want {
		if got.texts[id] != wantText[id] {
			t.Errorf("message %s = %q, want %q", id, got.texts[id], wantText[id])
		}
	}
	list := slices.SortedFunc(func(yield func(threadInfo) bool) {
		for _, ti := range got.threads {
			if !yield(ti) {
				return
			}
		}
	}, func(a, b threadInfo) int {
		if a.Activity > b.Activity {
			return -1
		}
		return 1
	})
	if diff := cmp.Diff(st.threadList(), list); diff != "" {
		t.Errorf("the page's list (-store +page):\n%s", diff)
	}
}
