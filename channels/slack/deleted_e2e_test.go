package slack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/workspace"
)

// deleteMessage has a person delete message ts of channel: Slack sends
// message_deleted with the message as it was; a thread's root that has
// replies becomes a tombstone instead (message_changed), when tombstone.
func (f *fakeSlack) deleteMessage(ctx context.Context, channel, ts string, tombstone bool) error {
	f.mu.Lock()
	m := f.msgs[channel+"/"+ts]
	prev := map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS}
	if m.ThreadTS != "" {
		prev["thread_ts"] = m.ThreadTS
	}
	now := f.newTSLocked()
	ev := map[string]any{"type": "message", "subtype": "message_deleted", "hidden": true, "channel": channel, "channel_type": "channel",
		"ts": now, "event_ts": now, "deleted_ts": ts, "previous_message": prev}
	if tombstone {
		m.Text = "This message was deleted."
		ev = map[string]any{"type": "message", "subtype": "message_changed", "hidden": true, "channel": channel, "channel_type": "channel",
			"ts": now, "event_ts": now, "previous_message": prev,
			"message": map[string]any{"type": "message", "subtype": "tombstone", "user": "USLACKBOT", "text": m.Text, "ts": ts, "thread_ts": ts, "reply_count": 1}}
	} else {
		delete(f.msgs, channel+"/"+ts)
	}
	env := f.eventEnvelopeLocked(ev, "", 0)
	f.mu.Unlock()
	return f.send(ctx, env)
}

// channelEvent sends a channel event (channel_deleted, channel_archived,
// group_deleted, group_archived) as Slack does: it names only the
// channel (and for an archive who did it).
func (f *fakeSlack) channelEvent(ctx context.Context, kind, channel string) error {
	f.mu.Lock()
	ev := map[string]any{"type": kind, "channel": channel, "event_ts": fmt.Sprintf("1700000400.%06d", f.nextLocked())}
	if strings.HasSuffix(kind, "_archived") {
		ev["user"] = ann
	}
	env := f.eventEnvelopeLocked(ev, "", 0)
	f.mu.Unlock()
	return f.send(ctx, env)
}

// logWatch hands each log record's message and "thread" attribute to a
// channel, for a test to wait on what the gateway did on a goroutine of
// its own.
type logWatch struct{ ch chan string }

func (w logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w logWatch) Handle(ctx context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "thread" {
			line += " " + a.Value.String()
		}
		return true
	})
	select {
	case w.ch <- line:
	default:
	}
	return nil
}
func (w logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w logWatch) WithGroup(string) slog.Handler      { return w }

// wait returns once a logged line starts with prefix and names thread.
func (w logWatch) wait(t *testing.T, ctx context.Context, prefix string, thread channels.ThreadRef) {
	t.Helper()
	for {
		select {
		case line := <-w.ch:
			if strings.HasPrefix(line, prefix) && strings.Contains(line, thread.String()) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("never logged %q for %v", prefix, thread)
		}
	}
}

