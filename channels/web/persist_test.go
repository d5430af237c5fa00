package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// threadDump is what the state file keeps of a thread, and its typing flag.
type threadDump struct {
	ID       string
	Title    string
	Created  time.Time
	Typing   bool
	Messages []message
}

// stateDump is the whole state of a store as the state file keeps it: the
// threads in list order (newest first) and the thread ids from the least
// to the most recently active (the eviction order).
type stateDump struct {
	Threads  []threadDump
	Activity []string
}

func dump(st *store) stateDump {
	st.mu.Lock()
	defer st.mu.Unlock()
	var d stateDump
	for _, info := range st.threadListLocked() {
		t := st.threads[info.ID]
		d.Threads = append(d.Threads, threadDump{ID: t.id, Title: t.title, Created: t.created, Typing: t.typing, Messages: t.copyLocked()})
	}
	ts := make([]*thread, 0, len(st.threads))
	for _, t := range st.threads {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *thread) int { return cmp.Compare(a.active, b.active) })
	for _, t := range ts {
		d.Activity = append(d.Activity, t.id)
	}
	return d
}

// withoutTyping returns d with every typing flag cleared, as a restart
// shows it.
func withoutTyping(d stateDump) stateDump {
	d.Threads = slices.Clone(d.Threads)
	for i := range d.Threads {
		d.Threads[i].Typing = false
	}
	return d
}

func statePath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "web-chat.json")
}

// must returns v, or fails the test given to the returned function if
// err is not nil: must(f())(t).
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestStateRoundTrip(t *testing.T) {
	path := statePath(t)
	ctx := t.Context()
	a := New(Options{StateFile: path})
	first := a.st.mustCreate("First thread")
	second := a.st.mustCreate("")
	third := a.st.mustCreate("third")
	must(a.st.addMessage(second.ID, message{Role: roleUser, Author: "ann", Kind: "text", Text: "list the files\nplease"}))(t)
	tool := must(a.Post(ctx, ref(second.ID), channels.Message{Kind: channels.KindTool, Key: "call-1", Text: "🔧 ls"}))(t)
	for _, text := range []string{"🔧 ls …", "🔧 ls ✓"} {
		if err := a.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "call-1", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	open := must(a.Prompt(ctx, ref(second.ID), channels.Choice{Text: "Allow `rm`?", Options: []channels.Option{
		{ID: "allow", Label: "Allow", Style: "primary"}, {ID: "reject", Label: "Reject", Style: "danger"},
	}}))(t)
	answered := must(a.Prompt(ctx, ref(second.ID), channels.Choice{Text: "Allow `ls`?", Options: []channels.Option{{ID: "allow"}}}))(t)
	if err := a.Edit(ctx, answered, channels.Message{Kind: channels.KindPermission, Text: "✅ Allowed by ann"}); err != nil {
		t.Fatal(err)
	}
	must(a.st.addMessage(second.ID, message{Role: roleSystem, Author: authorGateway, Kind: "notice", Text: "⚙️ queued"}))(t)
	must(a.Post(ctx, ref(first.ID), channels.Message{Text: "first is the most recently active"}))(t)
	if err := a.Typing(ctx, ref(second.ID)); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if runtime.GOOS != "windows" {
		fi := must(os.Stat(path))(t)
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("state file mode = %v, want 0600", got)
		}
	}

	b := New(Options{StateFile: path})
	want := withoutTyping(dump(a.st))
	got := dump(b.st)
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("state after a restart (-want +got):\n%s", diff)
	}
	if got, want := got.Activity, []string{third.ID, second.ID, first.ID}; !slices.Equal(got, want) {
		t.Errorf("activity order = %q, want %q", got, want)
	}
	msgs, _, _ := b.st.messages(second.ID)
	if len(msgs[2].Options) != 2 || msgs[3].Options != nil || msgs[1].Edits != 2 {
		t.Errorf("restored prompt options %v / %v and tool edits %d, want 2 options on the open prompt, none on the answered one, 2 edits",
			msgs[2].Options, msgs[3].Options, msgs[1].Edits)
	}
	if msgs[2].ID != string(open.ID) || msgs[1].ID != string(tool.ID) {
		t.Errorf("restored ids %q, %q; want the tool's %q and the prompt's %q", msgs[1].ID, msgs[2].ID, tool.ID, open.ID)
	}

	// New ids and ticks go on after the restored ones.
	fourth := b.st.mustCreate("fourth")
	if list := b.st.threadList(); list[0].ID != fourth.ID {
		t.Errorf("newest thread after a restart = %q, want the new %q", list[0].ID, fourth.ID)
	}
}

