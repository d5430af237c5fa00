// Package storetest is the contract every [store.Backend] keeps: the
// behaviour the gateway relies on, run against a fresh, empty backend per
// test (the SQLite store in package store, the JetStream store in
// cluster/jsstore).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

// Open returns a fresh, empty backend that lives as long as t.
type Open func(t *testing.T) store.Backend

// Run runs the whole contract, each part a subtest with its own backend.
func Run(t *testing.T, open Open) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, context.Context, store.Backend)
	}{
		{"Bindings", testBindings},
		{"ChannelBindings", testChannelBindings},
		{"Prompts", testPrompts},
		{"ResolveOnce", testResolveOnce},
		{"ExpireAll", testExpireAll},
		{"Turns", testTurns},
		{"Spend", testSpend},
		{"BudgetHolds", testBudgetHolds},
		{"Choices", testChoices},
		{"RunningTurns", testRunningTurns},
		{"OpenMessages", testOpenMessages},
		{"Seen", testSeen},
		{"Entries", testEntries},
		{"DeleteForgetsTheThread", testDeleteForgetsTheThread},
		{"AttachSession", testAttachSession},
		{"AttachSessionRace", testAttachSessionRace},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			c.f(t, ctx, open(t))
		})
	}
}

func ref(channel, thread string) channels.ThreadRef {
	return channels.ThreadRef{Platform: "web", Channel: channel, Thread: thread}
}

