package cluster_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
)

// A worker whose agents changed (a reload) announces them at once, and
// placement sends a new thread of the new agent to it.
func TestSetAgentsAnnounces(t *testing.T) {
	n := startNode(t, t.TempDir())
	w := startRouting(t, n.ClientURL(), "w1", routing{ttl: time.Hour, agents: []string{"demo"},
		handle: func(context.Context, cluster.Event) error { return nil }})
	ctx := ctxFor(t)
	has := func(agent string) func([]cluster.WorkerInfo) bool {
		return func(all []cluster.WorkerInfo) bool { return len(all) == 1 && slices.Contains(all[0].Agents, agent) }
	}
	if err := w.reg.Await(ctx, has("demo")); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.reg.Pick("discord/guild/1", "claude"); ok {
		t.Fatal("a thread of claude placed before any worker runs it")
	}
	if err := w.router.SetAgents(ctx, []string{"demo", "claude"}); err != nil {
		t.Fatal(err)
	}
	if err := w.reg.Await(ctx, has("claude")); err != nil {
		t.Fatalf("the registry's view: %v", w.reg.Workers())
	}
	if id, ok := w.reg.Pick("discord/guild/1", "claude"); !ok || id != "w1" {
		t.Errorf("a thread of claude placed on %q (%v), want w1", id, ok)
	}
}