func TestRestartShowsThreadsInAPI(t *testing.T) {
	path := statePath(t)
	var (
		wantThreads threadsBody
		wantMsgs    messagesBody
		id          string
		prompt      channels.Handle
	)
	t.Run("first run", func(t *testing.T) {
		a := New(Options{Listen: "127.0.0.1:0", StateFile: path})
		in := serve(t, a, nil)
		c := newClient(t, a)
		ctx := t.Context()
		id = c.newThread(ctx, t)
		r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]string{"author": "ann", "text": "delete the tmp files"})
		if err := r.want(http.StatusAccepted); err != nil {
			t.Fatal(err)
		}
		in.next(t)
		must(a.Post(ctx, ref(id), channels.Message{Text: "Looking."}))(t)
		prompt = must(a.Prompt(ctx, ref(id), channels.Choice{Text: "Allow `rm -r tmp`?", Options: []channels.Option{{ID: "allow", Label: "Allow"}, {ID: "reject", Label: "Reject"}}}))(t)
		if err := a.Typing(ctx, ref(id)); err != nil {
			t.Fatal(err)
		}
		a.ShowAgent(ref(id), "demo")
		c.do(ctx, t, "GET", "/api/threads", nil).decode(t, &wantThreads)
		if wantThreads.Threads[0].Agent != "demo" {
			t.Fatalf("threads = %+v, want the agent shown", wantThreads.Threads)
		}
		wantMsgs = must(c.messages(ctx, id))(t)
		// No Flush: Run saves when it returns, at the end of this subtest.
	})
	for i := range wantThreads.Threads {
		wantThreads.Threads[i].Typing = false
	}
	wantMsgs.Typing = false

	t.Run("second run", func(t *testing.T) {
		b := New(Options{Listen: "127.0.0.1:0", StateFile: path})
		b.replyWait = 10 * time.Millisecond // the handler never replies
		in := serve(t, b, nil)
		c := newClient(t, b)
		ctx := t.Context()
		var gotThreads threadsBody
		c.do(ctx, t, "GET", "/api/threads", nil).decode(t, &gotThreads)
		if diff := gocmp.Diff(wantThreads, gotThreads, cmpopts.IgnoreFields(threadInfo{}, "Activity")); diff != "" { // Activity: renumbered at a restart
			t.Errorf("GET /api/threads after a restart (-want +got):\n%s", diff)
		}
		gotMsgs := must(c.messages(ctx, id))(t)
		if diff := gocmp.Diff(wantMsgs, gotMsgs); diff != "" {
			t.Errorf("GET messages after a restart (-want +got):\n%s", diff)
		}

		// The restored prompt still offers its options until the gateway
		// edits it.
		r := c.do(ctx, t, "POST", "/api/threads/"+id+"/prompts/"+string(prompt.ID)+"/answer", map[string]string{"author": "ann", "optionId": "allow"})
		if err := r.want(http.StatusAccepted); err != nil {
			t.Fatal(err)
		}
		if ev := in.next(t); ev.Choice == nil || ev.Choice.Prompt != prompt {
			t.Errorf("click on a restored prompt = %+v, want a choice for %v", ev.Choice, prompt)
		}
	})
}