func ms(n int64) time.Time { return time.UnixMilli(n).UTC() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testBindings(t *testing.T, ctx context.Context, s store.Backend) {
	a := ref("c", "a/odd id.with:chars")
	if _, ok, err := s.Binding(ctx, a); ok || err != nil {
		t.Fatalf("binding before any: %v %v", ok, err)
	}
	if bs, err := s.Bindings(ctx); err != nil || len(bs) != 0 {
		t.Fatalf("bindings before any: %+v %v", bs, err)
	}
	b := store.Binding{Thread: a, Agent: "demo", SessionID: "s1", Cwd: "/w", Title: "t", Created: ms(1000), Updated: ms(2000)}
	must(t, s.PutBinding(ctx, b))
	got, ok, err := s.Binding(ctx, a)
	if err != nil || !ok || !reflect.DeepEqual(got, b) {
		t.Fatalf("binding = %+v %v %v, want %+v", got, ok, err, b)
	}
	// An update keeps the creation time.
	b2 := b
	b2.SessionID, b2.Created, b2.Updated = "s2", ms(9000), ms(3000)
	must(t, s.PutBinding(ctx, b2))
	got, _, _ = s.Binding(ctx, a)
	if got.SessionID != "s2" || !got.Created.Equal(ms(1000)) || !got.Updated.Equal(ms(3000)) {
		t.Fatalf("updated binding = %+v", got)
	}
	// Zero times are filled in.
	c := store.Binding{Thread: ref("b", "x"), Agent: "demo", SessionID: "s3"}
	must(t, s.PutBinding(ctx, c))
	got, _, _ = s.Binding(ctx, c.Thread)
	if got.Created.IsZero() || !got.Created.Equal(got.Updated) {
		t.Fatalf("binding without times = %+v", got)
	}
	must(t, s.PutBinding(ctx, store.Binding{Thread: channels.ThreadRef{Platform: "discord", Channel: "z", Thread: "1"}, Agent: "demo", SessionID: "s4"}))
	bs, err := s.Bindings(ctx)
	must(t, err)
	var order []string
	for _, b := range bs {
		order = append(order, b.Thread.String())
	}
	want := []string{"discord/z/1", "web/b/x", "web/c/a/odd id.with:chars"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("bindings in order %q, want %q", order, want)
	}
	must(t, s.DeleteBinding(ctx, a))
	must(t, s.DeleteBinding(ctx, a)) // twice is fine
	if _, ok, _ := s.Binding(ctx, a); ok {
		t.Fatal("binding outlived its deletion")
	}
	if bs, _ := s.Bindings(ctx); len(bs) != 2 {
		t.Fatalf("%d bindings after a deletion, want 2", len(bs))
	}
	for _, b := range []channels.ThreadRef{c.Thread, {Platform: "discord", Channel: "z", Thread: "1"}} {
		must(t, s.DeleteBinding(ctx, b))
	}
	if bs, err := s.Bindings(ctx); err != nil || len(bs) != 0 {
		t.Fatalf("bindings after deleting all: %+v %v", bs, err)
	}
}

// A channel's bindings are its threads' alone: not those of a channel
// whose id starts the same or holds a "/", nor of the same channel id on
// another platform, nor a deleted thread's.
func testChannelBindings(t *testing.T, ctx context.Context, s store.Backend) {
	if bs, err := s.ChannelBindings(ctx, "web", "c"); err != nil || len(bs) != 0 {
		t.Fatalf("bindings of a channel before any: %+v %v", bs, err)
	}
	other := channels.ThreadRef{Platform: "slack", Channel: "c", Thread: "a"}
	for _, th := range []channels.ThreadRef{ref("c", "b"), ref("c", "a.1"), ref("c2", "a"), ref("c/x", "a"), ref("x", "c"), other, ref("c", "gone")} {
		must(t, s.PutBinding(ctx, store.Binding{Thread: th, Agent: "demo", SessionID: "s-" + th.String(), Created: ms(1), Updated: ms(2)}))
	}
	must(t, s.DeleteBinding(ctx, ref("c", "gone")))
	for _, c := range []struct {
		platform, channel string
		want              []channels.ThreadRef
	}{
		{"web", "c", []channels.ThreadRef{ref("c", "a.1"), ref("c", "b")}},
		{"web", "c/x", []channels.ThreadRef{ref("c/x", "a")}},
		{"slack", "c", []channels.ThreadRef{other}},
		{"web", "none", nil},
	} {
		bs, err := s.ChannelBindings(ctx, c.platform, c.channel)
		must(t, err)
		var got []channels.ThreadRef
		for _, b := range bs {
			got = append(got, b.Thread)
			if b.SessionID != "s-"+b.Thread.String() || !b.Updated.Equal(ms(2)) {
				t.Errorf("binding of %s = %+v", b.Thread, b)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("bindings of channel %s/%s = %v, want %v", c.platform, c.channel, got, c.want)
		}
	}
}

func prompt(id string, created int64) store.Prompt {
	return store.Prompt{
		ID: id, Thread: ref("c", "t"), SessionID: "s", RequestID: "r-" + id, ToolCallID: "tc", Title: "Run ls",
		Kind: "execute", Options: []store.PromptOption{{ID: "allow", Name: "Allow", Kind: "allow_once"}, {ID: "deny", Name: "Deny"}},
		CreatedAt: ms(created), ExpiresAt: ms(created + 60000),
	}
}

func testPrompts(t *testing.T, ctx context.Context, s store.Backend) {
	if ps, err := s.PendingPrompts(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("pending before any: %+v %v", ps, err)
	}
	if ps, err := s.ExpireAll(ctx, ms(1)); err != nil || len(ps) != 0 {
		t.Fatalf("expired before any: %+v %v", ps, err)
	}
	if err := s.AddPrompt(ctx, store.Prompt{}); err == nil {
		t.Error("a prompt without id was added")
	}
	p := prompt("p1", 1000)
	must(t, s.AddPrompt(ctx, p))
	if err := s.AddPrompt(ctx, p); err == nil {
		t.Error("a prompt was added twice")
	}
	got, ok, err := s.Prompt(ctx, "p1")
	p.Status = store.PromptPending
	if err != nil || !ok || !reflect.DeepEqual(got, p) {
		t.Fatalf("prompt = %+v %v %v, want %+v", got, ok, err, p)
	}
	if _, ok, err := s.Prompt(ctx, "nope"); ok || err != nil {
		t.Fatalf("unknown prompt: %v %v", ok, err)
	}
	must(t, s.SetPromptMessage(ctx, "p1", "m1"))
	if got, _, _ := s.Prompt(ctx, "p1"); got.MessageID != "m1" {
		t.Fatalf("message id = %q", got.MessageID)
	}
	if err := s.SetPromptMessage(ctx, "nope", "m"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("message of an unknown prompt: %v, want ErrNotFound", err)
	}
	if _, err := s.ResolvePrompt(ctx, "p1", store.PromptPending, "", "", time.Time{}); err == nil {
		t.Error("resolved to pending")
	}
	won, err := s.ResolvePrompt(ctx, "p1", store.PromptAnswered, "allow", "ann", ms(5000))
	if err != nil || !won {
		t.Fatalf("first resolve: %v %v", won, err)
	}
	won, err = s.ResolvePrompt(ctx, "p1", store.PromptCancelled, "", "bob", ms(6000))
	if err != nil || won {
		t.Fatalf("second resolve: %v %v", won, err)
	}
	if won, err := s.ResolvePrompt(ctx, "nope", store.PromptAnswered, "", "", time.Time{}); won || err != nil {
		t.Fatalf("resolve unknown: %v %v", won, err)
	}
	got, _, _ = s.Prompt(ctx, "p1")
	if got.Status != store.PromptAnswered || got.Chosen != "allow" || got.ChosenBy != "ann" || !got.ResolvedAt.Equal(ms(5000)) || got.MessageID != "m1" {
		t.Fatalf("resolved prompt = %+v", got)
	}
	must(t, s.AddPrompt(ctx, prompt("p3", 3000)))
	must(t, s.AddPrompt(ctx, prompt("p2", 2000)))
	ps, err := s.PendingPrompts(ctx)
	must(t, err)
	if len(ps) != 2 || ps[0].ID != "p2" || ps[1].ID != "p3" {
		t.Fatalf("pending = %+v, want p2 p3", ps)
	}
}

// Concurrent resolutions of one prompt: exactly one wins.
func testResolveOnce(t *testing.T, ctx context.Context, s store.Backend) {
	must(t, s.AddPrompt(ctx, prompt("p", 1000)))
	ResolveRace(t, ctx, []store.Backend{s, s, s, s}, "p")
}

// ResolveRace resolves prompt id from each backend at once (they share
// the data: one backend several times, or one per worker) and checks that
// exactly one wins and the prompt says who.
func ResolveRace(t *testing.T, ctx context.Context, bs []store.Backend, id string) {
	t.Helper()
	var wg sync.WaitGroup
	won := make([]bool, len(bs))
	errs := make([]error, len(bs))
	start := make(chan struct{})
	for i, b := range bs {
		wg.Go(func() {
			<-start
			won[i], errs[i] = b.ResolvePrompt(ctx, id, store.PromptAnswered, "allow", fmt.Sprint("worker", i), time.Time{})
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i := range bs {
		if errs[i] != nil {
			t.Fatalf("resolve %d: %v", i, errs[i])
		}
		if won[i] {
			if winner >= 0 {
				t.Fatalf("resolve %d and %d both won", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no resolve won")
	}
	p, _, err := bs[0].Prompt(ctx, id)
	must(t, err)
	if p.ChosenBy != fmt.Sprint("worker", winner) || p.Status != store.PromptAnswered {
		t.Fatalf("prompt after the race = %+v, winner worker%d", p, winner)
	}
}

func testExpireAll(t *testing.T, ctx context.Context, s store.Backend) {
	must(t, s.AddPrompt(ctx, prompt("b", 2000)))
	must(t, s.AddPrompt(ctx, prompt("a", 1000)))
	must(t, s.AddPrompt(ctx, prompt("done", 500)))
	if won, err := s.ResolvePrompt(ctx, "done", store.PromptCancelled, "", "x", ms(600)); !won || err != nil {
		t.Fatalf("resolve: %v %v", won, err)
	}
	ps, err := s.ExpireAll(ctx, ms(9000))
	must(t, err)
	if len(ps) != 2 || ps[0].ID != "a" || ps[1].ID != "b" {
		t.Fatalf("expired %+v, want a b", ps)
	}
	for _, p := range ps {
		if p.Status != store.PromptExpired || !p.ResolvedAt.Equal(ms(9000)) {
			t.Fatalf("expired prompt = %+v", p)
		}
	}
	if p, _, _ := s.Prompt(ctx, "a"); p.Status != store.PromptExpired {
		t.Fatalf("stored = %+v", p)
	}
	if p, _, _ := s.Prompt(ctx, "done"); p.Status != store.PromptCancelled {
		t.Fatalf("a settled prompt was expired: %+v", p)
	}
	if ps, _ := s.PendingPrompts(ctx); len(ps) != 0 {
		t.Fatalf("pending after ExpireAll: %+v", ps)
	}
	if won, _ := s.ResolvePrompt(ctx, "a", store.PromptAnswered, "allow", "late", time.Time{}); won {
		t.Fatal("an expired prompt was answered")
	}
	if ps, err := s.ExpireAll(ctx, ms(10000)); err != nil || len(ps) != 0 {
		t.Fatalf("second ExpireAll: %+v %v", ps, err)
	}
}

func testTurns(t *testing.T, ctx context.Context, s store.Backend) {
	th := ref("c", "t")
	t1 := store.Turn{Thread: th, SessionID: "s", StopReason: "end_turn", Started: ms(1000), Ended: ms(2000),
		Used: 10, Size: 100, UsedKnown: true, SizeKnown: true, Cost: 0.5, Currency: "USD", CostKnown: true, PromptChars: 3, ReplyChars: 4}
	must(t, s.AddTurn(ctx, t1))
	must(t, s.AddTurn(ctx, store.Turn{Thread: th, SessionID: "s", StopReason: "cancelled", Error: "e", Started: ms(3000), Ended: ms(4000)}))
	must(t, s.AddTurn(ctx, store.Turn{Thread: th, SessionID: "other", Started: ms(1), Ended: ms(2), Cost: 9, Currency: "EUR", CostKnown: true}))
	ts, err := s.Turns(ctx, "s")
	must(t, err)
	if len(ts) != 2 {
		t.Fatalf("turns = %+v", ts)
	}
	t1.Seq = 1
	if !reflect.DeepEqual(ts[0], t1) {
		t.Fatalf("turn 1 = %+v, want %+v", ts[0], t1)
	}
	if ts[1].Seq != 2 || ts[1].UsedKnown || ts[1].CostKnown || ts[1].Error != "e" {
		t.Fatalf("turn 2 = %+v", ts[1])
	}
	// A turn with a seq replaces the one there.
	must(t, s.AddTurn(ctx, store.Turn{Thread: th, SessionID: "s", Seq: 2, StopReason: "end_turn", Cost: 1.25, Currency: "USD", CostKnown: true}))
	ts, _ = s.Turns(ctx, "s")
	if len(ts) != 2 || ts[1].StopReason != "end_turn" {
		t.Fatalf("turns after a replace = %+v", ts)
	}
	u, err := s.UsageTotals(ctx, "s")
	must(t, err)
	// A turn's cost is the session's so far (agents report a running
	// total): the session's cost is the highest, not the sum.
	if u.Turns != 2 || len(u.Cost) != 1 || math.Abs(u.Cost["USD"]-1.25) > 1e-9 {
		t.Fatalf("usage = %+v", u)
	}
	if u, _ := s.UsageTotals(ctx, "none"); u.Turns != 0 || u.Cost != nil {
		t.Fatalf("usage of nothing = %+v", u)
	}
	if ts, err := s.Turns(ctx, "none"); err != nil || len(ts) != 0 {
		t.Fatalf("turns of nothing = %+v %v", ts, err)
	}
}

// A turn costs the session's cost reported with it less the most the
// session reported before, and never less than nothing; spend sums that
// since a time.
func testSpend(t *testing.T, ctx context.Context, s store.Backend) {
	a, b, other := ref("c", "a"), ref("c", "b"), ref("d", "x")
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	cost := func(th channels.ThreadRef, sess string, ended time.Time, c float64, known bool) store.Turn {
		return store.Turn{Thread: th, SessionID: sess, StopReason: "end_turn", Started: ended, Ended: ended, Cost: c, Currency: "USD", CostKnown: known}
	}
	for _, tu := range []store.Turn{
		cost(a, "s1", day.Add(-time.Hour), 1.0, true),
		cost(a, "s1", day.Add(time.Hour), 1.5, true),
		cost(a, "s1", day.Add(2*time.Hour), 0, false),
		cost(a, "s1", day.Add(3*time.Hour), 2.0, true),
		cost(b, "s2", day.Add(time.Hour), 0.25, true),
		cost(other, "s3", day.Add(time.Hour), 7, true),
	} {
		must(t, s.AddTurn(ctx, tu))
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	sp, err := s.ChannelSpend(ctx, "web", "c", day)
	must(t, err)
	if sp.Turns != 4 || !sp.CostKnown || !near(sp.Cost, 1.25) {
		t.Fatalf("channel spend today = %+v, want 4 turns $1.25", sp)
	}
	sp, _ = s.ThreadSpend(ctx, a)
	if sp.Turns != 4 || !near(sp.Cost, 2.0) {
		t.Fatalf("thread spend = %+v, want 4 turns $2", sp)
	}
	sp, _ = s.ChannelSpend(ctx, "web", "e", time.Time{})
	if sp.Turns != 0 || sp.CostKnown {
		t.Fatalf("spend of an empty channel = %+v", sp)
	}
	// A session's cost that drops (or is negative) is no refund: a turn
	// never costs less than nothing, for its thread nor its channel.
	n, m := ref("n", "a"), ref("n", "b")
	for _, tu := range []store.Turn{
		cost(n, "s4", day.Add(time.Hour), 5, true),
		cost(n, "s4", day.Add(2*time.Hour), -100, true),
		cost(n, "s4", day.Add(3*time.Hour), 2, true),
		cost(m, "s5", day.Add(time.Hour), -100, true),
		cost(m, "s6", day.Add(time.Hour), 90, true),
	} {
		must(t, s.AddTurn(ctx, tu))
	}
	if sp, _ = s.ThreadSpend(ctx, n); sp.Turns != 3 || !near(sp.Cost, 5) {
		t.Fatalf("spend of a thread whose cost dropped = %+v, want 3 turns $5", sp)
	}
	if sp, _ = s.ChannelSpend(ctx, "web", "n", day); sp.Turns != 5 || !near(sp.Cost, 95) {
		t.Fatalf("spend of a channel with a negative cost = %+v, want 5 turns $95", sp)
	}
	// Nor is a negative cost reported earlier a credit for the next.
	neg := ref("neg", "a")
	must(t, s.AddTurn(ctx, cost(neg, "s7", day.Add(time.Hour), -1, true)))
	must(t, s.AddTurn(ctx, cost(neg, "s7", day.Add(2*time.Hour), 2, true)))
	if sp, _ = s.ChannelSpend(ctx, "web", "neg", day); sp.Turns != 2 || !near(sp.Cost, 2) {
		t.Fatalf("spend after a negative cost = %+v, want 2 turns $2", sp)
	}
	// A turn written again counts once, with its last cost and end: the
	// sums of a day already read follow (the JetStream store keeps them).
	must(t, s.AddTurn(ctx, store.Turn{Thread: b, SessionID: "s2", Seq: 2, StopReason: "end_turn", Ended: day.Add(4 * time.Hour), Cost: 0.75, Currency: "USD", CostKnown: true}))
	if sp, _ = s.ChannelSpend(ctx, "web", "c", day); sp.Turns != 5 || !near(sp.Cost, 1.75) {
		t.Fatalf("channel spend after a new turn = %+v, want 5 turns $1.75", sp)
	}
	must(t, s.AddTurn(ctx, store.Turn{Thread: b, SessionID: "s2", Seq: 2, StopReason: "end_turn", Ended: day.Add(4 * time.Hour), Cost: 1.25, Currency: "USD", CostKnown: true}))
	if sp, _ = s.ChannelSpend(ctx, "web", "c", day); sp.Turns != 5 || !near(sp.Cost, 2.25) {
		t.Fatalf("channel spend after a turn written again = %+v, want 5 turns $2.25", sp)
	}
	must(t, s.AddTurn(ctx, store.Turn{Thread: b, SessionID: "s2", Seq: 1, StopReason: "end_turn", Ended: day.Add(-time.Hour), Cost: 0.25, Currency: "USD", CostKnown: true}))
	if sp, _ = s.ChannelSpend(ctx, "web", "c", day); sp.Turns != 4 || !near(sp.Cost, 2.0) {
		t.Fatalf("channel spend after a turn's end was written again the day before = %+v, want 4 turns $2", sp)
	}
	if c, ok, err := s.SessionCost(ctx, "s1"); err != nil || !ok || !near(c, 2.0) {
		t.Fatalf("session cost = %v %v %v", c, ok, err)
	}
	if _, ok, err := s.SessionCost(ctx, "none"); ok || err != nil {
		t.Fatalf("cost of no session: %v %v", ok, err)
	}
}

func testBudgetHolds(t *testing.T, ctx context.Context, s store.Backend) {
	th := ref("c", "t")
	if _, ok, err := s.BudgetHoldOf(ctx, th); ok || err != nil {
		t.Fatalf("hold before any: %v %v", ok, err)
	}
	h := store.BudgetHold{Thread: th, Budget: "tokensPerTurn", Reached: ms(5000)}
	must(t, s.PutBudgetHold(ctx, h))
	h.Budget = "costPerDay"
	must(t, s.PutBudgetHold(ctx, h))
	got, ok, err := s.BudgetHoldOf(ctx, th)
	if err != nil || !ok || !reflect.DeepEqual(got, h) {
		t.Fatalf("hold = %+v %v %v, want %+v", got, ok, err, h)
	}
	must(t, s.ClearBudgetHold(ctx, th))
	must(t, s.ClearBudgetHold(ctx, th))
	if _, ok, _ := s.BudgetHoldOf(ctx, th); ok {
		t.Fatal("the hold outlived its clearing")
	}
}

func testChoices(t *testing.T, ctx context.Context, s store.Backend) {
	a, b := ref("c", "a"), ref("c", "b")
	if cs, err := s.Choices(ctx, a); err != nil || len(cs) != 0 {
		t.Fatalf("choices before any: %v %v", cs, err)
	}
	must(t, s.SetChoice(ctx, a, "mode", "plan"))
	must(t, s.SetChoice(ctx, a, "model", "opus"))
	must(t, s.SetChoice(ctx, a, "mode", "code"))
	must(t, s.SetChoice(ctx, b, "mode", "ask"))
	cs, err := s.Choices(ctx, a)
	must(t, err)
	if want := map[string]string{"mode": "code", "model": "opus"}; !reflect.DeepEqual(cs, want) {
		t.Fatalf("choices = %v, want %v", cs, want)
	}
	must(t, s.DropChoice(ctx, a, "mode"))
	must(t, s.DropChoice(ctx, a, "never-chosen"))
	if cs, _ := s.Choices(ctx, a); !reflect.DeepEqual(cs, map[string]string{"model": "opus"}) {
		t.Fatalf("choices after dropping mode = %v, want only the model", cs)
	}
	if cs, _ := s.Choices(ctx, b); cs["mode"] != "ask" {
		t.Fatalf("another thread's choice was dropped: %v", cs)
	}
	must(t, s.ClearChoices(ctx, a))
	if cs, _ := s.Choices(ctx, a); len(cs) != 0 {
		t.Fatalf("choices after clearing = %v", cs)
	}
	if cs, _ := s.Choices(ctx, b); cs["mode"] != "ask" {
		t.Fatalf("another thread's choices were cleared: %v", cs)
	}
}

func testRunningTurns(t *testing.T, ctx context.Context, s store.Backend) {
	a, b, c := ref("c", "a"), ref("c", "b"), ref("c", "c")
	if rs, err := s.RunningTurns(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("running before any: %+v %v", rs, err)
	}
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: b, SessionID: "sb", Started: ms(2000)}))
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: a, SessionID: "sa", Started: ms(3000)}))
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: c, SessionID: "sc", Started: ms(1000)}))
	// A thread keeps a mark per prompt, in order; marking the same start
	// again replaces it.
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: a, SessionID: "sa", Started: ms(4000)}))
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: a, SessionID: "sa2", Started: ms(3000)}))
	rs, err := s.RunningTurns(ctx)
	must(t, err)
	want := []store.RunningTurn{{Thread: c, SessionID: "sc", Started: ms(1000)}, {Thread: b, SessionID: "sb", Started: ms(2000)}, {Thread: a, SessionID: "sa2", Started: ms(3000)}, {Thread: a, SessionID: "sa", Started: ms(4000)}}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("running = %+v, want %+v", rs, want)
	}
	// Clearing an older turn leaves the newer one; zero clears any.
	must(t, s.ClearTurnRunning(ctx, a, ms(3000)))
	must(t, s.ClearTurnRunning(ctx, b, time.Time{}))
	rs, _ = s.RunningTurns(ctx)
	if len(rs) != 2 || rs[0].Thread != c || rs[1].Thread != a {
		t.Fatalf("running after clearing = %+v", rs)
	}
	must(t, s.ClearTurnRunning(ctx, a, ms(4000)))
	if rs, _ := s.RunningTurns(ctx); len(rs) != 1 || rs[0].Thread != c {
		t.Fatalf("running = %+v", rs)
	}

	// A mark keeps the turn's prompt and how often it was taken over;
	// marking the same start again replaces both; zero clears all of a
	// thread's marks.
	p := store.TurnPrompt{
		ID:     "m1",
		Author: channels.Author{ID: "u1", Name: "Ada", Roles: []string{"dev", "ops"}},
		Text:   "fix the build\nplease",
		Files: []channels.File{
			{Name: "notes.txt", ContentType: "text/plain", Size: 5, URL: "https://files.example/notes.txt", Text: "hello"},
			{Name: "shot.png", ContentType: "image/png", Size: 900, URL: "https://files.example/shot.png", Skipped: "not carried"},
		},
		Space: "g1",
		Time:  ms(5000),
	}
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: b, SessionID: "sb", Started: ms(6000), Prompt: p, Attempts: 1}))
	rs, err = s.RunningTurns(ctx)
	must(t, err)
	want = []store.RunningTurn{{Thread: c, SessionID: "sc", Started: ms(1000)}, {Thread: b, SessionID: "sb", Started: ms(6000), Prompt: p, Attempts: 1}}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("running with a prompt = %+v, want %+v", rs, want)
	}
	bot := store.TurnPrompt{ID: "m2", Author: channels.Author{ID: "b1", Name: "ci", Bot: true}, Text: "again", Time: ms(7000)}
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: b, SessionID: "sb", Started: ms(6000), Prompt: bot}))
	must(t, s.MarkTurnRunning(ctx, store.RunningTurn{Thread: b, SessionID: "sb", Started: ms(8000), Prompt: p}))
	rs, err = s.RunningTurns(ctx)
	must(t, err)
	want = []store.RunningTurn{{Thread: c, SessionID: "sc", Started: ms(1000)}, {Thread: b, SessionID: "sb", Started: ms(6000), Prompt: bot}, {Thread: b, SessionID: "sb", Started: ms(8000), Prompt: p}}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("running after marking the thread again = %+v, want %+v", rs, want)
	}
	must(t, s.ClearTurnRunning(ctx, b, time.Time{}))
	if rs, _ := s.RunningTurns(ctx); len(rs) != 1 || rs[0].Thread != c {
		t.Fatalf("running after clearing all of a thread's = %+v", rs)
	}
}

