package jsstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/internal/golden"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
)

var update = flag.Bool("update", false, "rewrite the golden file of the current wire format in testdata")

// The golden files hold, per bucket key and per stream message, the bytes
// a version of the store wrote for goldenData: wire-v0.txtar by the code
// before the stored records had wire types of their own (never to be
// regenerated), and currentGolden by this code (-update rewrites it).
const currentGolden = "wire-v1.txtar"

// goldenCluster names the buckets and streams of the golden files.
const goldenCluster = "golden"

var (
	gThread  = channels.ThreadRef{Platform: "discord", Channel: "c/1", Thread: "t1"}
	gThread2 = channels.ThreadRef{Platform: "slack", Channel: "C2", Thread: "1700000000.000100"}
	gGone    = channels.ThreadRef{Platform: "discord", Channel: "c/1", Thread: "gone"}
	gAt      = time.UnixMilli(1_700_000_000_123).UTC()
)

// golden is what goldenData writes, as the store reads it back.
type goldenSet struct {
	bindings []store.Binding
	prompts  []store.Prompt
	turns    []store.Turn
	running  []store.RunningTurn
	seen     []store.Seen // the marks of bound threads
	edgeSeen []store.Seen // Store.SeenSince and jsstore.SeenSince("discord"): unbound ones too
	choices  map[string]string
	hold     store.BudgetHold
	open     []store.OpenMessage
	entries  []store.Entry
}