func TestEditOfRestoredPrompt(t *testing.T) {
	path := statePath(t)
	ctx := t.Context()
	a := New(Options{StateFile: path})
	id := a.st.mustCreate("t").ID
	h := must(a.Prompt(ctx, ref(id), channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "allow"}}}))(t)
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}

	b := New(Options{StateFile: path})
	text := "⚙️ Permission prompt expired: the gateway restarted before anyone answered (ls)."
	if err := b.Edit(ctx, h, channels.Message{Kind: channels.KindPermission, Text: text}); err != nil {
		t.Fatalf("Edit of a restored prompt = %v, want nil", err)
	}
	got := must(b.st.message(id, string(h.ID)))(t)
	want := message{ID: string(h.ID), Role: roleAssistant, Author: authorAgent, Kind: "permission", Text: text, Edits: 1, HTML: "<p>" + text + "</p>\n"}
	if diff := gocmp.Diff(want, got, ignoreVolatile); diff != "" {
		t.Errorf("restored prompt after Edit (-want +got):\n%s", diff)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	c := New(Options{StateFile: path})
	if got := must(c.st.message(id, string(h.ID)))(t); got.Options != nil || got.Text != text {
		t.Errorf("edited prompt after a second restart = %+v, want the new text and no options", got)
	}
}