func testSeen(t *testing.T, ctx context.Context, s store.Backend) {
	a, b, unbound := ref("c", "a"), ref("c", "b"), ref("c", "u")
	if ss, err := s.SeenSince(ctx, time.Time{}); err != nil || len(ss) != 0 {
		t.Fatalf("seen before any: %+v %v", ss, err)
	}
	for _, th := range []channels.ThreadRef{a, b} {
		must(t, s.PutBinding(ctx, store.Binding{Thread: th, Agent: "demo", SessionID: "s-" + th.Thread, Created: ms(1), Updated: ms(1)}))
	}
	must(t, s.MarkSeen(ctx, a, "m1", ms(1000)))
	must(t, s.MarkSeen(ctx, b, "m2", ms(2000)))
	must(t, s.MarkSeen(ctx, unbound, "m3", ms(3000)))
	must(t, s.MarkSeen(ctx, a, "m4", ms(4000)))
	// A thread not bound (its first message handled, the gateway
	// stopped before its session was saved) is listed with its ref alone.
	ss, err := s.SeenSince(ctx, ms(1500))
	must(t, err)
	if len(ss) != 3 || ss[0].Thread != a || ss[0].MessageID != "m4" || !ss[0].At.Equal(ms(4000)) || ss[0].SessionID != "s-a" ||
		ss[1].Thread != unbound || ss[1].MessageID != "m3" || ss[1].Binding != (store.Binding{Thread: unbound}) ||
		ss[2].Thread != b || ss[2].MessageID != "m2" {
		t.Fatalf("seen since = %+v", ss)
	}
	if ss, _ := s.SeenSince(ctx, ms(4001)); len(ss) != 0 {
		t.Fatalf("seen since later = %+v", ss)
	}
	for _, c := range []struct {
		th   channels.ThreadRef
		id   channels.MessageID
		seen bool
	}{{a, "m4", true}, {unbound, "m3", true}, {ref("c", "never"), "", false}} {
		if id, ok, err := s.LastSeen(ctx, c.th); err != nil || ok != c.seen || id != c.id {
			t.Errorf("last seen in %s = %q %v %v, want %q %v", c.th, id, ok, err, c.id, c.seen)
		}
	}
}