func goldenValues() goldenSet {
	at := func(ms int64) time.Time { return gAt.Add(time.Duration(ms) * time.Millisecond) }
	b1 := store.Binding{Thread: gThread, Agent: "claude", SessionID: "sess-1", Cwd: "/work/a", Title: "Fix the build", Created: at(0), Updated: at(5)}
	b2 := store.Binding{Thread: gThread2, Agent: "codex", SessionID: "sess-2", Created: at(1), Updated: at(1)}
	opts := []store.PromptOption{{ID: "allow", Name: "Allow", Kind: "allow_once"}, {ID: "deny", Name: "Deny", Kind: "reject_once"}}
	prompt := store.TurnPrompt{
		ID: "m9", Author: channels.Author{ID: "u1", Name: "Ann", Roles: []string{"dev", "ops"}},
		Text: "Fix <it> & push", Space: "g1", Time: at(20),
		Files: []channels.File{{Name: "a.txt", ContentType: "text/plain", Size: 3, URL: "https://x/a.txt", Text: "abc"},
			{Name: "p.png", ContentType: "image/png", Size: 2, Data: []byte{0x89, 0x50}}, {Name: "big.bin", Skipped: "too big"}},
	}
	return goldenSet{
		bindings: []store.Binding{b1, b2},
		prompts: []store.Prompt{
			{ID: "p1", Thread: gThread, SessionID: "sess-1", RequestID: "7", ToolCallID: "c1", Title: "Edit main.go", Kind: "edit",
				Options: opts, MessageID: "m1", Status: store.PromptPending, CreatedAt: at(10), ExpiresAt: at(60_000)},
			{ID: "p2", Thread: gThread2, SessionID: "sess-2", RequestID: "8", Title: "Run ls", Kind: "execute",
				Options: opts, Status: store.PromptAnswered, Chosen: "allow", ChosenBy: "u1", CreatedAt: at(11), ResolvedAt: at(12)},
		},
		turns: []store.Turn{
			{Thread: gThread, SessionID: "sess-1", Seq: 1, StopReason: "end_turn", Started: at(20), Ended: at(30),
				Used: 1200, Size: 200000, UsedKnown: true, SizeKnown: true, Cost: 0.25, Currency: "USD", CostKnown: true, PromptChars: 15, ReplyChars: 40},
			{Thread: gThread, SessionID: "sess-1", Seq: 2, Error: "agent exited", Started: at(40), Ended: at(50), PromptChars: 3},
		},
		running: []store.RunningTurn{
			{Thread: gThread, SessionID: "sess-1", Started: at(20), Prompt: prompt, Attempts: 1},
			{Thread: gThread2, SessionID: "sess-2", Started: at(21)},
		},
		seen: []store.Seen{{Binding: b1, MessageID: "m9", At: at(20)}},
		edgeSeen: []store.Seen{
			{Binding: store.Binding{Thread: channels.ThreadRef{Platform: "discord", Channel: "c/1", Thread: "unbound"}}, MessageID: "m10", At: at(25)},
			{Binding: b1, MessageID: "m9", At: at(20)},
		},
		choices: map[string]string{"model": "opus", "mode": "code"},
		hold:    store.BudgetHold{Thread: gThread, Budget: "channel", Reached: at(30)},
		open: []store.OpenMessage{
			{Key: "k1", ID: "m11", Lines: []store.OpenLine{{Key: "c1", Text: "⏳ ls"}}},
			{Key: "k2", ID: "m12", Card: true, Lines: []store.OpenLine{{Key: "c2", Text: "a"}, {Key: "c3", Text: "b"}}},
		},
		entries: []store.Entry{
			{Seq: 0, Time: at(20), Updated: at(20), Body: store.Message{Role: store.RoleUser, Text: "Fix <it> & push"}},
			{Seq: 1, Time: at(21), Updated: at(22), Body: store.Thought{Text: "Hmm", Length: 9}},
			{Seq: 2, Time: at(22), Updated: at(23), Body: store.ToolCall{ID: "c1", Title: "Edit", Kind: "edit", Status: projector.StatusCompleted,
				Input: json.RawMessage(`{"path":"a.go"}`), Output: json.RawMessage(`{"ok":true}`),
				Content:   []projector.ToolContent{{Type: "diff", Path: "a.go", OldText: "a", NewText: "b"}, {Type: "terminal", TerminalID: "t1"}},
				Locations: []projector.Location{{Path: "a.go", Line: 3}}}},
			{Seq: 3, Time: at(23), Updated: at(24), Body: store.PermissionEntry{RequestID: "7", ToolCallID: "c1", Title: "Edit", Options: opts,
				Chosen: "allow", Asked: at(23), Answered: at(24)}},
			{Seq: 4, Time: at(24), Updated: at(24), Body: store.Plan{Entries: []projector.PlanEntry{{Content: "a", Priority: "high", Status: "pending"}}}},
			{Seq: 5, Time: at(25), Updated: at(25), Body: store.Meta{Modes: []store.Mode{{ID: "ask", Name: "Ask", Description: "asks"}}, CurrentMode: "ask",
				Models: []store.Model{{ID: "opus", Name: "Opus"}}, CurrentModel: "opus",
				Commands: []projector.Command{{Name: "init", Description: "set up"}}, Config: []projector.ConfigOption{{ID: "effort", Name: "Effort", Value: "high"}}}},
			{Seq: 6, Time: at(26), Updated: at(26), Body: store.ModeChange{Previous: "ask", New: "code"}},
			{Seq: 7, Time: at(27), Updated: at(28), Body: store.QuestionEntry{RequestID: "9", Message: "Which color?", Mode: "form", Fields: []string{"color"},
				Action: "accept", Content: json.RawMessage(`{"color":"green"}`), Asked: at(27), Answered: at(28)}},
			{Seq: 8, Time: at(29), Updated: at(29), Body: store.Message{Role: store.RoleAssistant, Text: "Done.", Length: 12}},
		},
	}
}