func TestCorruptStateFileIsMovedAside(t *testing.T) {
	tests := []struct{ name, content string }{
		{"not JSON", "this is not json"},
		{"truncated", `{"version":1,"threads":[{"id":"abc","messages":[`},
		{"no version", `{"threads":[]}`},
		{"null", `null`},
		{"version zero", `{"version":0,"threads":[]}`},
		{"wrong type", `{"version":1,"threads":{}}`},
		{"cold with messages", `{"version":2,"threads":[{"id":"a","cold":true,"messages":[{"id":"m","role":"user","kind":"text"}]}]}`},
		{"bad thread id", `{"version":1,"threads":[{"id":"../x"}]}`},
		{"repeated thread id", `{"version":1,"threads":[{"id":"a"},{"id":"a"}]}`},
		{"repeated message id", `{"version":1,"threads":[{"id":"a","messages":[{"id":"m","role":"user","kind":"text"},{"id":"m","role":"user","kind":"text"}]}]}`},
		{"unknown role", `{"version":1,"threads":[{"id":"a","messages":[{"id":"m","role":"admin","kind":"text"}]}]}`},
		{"no kind", `{"version":1,"threads":[{"id":"a","messages":[{"id":"m","role":"user"}]}]}`},
		{"repeated option", `{"version":1,"threads":[{"id":"a","messages":[{"id":"m","role":"assistant","kind":"permission","options":[{"id":"x"},{"id":"x"}]}]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := statePath(t)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			a := New(Options{StateFile: path, Logger: newTextLogger(&logs)})
			if got := a.st.threadList(); len(got) != 0 {
				t.Errorf("threads after a corrupt file = %v, want none", got)
			}
			if got := logs.String(); !strings.Contains(got, "state file is corrupt") || !strings.Contains(got, "level=ERROR") {
				t.Errorf("logs = %q, want an error about the corrupt file", got)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("state file still in place: %v", err)
			}
			if got := string(must(os.ReadFile(path + ".corrupt"))(t)); got != tc.content {
				t.Errorf("moved-aside file = %q, want the original %q", got, tc.content)
			}
			// Saving works again.
			th := a.st.mustCreate("fresh")
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := New(Options{StateFile: path}).st.threadList(); len(got) != 1 || got[0].ID != th.ID {
				t.Errorf("threads saved after the corrupt file = %v, want only %q", got, th.ID)
			}
		})
	}
}

func TestNewerStateFileIsRefused(t *testing.T) {
	path := statePath(t)
	content := `{"version": 3, "threads": {"format": "of the future"}}`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	a := New(Options{StateFile: path, Logger: newTextLogger(&logs)})
	if got := a.st.threadList(); len(got) != 0 {
		t.Errorf("threads = %v, want none", got)
	}
	if got := logs.String(); !strings.Contains(got, "written by a newer gateway") || !strings.Contains(got, "version=3 supported=2") {
		t.Errorf("logs = %q, want an error naming the versions", got)
	}
	a.st.mustCreate("not saved")
	if err := a.Flush(); err != nil {
		t.Errorf("Flush = %v, want nil (saving is off)", err)
	}
	if got := string(must(os.ReadFile(path))(t)); got != content {
		t.Errorf("state file = %q, want it untouched: %q", got, content)
	}
	if _, err := os.Stat(path + ".corrupt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a newer file was moved aside: %v", err)
	}
}

func TestStateFileBounds(t *testing.T) {
	path := statePath(t)
	// A file with more than the bounds allow.
	big := newStore()
	var ids []string
	for i := range 5 {
		id := big.mustCreate(fmt.Sprint("t", i)).ID
		ids = append(ids, id)
		for j := range 7 {
			must(big.addMessage(id, message{Role: roleAssistant, Kind: "text", Text: fmt.Sprint(i, ".", j)}))(t)
		}
	}
	must(big.addMessage(ids[0], message{Role: roleAssistant, Kind: "text", Text: "0.7"}))(t) // t0 most recently active
	p := newPersister(path, big, slog.New(slog.DiscardHandler))
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}

	small := newStore()
	small.maxInMemory, small.maxMessages = 3, 5
	q := newPersister(path, small, slog.New(slog.DiscardHandler))
	if !q.load() {
		t.Fatal("load = false, want true")
	}
	if !q.dirty() {
		t.Errorf("state cut to the bounds is not due to be saved")
	}
	if err := q.flush(); err != nil {
		t.Fatal(err)
	}
	var f struct {
		Threads []struct {
			ID       string
			Messages []message
		}
	}
	if err := json.Unmarshal(must(os.ReadFile(path))(t), &f); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, th := range f.Threads {
		var texts []string
		for _, m := range th.Messages {
			texts = append(texts, m.Text)
		}
		got = append(got, th.ID+": "+strings.Join(texts, " "))
	}
	want := []string{
		ids[4] + ": 4.2 4.3 4.4 4.5 4.6",
		ids[3] + ": 3.2 3.3 3.4 3.5 3.6",
		ids[2] + ": ",
		ids[1] + ": ",
		ids[0] + ": 0.3 0.4 0.5 0.6 0.7",
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("saved threads within the bounds (-want +got):\n%s", diff)
	}
	// The two least recently active went cold: their messages are in
	// their own files, and out of memory.
	for _, i := range []int{1, 2} {
		var c coldFile
		if err := json.Unmarshal(must(os.ReadFile(coldPath(coldDirFor(path), ids[i])))(t), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Messages) != 5 || c.Messages[4].Text != fmt.Sprint(i, ".6") {
			t.Errorf("cold file of thread %d holds %d messages, want its newest 5", i, len(c.Messages))
		}
		small.mu.Lock()
		th := small.threads[ids[i]]
		if !th.cold || !th.onDisk || th.msgs != nil {
			t.Errorf("thread %d: cold %v, onDisk %v, %d messages in memory; want cold, on disk and none", i, th.cold, th.onDisk, len(th.msgs))
		}
		small.mu.Unlock()
	}
	// The bounds keep working after the restore: a new thread sends the
	// least recently active in memory to disk, and a cold one comes back
	// with its messages when it is used.
	small.mustCreate("new")
	if err := q.flush(); err != nil {
		t.Fatal(err)
	}
	small.mu.Lock()
	if th := small.threads[ids[3]]; th == nil || !th.cold || !th.onDisk {
		t.Errorf("after one more thread, %s is not on disk", ids[3])
	}
	small.mu.Unlock()
	ms, _, err := small.messages(ids[1])
	if err != nil || len(ms) != 5 || ms[0].Text != "1.2" || ms[0].HTML == "" {
		t.Errorf("messages of a cold thread = %d, %v; want its 5 newest, rendered", len(ms), err)
	}
}

func TestSaveIsDebounced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := statePath(t)
		st := newStore()
		p := newPersister(path, st, slog.New(slog.DiscardHandler))
		st.changed = p.changed
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { p.run(stop); close(done) }()

		// saved returns the texts of the one thread in the file, or nil
		// without a file.
		saved := func() []string {
			t.Helper()
			synctest.Wait()
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				t.Fatal(err)
			}
			ts, err := decodeState(data)
			if err != nil || len(ts) != 1 {
				t.Fatalf("state file: %d threads, %v", len(ts), err)
			}
			texts := []string{}
			for _, m := range ts[0].msgs {
				texts = append(texts, m.Text)
			}
			return texts
		}
		add := func(id, text string) {
			must(st.addMessage(id, message{Role: roleAssistant, Kind: "text", Text: text}))(t)
		}

		id := st.mustCreate("t").ID
		time.Sleep(100 * time.Millisecond)
		add(id, "a")
		time.Sleep(399 * time.Millisecond)
		if got := saved(); got != nil {
			t.Errorf("after 499 ms: saved %q, want no file yet", got)
		}
		time.Sleep(time.Millisecond)
		if got, want := saved(), []string{"a"}; !slices.Equal(got, want) {
			t.Errorf("after 500 ms: saved %q, want %q", got, want)
		}

		st.setTyping(id, true) // not saved
		if p.dirty() {
			t.Errorf("typing made the state due to be saved")
		}
		add(id, "b")
		st.editMessage(id, ts0(t, st, id), "text", "", "a2")
		time.Sleep(499 * time.Millisecond)
		if got, want := saved(), []string{"a"}; !slices.Equal(got, want) {
			t.Errorf("499 ms after the next change: saved %q, want still %q", got, want)
		}
		time.Sleep(time.Millisecond)
		if got, want := saved(), []string{"a2", "b"}; !slices.Equal(got, want) {
			t.Errorf("500 ms after the next change: saved %q, want %q", got, want)
		}

		add(id, "c")
		close(stop) // the last change is saved at once
		<-done
		if got, want := saved(), []string{"a2", "b", "c"}; !slices.Equal(got, want) {
			t.Errorf("after stop: saved %q, want %q", got, want)
		}
	})
}

// ts0 returns the id of the first message of thread id.
func ts0(t *testing.T, st *store, id string) string {
	t.Helper()
	msgs, _, err := st.messages(id)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("messages of %s: %v, %v", id, msgs, err)
	}
	return msgs[0].ID
}

func TestSaveRetriesAfterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "not-yet")
		path := filepath.Join(dir, "web-chat.json")
		var logs syncBuffer
		st := newStore()
		p := newPersister(path, st, newTextLogger(&logs))
		st.changed = p.changed
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { p.run(stop); close(done) }()
		defer func() { close(stop); <-done }()

		st.mustCreate("t")
		time.Sleep(saveInterval)
		synctest.Wait()
		if got := strings.Count(logs.String(), "cannot save the threads"); got != 1 {
			t.Errorf("logged %d save errors, want 1:\n%s", got, logs.String())
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		time.Sleep(saveRetry)
		synctest.Wait()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("state file after the retry: %v", err)
		}
		if !strings.Contains(logs.String(), "saving the threads works again") {
			t.Errorf("logs lack the recovery:\n%s", logs.String())
		}
		if got := strings.Count(logs.String(), "cannot save the threads"); got != 1 {
			t.Errorf("logged %d save errors, want 1", got)
		}
	})
}

func TestConcurrentChangesWhileSaving(t *testing.T) {
	path := statePath(t)
	a := New(Options{Listen: "127.0.0.1:0", StateFile: path})
	t.Run("run", func(t *testing.T) {
		serve(t, a, nil)
		ctx := t.Context()
		var workers, flusher sync.WaitGroup
		stop := make(chan struct{})
		flusher.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := a.Flush(); err != nil {
					t.Errorf("Flush: %v", err)
					return
				}
			}
		})
		for w := range 4 {
			workers.Go(func() {
				id := a.st.mustCreate(fmt.Sprint("worker ", w)).ID
				for i := range 50 {
					h, err := a.Post(ctx, ref(id), channels.Message{Kind: channels.KindTool, Text: fmt.Sprint("step ", i)})
					if err != nil {
						t.Error(err)
						return
					}
					if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindTool, Text: fmt.Sprint("step ", i, " done")}); err != nil {
						t.Error(err)
						return
					}
					a.Typing(ctx, ref(id))
				}
			})
		}
		workers.Wait()
		close(stop)
		flusher.Wait()
	})
	// Run saved the last changes when it returned.
	b := New(Options{StateFile: path})
	if diff := gocmp.Diff(withoutTyping(dump(a.st)), dump(b.st)); diff != "" {
		t.Errorf("state after concurrent changes and a restart (-want +got):\n%s", diff)
	}
	if n := len(b.st.threadList()); n != 4 {
		t.Errorf("threads = %d, want 4", n)
	}
}

func TestFlushWithoutStateFile(t *testing.T) {
	a := New(Options{})
	a.st.mustCreate("t")
	if err := a.Flush(); err != nil {
		t.Errorf("Flush without a state file = %v, want nil", err)
	}
}

func FuzzDecodeState(f *testing.F) {
	st := newStore()
	id := st.mustCreate("seed").ID
	st.addMessage(id, message{Role: roleUser, Author: "ann", Kind: "text", Text: "hi"})
	st.addMessage(id, message{Role: roleAssistant, Author: "agent", Kind: "permission", Text: "ok?", Options: []option{{ID: "y", Label: "Yes"}}})
	p := newPersister("", st, slog.New(slog.DiscardHandler))
	p.mu.Lock()
	seed, _, _, _ := p.encodeLocked()
	p.mu.Unlock()
	f.Add(seed)
	f.Add([]byte(`{"version":1,"threads":[]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"threads":[{"id":"a","title":" x\ny ","messages":[{"id":"m","role":"system","kind":"notice","options":[]}]}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := decodeState(data)
		if err != nil {
			return
		}
		// What decodes, encodes and decodes to the same state.
		first := newStore()
		first.restore(ts)
		p := newPersister("", first, slog.New(slog.DiscardHandler))
		first.mu.Lock()
		first.markLocked(nil) // due to be saved
		first.mu.Unlock()
		p.mu.Lock()
		again, _, _, _ := p.encodeLocked()
		p.mu.Unlock()
		ts2, err := decodeState(again)
		if err != nil {
			t.Fatalf("decoding the re-encoded state: %v\n%s", err, again)
		}
		second := newStore()
		second.restore(ts2)
		if diff := gocmp.Diff(dump(first), dump(second)); diff != "" {
			t.Fatalf("state changed in a round trip (-first +second):\n%s", diff)
		}
	})
}

// TestStateFileKeepsToolDetailsAndSession: a tool line's details and
// the session line are back after a restart, each text of the details cut
// to maxSavedDetail bytes in the file (whole in memory until then).
func TestStateFileKeepsToolDetailsAndSession(t *testing.T) {
	path := statePath(t)
	ctx := t.Context()
	a := New(Options{StateFile: path})
	id := a.st.mustCreate("t").ID
	long := strings.Repeat("é", maxSavedDetail) // two bytes each: cut on a rune's start
	a.ToolDetail(ref(id), "call_1", channels.ToolDetail{Input: `{"cmd":"ls"}`, Output: long, Diffs: []channels.Diff{{Path: "a.go", Old: "x", New: "y"}}})
	h := must(a.Post(ctx, ref(id), channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · done"}))(t)
	if m := must(a.st.message(id, string(h.ID)))(t); m.Tool == nil || m.Tool.Output != long {
		t.Fatalf("tool line = %+v, want its whole details in memory", m)
	}
	a.ShowSession(ref(id), channels.SessionInfo{Agent: "demo", Model: "Fast", Mode: "Ask"})
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	b := New(Options{StateFile: path})
	m := must(b.st.message(id, string(h.ID)))(t)
	if m.Tool == nil || m.Tool.Input != `{"cmd":"ls"}` || len(m.Tool.Diffs) != 1 || m.Tool.Diffs[0].New != "y" {
		t.Fatalf("restored tool line = %+v, want its details", m)
	}
	if out := m.Tool.Output; !utf8.ValidString(out) || !strings.HasPrefix(out, strings.Repeat("é", maxSavedDetail/2)) || !strings.Contains(out, "more bytes, not kept after a restart") || len(out) > maxSavedDetail+100 {
		t.Errorf("restored output (%d bytes) = %.80q…, want the first %d bytes and a word on the rest", len(out), out, maxSavedDetail)
	}
	if s := b.st.session(id); s == nil || s.Agent != "demo" || s.Model != "Fast" || s.Mode != "Ask" {
		t.Errorf("restored session line = %+v, want demo · Fast · Ask", s)
	}
}
