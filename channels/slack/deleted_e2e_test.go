package slack

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest/e2e"
	"github.com/acpgw/gateway/session"
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

// What the suite's DeleteEndsThread does not show, on Slack: a thread
// whose root with replies becomes a tombstone ends for good (its agent
// stops, its binding goes, its workspace is removed); a reply deleted
// changes nothing. A channel archived stops its threads' agents and
// removes their workspaces, their sessions kept; a channel deleted ends
// each of its threads.
func TestDeleteEndsSlackThread(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	e2e.LeakCheck(t)
	d := newDriver(t, fakeOptions{})
	f := d.f
	dir := t.TempDir()
	m, err := workspace.New(workspace.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	g := e2e.Start(t, d, e2e.Config{
		Dir:            dir,
		AgentEnv:       demoAgentEnv,
		Access:         session.AccessRule{Users: []string{ann}},
		Workspaces:     m,
		AgentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: workspace.Dir} },
	})
	tctx := g.Ctx()

	start := func(channel, text string) (channels.ThreadRef, workspace.Info) {
		t.Helper()
		s := f.mustSay(tctx, sayOptions{user: ann, channel: channel, text: text, mention: true})
		th := ref(channel, s.ts)
		g.WaitEnd(th)
		info, ok := m.Info(th)
		if !ok || info.Mode != workspace.Dir {
			t.Fatalf("the workspace of %v = %+v, %v; want a directory", th, info, ok)
		}
		return th, info
	}
	bound := func(th channels.ThreadRef) bool {
		t.Helper()
		_, ok, err := g.Store.Binding(t.Context(), th)
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

	replied, rpi := start(fakeChannel, "echo a reply deleted")
	tomb, ti := start(fakeChannel, "echo root with replies deleted")
	other, oi := start("C0OTHER", "echo channel archived")

	// A reply deleted: the thread goes on, the same session.
	reply := f.mustSay(tctx, sayOptions{user: ann, thread: replied.Thread, text: "echo a reply"})
	g.WaitEnd(replied)
	before, _, _ := g.Store.Binding(t.Context(), replied)
	if err := f.deleteMessage(tctx, fakeChannel, reply.ts, false); err != nil {
		t.Fatal(err)
	}
	f.mustSay(tctx, sayOptions{user: ann, thread: replied.Thread, text: "echo still here"})
	g.WaitEnd(replied)
	if after, ok, _ := g.Store.Binding(t.Context(), replied); !ok || after.SessionID != before.SessionID {
		t.Errorf("after a reply was deleted the binding is %+v, %v; want session %s", after, ok, before.SessionID)
	}

	if err := f.deleteMessage(tctx, fakeChannel, tomb.Thread, true); err != nil {
		t.Fatal(err)
	}
	g.WaitLog("deleted thread's workspace removed", tomb)
	if bound(tomb) {
		t.Error("the thread whose root became a tombstone is still bound")
	}
	removed(tomb, ti)

	if err := f.channelEvent(tctx, "channel_archived", "C0OTHER"); err != nil {
		t.Fatal(err)
	}
	g.WaitLog("archived thread's workspace removed", other)
	if !bound(other) {
		t.Error("a thread of an archived channel lost its binding")
	}
	removed(other, oi)

	if err := f.channelEvent(tctx, "channel_deleted", fakeChannel); err != nil {
		t.Fatal(err)
	}
	g.WaitLog("deleted thread's workspace removed", replied)
	if bound(replied) {
		t.Error("a thread of the deleted channel is still bound")
	}
	removed(replied, rpi)
	if !bound(other) {
		t.Error("deleting one channel forgot a thread of another")
	}
}
