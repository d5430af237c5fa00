package discord

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// Messages written to a bound thread while the gateway connection was
// down, and Discord then refused to resume the session (a fresh
// IDENTIFY: they are not sent to the new session), are read back and
// answered after the new READY, in order and each once; nothing handled
// before the gap is answered again, even where its seen mark lags (the
// gap began before it was written), and a live message after them is
// answered as usual.
func TestCatchUpAfterANewSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	leaks := channeltest.LeakCheck(t)
	t.Cleanup(leaks)
	f := newFake(t)
	dir := t.TempDir()
	rule := session.AccessRule{Guilds: []string{f.guild}, Users: []string{ann.ID}}
	n := startNode(t, f, dir, rule, session.CatchUp{Window: time.Hour})
	ctx := testCtx(t)
	th := f.say(ann, f.channel, "echo a0", true)
	ref := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: th}
	n.waitEnd(t, f, ref)
	f.say(ann, th, "echo a1", false)
	n.waitEnd(t, f, ref)
	before := len(f.botMessages(th))

	// The gap: the connection drops, and Discord cannot be reached until
	// the messages below were sent; then it refuses the resume.
	f.mu.Lock()
	f.gatewayDown, f.refuseResumes = true, 1
	identifies := f.identifies
	f.mu.Unlock()
	f.dropConnection()
	f.waitFor(ctx, "the connection closed", func() bool { return f.conn == nil })
	// The mark of a1 is as if not written yet: the catch-up reads a1
	// again, which the router handled already.
	if err := n.st.MarkSeen(ctx, ref, channels.MessageID(th), time.Now()); err != nil {
		t.Fatal(err)
	}
	f.say(ann, th, "echo g1", false)
	f.say(bob, th, "echo from bob", false) // refused, as live
	f.say(ann, th, "echo g2", false)
	f.mu.Lock()
	f.gatewayDown = false
	f.mu.Unlock()
	f.waitFor(ctx, "a new session", func() bool { return f.identifies == identifies+1 && f.conn != nil && f.conn.live })

	n.waitEnd(t, f, ref)
	n.waitEnd(t, f, ref)
	f.say(ann, th, "echo after", false)
	n.waitEnd(t, f, ref)
	if got := answerText(since(f, th, before)); got != "g1 g2 after" {
		t.Errorf("answers after the gap = %q, want \"g1 g2 after\" (each once, in order)\n%s", got, dumpBot(f, th))
	}
	notices := 0
	for _, m := range since(f, th, before) {
		if strings.Contains(m.Content, "while the gateway was down") {
			notices++
			if !strings.Contains(m.Content, "the 2 messages") {
				t.Errorf("the catch-up's notice = %q, want it to count the 2 messages of the gap", m.Content)
			}
		}
	}
	if notices != 1 {
		t.Errorf("%d catch-up notices, want 1\n%s", notices, dumpBot(f, th))
	}
	n.stop(t)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.invalidated != 1 || f.resumes != 0 {
		t.Errorf("invalidated, resumed = %d, %d; want the one resume refused", f.invalidated, f.resumes)
	}
	if len(f.violations) > 0 {
		t.Errorf("fake discord saw protocol misuse: %q", f.violations)
	}
}

// A thread whose first message was taken, and whose binding was not
// written when the gateway stopped (its agent was still starting: a
// crash then leaves the same), is caught up on at the next start: what
// people wrote there meanwhile is answered, with the real store.
func TestCatchUpOfAThreadNotBoundYet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	leaks := channeltest.LeakCheck(t)
	t.Cleanup(leaks)
	f := newFake(t)
	dir := t.TempDir()
	rule := session.AccessRule{Guilds: []string{f.guild}, Users: []string{ann.ID}}
	cu := session.CatchUp{Window: time.Hour}
	ctx := testCtx(t)

	// An agent that never answers initialize: no session, no binding.
	first := startNodeWith(t, f, dir, rule, cu, agent.Spec{Name: "demo", Command: []string{"sleep", "600"}})
	th := f.say(ann, f.channel, "echo first", true)
	ref := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: th}
	waitUntil(t, ctx, "the first message marked seen", func() bool {
		_, ok, err := first.st.LastSeen(ctx, ref)
		return ok && err == nil
	})
	first.stop(t)

	f.say(ann, th, "echo while down", false)
	before := len(f.botMessages(th))
	second := startNode(t, f, dir, rule, cu)
	second.waitEnd(t, f, ref)
	second.stop(t)
	// The agent was asked it (within the thread's earlier messages, a new
	// session's first prompt: the demo agent does not echo that), after
	// the thread was told.
	var told bool
	for _, m := range since(f, th, before) {
		told = told || strings.Contains(m.Content, "Answering the message sent here while the gateway was down")
	}
	if !told {
		t.Errorf("the thread was not told of the catch-up\n%s", dumpBot(f, th))
	}
	if n := promptsWith(t, filepath.Join(dir, "events"), "echo while down"); n != 1 {
		t.Errorf("%d prompts carry the message sent while the gateway was down, want 1", n)
	}
}

// promptsWith counts the session/prompt requests in the event logs under
// dir whose text holds s.
func promptsWith(t *testing.T, dir, s string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, `"session/prompt"`) && strings.Contains(line, s) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitUntil polls cond until it holds, or fails t when ctx ends first.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