// TestDeleteEndsThread: a Slack thread whose root message is deleted
// (message_deleted, or a tombstone for a root with replies) ends for
// good: its agent stops, its binding goes and its workspace is removed;
// a reply deleted changes nothing. A channel archived stops its threads'
// agents and removes their workspaces, their sessions kept; a channel
// deleted ends each of its threads.
func TestDeleteEndsThread(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	dir := t.TempDir()
	f := newFake(t, fakeOptions{})
	leaks := channeltest.LeakCheck(t)
	f.addUser(ann, "Ann")
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := workspace.New(workspace.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a := f.adapter(t, Options{KnownThread: func(ctx context.Context, th channels.ThreadRef) bool {
		_, ok, err := st.Binding(ctx, th)
		return ok && err == nil
	}})
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	ends := sessiontest.NewTurnEnds()
	logs := logWatch{ch: make(chan string, 256)}
	spec := sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv)
	r := session.New(session.Options{
		Store:          st,
		EventLogDir:    filepath.Join(dir, "events"),
		Agent:          func(string) (agent.Spec, bool) { return spec, true },
		Cwd:            dir,
		Access:         map[string]session.AccessRule{Platform: {Workspaces: []string{f.team}, Users: []string{ann}}},
		Logger:         slog.New(logs),
		OnTurnEnd:      ends.Record,
		Workspaces:     m,
		AgentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: workspace.Dir} },
	})
	r.Add(Platform, a)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	wg.Go(func() { _ = r.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		st.Close()
		leaks()
	})
	tctx, tcancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer tcancel()

	start := func(channel, text string) (channels.ThreadRef, workspace.Info) {
		t.Helper()
		s := f.mustSay(tctx, sayOptions{user: ann, channel: channel, text: text, mention: true})
		th := ref(channel, s.ts)
		if _, ok := ends.Next(tctx, th); !ok {
			t.Fatalf("no turn end in %v", th)
		}
		info, ok := m.Info(th)
		if !ok || info.Mode != workspace.Dir {
			t.Fatalf("the workspace of %v = %+v, %v; want a directory", th, info, ok)
		}
		return th, info
	}
	bound := func(th channels.ThreadRef) bool {
		t.Helper()
		_, ok, err := st.Binding(t.Context(), th)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	removed := func(th channels.ThreadRef, info workspace.Info) {
		t.Helper()
		if _, err := os.Stat(info.Path); !os.IsNotExist(err) {
			t.Errorf("the workspace %s of %v is still there (%v)", info.Path, th, err)
		}
	}

	rooted, ri := start(fakeChannel, "echo root deleted")
	replied, rpi := start(fakeChannel, "echo a reply deleted")
	tomb, ti := start(fakeChannel, "echo root with replies deleted")
	other, oi := start("C0OTHER", "echo channel archived")

	// A reply deleted: the thread goes on, the same session.
	reply := f.mustSay(tctx, sayOptions{user: ann, thread: replied.Thread, text: "echo a reply"})
	ends.Next(tctx, replied)
	before, _, _ := st.Binding(t.Context(), replied)
	if err := f.deleteMessage(tctx, fakeChannel, reply.ts, false); err != nil {
		t.Fatal(err)
	}
	f.mustSay(tctx, sayOptions{user: ann, thread: replied.Thread, text: "echo still here"})
	if _, ok := ends.Next(tctx, replied); !ok {
		t.Fatal("no turn end after a reply was deleted")
	}
	if after, ok, _ := st.Binding(t.Context(), replied); !ok || after.SessionID != before.SessionID {
		t.Errorf("after a reply was deleted the binding is %+v, %v; want session %s", after, ok, before.SessionID)
	}

	if err := f.deleteMessage(tctx, fakeChannel, rooted.Thread, false); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, tctx, "deleted thread's workspace removed", rooted)
	if bound(rooted) {
		t.Error("the thread whose root was deleted is still bound")
	}
	removed(rooted, ri)

	if err := f.deleteMessage(tctx, fakeChannel, tomb.Thread, true); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, tctx, "deleted thread's workspace removed", tomb)
	if bound(tomb) {
		t.Error("the thread whose root became a tombstone is still bound")
	}
	removed(tomb, ti)

	if err := f.channelEvent(tctx, "channel_archived", "C0OTHER"); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, tctx, "archived thread's workspace removed", other)
	if !bound(other) {
		t.Error("a thread of an archived channel lost its binding")
	}
	removed(other, oi)

	if err := f.channelEvent(tctx, "channel_deleted", fakeChannel); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, tctx, "deleted thread's workspace removed", replied)
	if bound(replied) {
		t.Error("a thread of the deleted channel is still bound")
	}
	removed(replied, rpi)
	if !bound(other) {
		t.Error("deleting one channel forgot a thread of another")
	}
}