func testEntries(t *testing.T, ctx context.Context, s store.Backend) {
	msg := func(seq int, role store.Role, text string) store.Entry {
		return store.Entry{Seq: seq, Time: ms(int64(1000 * (seq + 1))), Updated: ms(int64(1000*(seq+1) + 1)), Body: store.Message{Role: role, Text: text, Length: len(text)}}
	}
	must(t, s.SaveEntries(ctx, "s", nil))
	must(t, s.SaveEntries(ctx, "s", []store.Entry{msg(2, store.RoleAssistant, "hel"), msg(0, store.RoleUser, "hi")}))
	must(t, s.SaveEntries(ctx, "s", []store.Entry{
		{Seq: 1, Time: ms(1500), Updated: ms(1500), Body: store.Thought{Text: "hmm", Length: 3}},
		msg(2, store.RoleAssistant, "hello"),
	}))
	must(t, s.SaveEntries(ctx, "other", []store.Entry{msg(0, store.RoleUser, "x")}))
	if err := s.SaveEntries(ctx, "s", []store.Entry{{Seq: 3}}); err == nil {
		t.Error("an entry without a body was saved")
	}
	es, err := s.Entries(ctx, "s")
	must(t, err)
	want := []store.Entry{msg(0, store.RoleUser, "hi"), {Seq: 1, Time: ms(1500), Updated: ms(1500), Body: store.Thought{Text: "hmm", Length: 3}}, msg(2, store.RoleAssistant, "hello")}
	if !reflect.DeepEqual(es, want) {
		t.Fatalf("entries = %+v\nwant %+v", es, want)
	}
	tr, err := s.LoadTranscript(ctx, "s")
	must(t, err)
	if got := tr.Entries(); !reflect.DeepEqual(got, want) {
		t.Fatalf("transcript = %+v", got)
	}
	if es, err := s.Entries(ctx, "none"); err != nil || len(es) != 0 {
		t.Fatalf("entries of nothing = %+v %v", es, err)
	}
}