// writeGolden writes goldenValues through s, as the gateway would.
func writeGolden(t *testing.T, ctx context.Context, s *jsstore.Store) {
	t.Helper()
	g := goldenValues()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range g.bindings {
		must(s.PutBinding(ctx, b))
	}
	must(s.AttachSession(ctx, g.bindings[0]))
	must(s.PutBinding(ctx, store.Binding{Thread: gGone, Agent: "claude", SessionID: "sess-gone", Created: gAt, Updated: gAt}))
	must(s.DeleteBinding(ctx, gGone))
	for _, p := range g.prompts {
		p2 := p
		p2.Status, p2.Chosen, p2.ChosenBy, p2.ResolvedAt, p2.MessageID = store.PromptPending, "", "", time.Time{}, ""
		must(s.AddPrompt(ctx, p2))
		if p.MessageID != "" {
			must(s.SetPromptMessage(ctx, p.ID, p.MessageID))
		}
		if p.Status != store.PromptPending {
			if _, err := s.ResolvePrompt(ctx, p.ID, p.Status, p.Chosen, p.ChosenBy, p.ResolvedAt); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tr := range g.turns {
		must(s.AddTurn(ctx, tr))
	}
	for _, r := range g.running {
		must(s.MarkTurnRunning(ctx, r))
	}
	must(s.MarkSeen(ctx, gThread, "m9", g.seen[0].At))
	must(s.MarkSeen(ctx, g.edgeSeen[0].Thread, "m10", g.edgeSeen[0].At))
	for k, v := range g.choices {
		must(s.SetChoice(ctx, gThread, k, v))
	}
	must(s.PutBudgetHold(ctx, g.hold))
	must(s.SetOpenMessages(ctx, gThread, g.open))
	must(s.SaveEntries(ctx, "sess-1", g.entries))
}

// checkGolden reads back through s what writeGolden wrote.
func checkGolden(t *testing.T, ctx context.Context, js jetstream.JetStream, s *jsstore.Store) {
	t.Helper()
	g := goldenValues()
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	bs, err := s.Bindings(ctx)
	check("Bindings", bs, g.bindings, err)
	b, ok, err := s.Binding(ctx, gThread)
	check("Binding", b, g.bindings[0], err)
	if !ok {
		t.Errorf("Binding(%s): none", gThread)
	}
	for _, want := range g.prompts {
		p, _, err := s.Prompt(ctx, want.ID)
		check("Prompt "+want.ID, p, want, err)
	}
	ps, err := s.PendingPrompts(ctx)
	check("PendingPrompts", ps, g.prompts[:1], err)
	ts, err := s.Turns(ctx, "sess-1")
	check("Turns", ts, g.turns, err)
	sp, err := s.ChannelSpend(ctx, gThread.Platform, gThread.Channel, time.Time{})
	check("ChannelSpend", sp, store.Spend{Turns: 2, Cost: 0.25, CostKnown: true}, err)
	rs, err := s.RunningTurns(ctx)
	check("RunningTurns", rs, g.running, err)
	seen, err := s.SeenSince(ctx, time.Time{})
	check("SeenSince", seen, g.edgeSeen, err)
	edge, err := jsstore.SeenSince(ctx, js, goldenCluster, "discord", time.Time{})
	check("jsstore.SeenSince", edge, g.edgeSeen, err)
	cs, err := s.Choices(ctx, gThread)
	check("Choices", cs, g.choices, err)
	h, _, err := s.BudgetHoldOf(ctx, gThread)
	check("BudgetHoldOf", h, g.hold, err)
	om, err := s.OpenMessages(ctx, gThread)
	check("OpenMessages", om, g.open, err)
	es, err := s.Entries(ctx, "sess-1")
	check("Entries", es, g.entries, err)
	gone, err := s.SessionGone(ctx, "sess-gone")
	check("SessionGone(sess-gone)", gone, true, err)
	gone, err = s.SessionGone(ctx, "sess-1")
	check("SessionGone(sess-1)", gone, false, err)
	// The attached session is claimed by its thread: another cannot take it.
	err = s.AttachSession(ctx, store.Binding{Thread: gThread2, SessionID: "sess-1"})
	if !errors.Is(err, store.ErrSessionTaken) {
		t.Errorf("AttachSession of a claimed session = %v, want ErrSessionTaken", err)
	}
}

// goldenJS opens a store of goldenCluster on a fresh node.
func goldenJS(t *testing.T) (jetstream.JetStream, *jsstore.Store) {
	t.Helper()
	n := clustertest.StartNode(t)
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: n.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsstore.Open(t.Context(), js, jsstore.Options{Cluster: goldenCluster})
	if err != nil {
		t.Fatal(err)
	}
	return js, s
}

var (
	goldenBuckets = []string{"bindings", "prompts", "choices", "budget_holds", "running", "seen", "open", "sessions"}
	goldenStreams = []string{"turns", "entries"}
)

// dump lists what the buckets and streams of goldenCluster hold: a file
// "<bucket>/<key>" per key, "<stream>/<n> <subject>" per message.
func dump(t *testing.T, ctx context.Context, js jetstream.JetStream) *golden.Archive {
	t.Helper()
	fs := golden.Parse("")
	for _, name := range goldenBuckets {
		kv, err := js.KeyValue(ctx, goldenCluster+"_"+name)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := kv.ListKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var sorted []string
		for k := range keys.Keys() {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			e, err := kv.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			fs.Set(name+"/"+k, string(e.Value())+"\n")
		}
	}
	for _, name := range goldenStreams {
		st, err := js.Stream(ctx, goldenCluster+"_"+name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			for k := range m.Header {
				// The batch a message was stored in is not the record's.
				if !strings.HasPrefix(k, "Nats-Batch-") {
					t.Fatalf("stream %s message %d has header %s: the golden files keep none", name, seq, k)
				}
			}
			fs.Set(fmt.Sprintf("%s/%d %s", name, seq-info.State.FirstSeq+1, m.Subject), string(m.Data)+"\n")
		}
	}
	return fs
}

// load writes the records of a golden file into the buckets and streams
// of goldenCluster, as the version that wrote them left them.
func load(t *testing.T, ctx context.Context, js jetstream.JetStream, a *golden.Archive) {
	t.Helper()
	for _, name := range a.Names() {
		dir, rest, _ := strings.Cut(name, "/")
		data := []byte(strings.TrimSuffix(a.Section(name), "\n"))
		if slices.Contains(goldenStreams, dir) {
			_, subject, _ := strings.Cut(rest, " ")
			if _, err := js.Publish(ctx, subject, data); err != nil {
				t.Fatal(err)
			}
			continue
		}
		kv, err := js.KeyValue(ctx, goldenCluster+"_"+dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := kv.Put(ctx, rest, data); err != nil {
			t.Fatal(err)
		}
	}
}

func readGolden(t *testing.T, name string) *golden.Archive {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	a := golden.Parse(string(data))
	if len(a.Names()) == 0 {
		t.Fatalf("%s holds no records", name)
	}
	return a
}

// TestGoldenWrite writes goldenData and compares what the buckets and
// streams hold with currentGolden (-update rewrites it).
func TestGoldenWrite(t *testing.T) {
	ctx := t.Context()
	js, s := goldenJS(t)
	writeGolden(t, ctx, s)
	got := dump(t, ctx, js)
	path := filepath.Join("testdata", currentGolden)
	if *update {
		got.Comment = "What the JetStream store wrote for goldenValues (golden_test.go): a section\n" +
			"<bucket>/<key> per key, \"<stream>/<n> <subject>\" per message.\n"
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got.Format()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGolden(t, currentGolden)
	if diff := cmp.Diff(volatile(want), volatile(got)); diff != "" {
		t.Errorf("what the store wrote differs from %s (-want +got); a change of the stored format needs a new version:\n%s", path, diff)
	}
}

// volatile blanks what differs between runs: the time of a session's
// claim (AttachSession and DeleteBinding take the clock's).
func volatile(a *golden.Archive) map[string]string {
	out := map[string]string{}
	for _, name := range a.Names() {
		data := []byte(a.Section(name))
		if strings.HasPrefix(name, "sessions/") {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err == nil {
				for _, k := range []string{"at", "atMs"} {
					if _, ok := m[k]; ok {
						m[k] = "(now)"
					}
				}
				data, _ = json.Marshal(m)
			}
		}
		out[name] = string(data)
	}
	return out
}

// TestGoldenRead loads each golden file into a fresh node and reads every
// record back through the store.
func TestGoldenRead(t *testing.T) {
	for _, name := range []string{"wire-v0.txtar", currentGolden} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			js, s := goldenJS(t)
			load(t, ctx, js, readGolden(t, name))
			checkGolden(t, ctx, js, s)
		})
	}
}

// TestGoldenRoundTrip reads back what this code writes.
func TestGoldenRoundTrip(t *testing.T) {
	ctx := t.Context()
	js, s := goldenJS(t)
	writeGolden(t, ctx, s)
	checkGolden(t, ctx, js, s)
}
