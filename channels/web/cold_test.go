package web

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// More threads than the memory bound, all through the HTTP API: none is
// refused, the ones past the bound leave memory for their files, and every
// one opens with its messages, before and after a restart.
func TestThreadsBeyondMemoryComeBack(t *testing.T) {
	path := statePath(t)
	const n, bound = 12, 3
	a := New(Options{Listen: "127.0.0.1:0", StateFile: path, MaxThreadsInMemory: bound})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	var ids []string
	for i := range n {
		id := c.newThread(ctx, t)
		ids = append(ids, id)
		r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]string{"author": "ann", "text": fmt.Sprint("question ", i)})
		if err := r.want(http.StatusAccepted); err != nil {
			t.Fatalf("thread %d: %v", i, err)
		}
		in.next(t)
		if _, err := a.Post(ctx, ref(id), channels.Message{Kind: channels.KindText, Text: fmt.Sprint("**answer** ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.st.mu.Lock()
	inMemory, onDisk := 0, 0
	for _, th := range a.st.threads {
		switch {
		case th.onDisk && th.msgs == nil:
			onDisk++
		case !th.cold:
			inMemory++
		}
	}
	a.st.mu.Unlock()
	if inMemory != bound || onDisk != n-bound {
		t.Errorf("threads in memory %d, on disk %d; want %d and %d", inMemory, onDisk, bound, n-bound)
	}
	if _, err := os.Stat(coldPath(coldDirFor(path), ids[0])); err != nil {
		t.Errorf("the file of the oldest thread: %v", err)
	}

	check := func(c *client, when string) {
		t.Helper()
		var list threadsBody
		c.do(ctx, t, "GET", "/api/threads", nil).decode(t, &list)
		if len(list.Threads) != n {
			t.Errorf("%s: GET /api/threads lists %d threads, want %d", when, len(list.Threads), n)
		}
		for i, id := range ids {
			b, err := c.messages(ctx, id)
			if err != nil {
				t.Fatalf("%s: thread %d: %v", when, i, err)
			}
			if len(b.Messages) != 2 || b.Messages[0].Text != fmt.Sprint("question ", i) || b.Messages[1].HTML != fmt.Sprintf("<p><strong>answer</strong> %d</p>\n", i) {
				t.Errorf("%s: thread %d has %+v, want its question and rendered answer", when, i, b.Messages)
			}
		}
	}
	check(c, "in use")
	// Opening them all kept the bound: others went to disk in turn.
	a.st.mu.Lock()
	inMemory = 0
	for _, th := range a.st.threads {
		if !th.cold {
			inMemory++
		}
	}
	a.st.mu.Unlock()
	if inMemory != bound {
		t.Errorf("threads in memory after opening all = %d, want %d", inMemory, bound)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}

	b := New(Options{Listen: "127.0.0.1:0", StateFile: path, MaxThreadsInMemory: bound})
	serve(t, b, nil)
	check(newClient(t, b), "after a restart")
}

// Deleting a cold thread removes its file.
func TestDeleteColdThreadRemovesItsFile(t *testing.T) {
	path := statePath(t)
	a := New(Options{Listen: "127.0.0.1:0", StateFile: path, MaxThreadsInMemory: 1})
	old := a.st.mustCreate("old").ID
	must(a.st.addMessage(old, message{Role: roleUser, Kind: "text", Text: "hi"}))(t)
	a.st.mustCreate("new")
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	file := coldPath(coldDirFor(path), old)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("cold file: %v", err)
	}
	if err := a.st.deleteThread(old); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("cold file after delete: %v, want none", err)
	}
}

// holdFirstRead makes the first read of a cold file in st wait, once the
// file is read, until release is closed; reading tells when it waits.
// Later reads do not wait.
func holdFirstRead(t *testing.T, st *store) (reading, release chan struct{}) {
	reading, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { closeOnce(release) })
	st.readFile = func(path string) ([]byte, error) {
		data, err := os.ReadFile(path)
		first := false
		once.Do(func() { first = true })
		if first {
			close(reading)
			<-release
		}
		return data, err
	}
	return reading, release
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// coldPair makes an adapter with room for one thread in memory and two
// threads: old, with one message, on disk, and new, in memory.
func coldPair(t *testing.T) (a *Adapter, old, new string) {
	a = New(Options{Listen: "127.0.0.1:0", StateFile: statePath(t), MaxThreadsInMemory: 1})
	old = a.st.mustCreate("old").ID
	must(a.st.addMessage(old, message{Role: roleUser, Kind: "text", Text: "hi"}))(t)
	new = a.st.mustCreate("new").ID
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	return a, old, new
}

func texts(msgs []message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

// A thread read back from disk holds no other: while its file is read,
// the store is free and another thread takes a message.
func TestColdThreadIsReadWithoutTheStoreLocked(t *testing.T) {
	a, old, new := coldPair(t)
	reading, release := holdFirstRead(t, a.st)
	got := make(chan []message, 1)
	go func() {
		msgs, _, err := a.st.messages(old)
		if err != nil {
			t.Error(err)
		}
		got <- msgs
	}()
	<-reading
	if !a.st.mu.TryLock() {
		t.Fatal("the store is locked while a thread is read from disk")
	}
	a.st.mu.Unlock()
	must(a.st.addMessage(new, message{Role: roleUser, Kind: "text", Text: "meanwhile"}))(t)
	close(release)
	if msgs := <-got; !slices.Equal(texts(msgs), []string{"hi"}) {
		t.Errorf("the thread read back has %q, want [hi]", texts(msgs))
	}
}

// A read of a thread's file that the thread outlived (read back, changed
// and saved again while the file was read) is not taken: the thread is
// read again.
func TestColdThreadReadAgainWhenSavedMeanwhile(t *testing.T) {
	a, old, new := coldPair(t)
	reading, release := holdFirstRead(t, a.st)
	got := make(chan []message, 1)
	go func() {
		msgs, _, err := a.st.messages(old)
		if err != nil {
			t.Error(err)
		}
		got <- msgs
	}()
	<-reading // it holds the file with "hi" alone
	if !a.st.mu.TryLock() {
		t.Fatal("the store is locked while a thread is read from disk")
	}
	a.st.mu.Unlock()
	must(a.st.addMessage(old, message{Role: roleUser, Kind: "text", Text: "later"}))(t)
	must(a.st.addMessage(new, message{Role: roleUser, Kind: "text", Text: "elsewhere"}))(t) // old goes cold again
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.st.mu.Lock()
	onDisk := a.st.threads[old].onDisk
	a.st.mu.Unlock()
	if !onDisk {
		t.Fatal("the old thread did not go back to disk")
	}
	close(release)
	if msgs := <-got; !slices.Equal(texts(msgs), []string{"hi", "later"}) {
		t.Errorf("the thread read back has %q, want [hi later]", texts(msgs))
	}
}