// A deleted thread leaves nothing of its own behind (its session's turns
// and transcript stay, for the record); another thread keeps its.
func testDeleteForgetsTheThread(t *testing.T, ctx context.Context, s store.Backend) {
	gone, kept := ref("c", "gone"), ref("c", "kept")
	for _, th := range []channels.ThreadRef{gone, kept} {
		must(t, s.PutBinding(ctx, store.Binding{Thread: th, Agent: "demo", SessionID: "s-" + th.Thread, Created: ms(1), Updated: ms(1)}))
		must(t, s.SetChoice(ctx, th, "mode", "plan"))
		must(t, s.PutBudgetHold(ctx, store.BudgetHold{Thread: th, Budget: "turnsPerThread", Reached: ms(2)}))
		must(t, s.MarkSeen(ctx, th, "m-"+channels.MessageID(th.Thread), ms(3)))
	}
	must(t, s.DeleteBinding(ctx, gone))
	if _, ok, err := s.Binding(ctx, gone); ok || err != nil {
		t.Errorf("binding after the deletion: %v %v", ok, err)
	}
	if cs, err := s.Choices(ctx, gone); len(cs) != 0 || err != nil {
		t.Errorf("choices after the deletion: %v %v", cs, err)
	}
	if h, ok, err := s.BudgetHoldOf(ctx, gone); ok || err != nil {
		t.Errorf("budget hold after the deletion: %+v %v %v", h, ok, err)
	}
	if id, ok, err := s.LastSeen(ctx, gone); ok || err != nil {
		t.Errorf("last seen after the deletion: %q %v %v", id, ok, err)
	}
	if _, ok, _ := s.Binding(ctx, kept); !ok {
		t.Error("the other thread's binding went too")
	}
	if cs, _ := s.Choices(ctx, kept); cs["mode"] != "plan" {
		t.Errorf("the other thread's choices went too: %v", cs)
	}
	if _, ok, _ := s.BudgetHoldOf(ctx, kept); !ok {
		t.Error("the other thread's budget hold went too")
	}
	if id, ok, _ := s.LastSeen(ctx, kept); !ok || id != "m-kept" {
		t.Errorf("the other thread's last seen = %q %v", id, ok)
	}
}

// AttachSession refuses a session another thread is bound to and one of
// a deleted thread; a thread may attach its own again.
func testAttachSession(t *testing.T, ctx context.Context, s store.Backend) {
	a, b, c := ref("c", "a"), ref("c", "b"), ref("c", "c")
	bind := func(th channels.ThreadRef, id string) store.Binding {
		return store.Binding{Thread: th, Agent: "demo", SessionID: id, Created: ms(1000), Updated: ms(2000)}
	}
	must(t, s.PutBinding(ctx, bind(a, "s1")))
	if err := s.AttachSession(ctx, bind(b, "s1")); !errors.Is(err, store.ErrSessionTaken) {
		t.Fatalf("attach a session another thread is bound to: %v, want ErrSessionTaken", err)
	}
	must(t, s.AttachSession(ctx, bind(b, "s2")))
	if got, ok, err := s.Binding(ctx, b); err != nil || !ok || got.SessionID != "s2" {
		t.Fatalf("binding after the attach = %+v %v %v", got, ok, err)
	}
	must(t, s.AttachSession(ctx, bind(b, "s2")))
	if err := s.AttachSession(ctx, bind(c, "s2")); !errors.Is(err, store.ErrSessionTaken) {
		t.Fatalf("attach a session another thread attached: %v, want ErrSessionTaken", err)
	}
	if gone, err := s.SessionGone(ctx, "s1"); err != nil || gone {
		t.Fatalf("a bound session gone = %v %v", gone, err)
	}
	must(t, s.DeleteBinding(ctx, a))
	if gone, err := s.SessionGone(ctx, "s1"); err != nil || !gone {
		t.Fatalf("the deleted thread's session gone = %v %v, want true", gone, err)
	}
	if err := s.AttachSession(ctx, bind(c, "s1")); !errors.Is(err, store.ErrSessionGone) {
		t.Fatalf("attach the deleted thread's session: %v, want ErrSessionGone", err)
	}
	if _, ok, _ := s.Binding(ctx, c); ok {
		t.Fatal("a refused attach bound the thread")
	}
	if gone, err := s.SessionGone(ctx, "never"); err != nil || gone {
		t.Fatalf("an unknown session gone = %v %v", gone, err)
	}
}

// Of two threads attaching one session at once, exactly one wins.
func testAttachSessionRace(t *testing.T, ctx context.Context, s store.Backend) {
	for i := range 10 {
		id := fmt.Sprintf("race-%d", i)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range errs {
			wg.Go(func() {
				th := ref("c", fmt.Sprintf("t%d-%d", i, j))
				errs[j] = s.AttachSession(ctx, store.Binding{Thread: th, Agent: "demo", SessionID: id})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrSessionTaken):
				t.Fatalf("round %d: %v", i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d attaches won, want 1 (%v)", i, won, errs)
		}
	}
}
