package discord

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// TestShardsSplitGuilds runs two adapters as shards 0 and 1 of 2 on a
// sharded fake: a guild's messages reach only the adapter of the guild's
// shard, and every message reaches exactly one.
func TestShardsSplitGuilds(t *testing.T) {
	f := newFake(t)
	f.shard(2, 2)
	var threads [2][]string // bot threads by shard
	for i := range 4 {
		_, th := f.addGuild(i % 2)
		threads[i%2] = append(threads[i%2], th)
	}
	f.mu.Lock()
	home := f.shardOfLocked(f.guild)
	f.mu.Unlock()
	threads[home] = append(threads[home], f.thread)

	s := runShards(t, f, 2)
	var want [2][]string
	for round := range 3 {
		for shard := range 2 {
			for _, th := range threads[shard] {
				id := f.say(ann, th, fmt.Sprint("round ", round), false)
				want[shard] = append(want[shard], th+"/"+id)
			}
		}
	}
	for shard := range 2 {
		var got []string
		for range want[shard] {
			in := s[shard].next(t)
			got = append(got, in.Thread.Thread+"/"+string(in.ID))
		}
		s[shard].stop(t) // delivers or drops whatever else it received
		for len(s[shard].in) > 0 {
			in := <-s[shard].in
			got = append(got, in.Thread.Thread+"/"+string(in.ID))
		}
		slices.Sort(got)
		slices.Sort(want[shard])
		if !slices.Equal(got, want[shard]) {
			t.Errorf("shard %d got %q, want %q", shard, got, want[shard])
		}
	}
}

// runShards runs count adapters against f, as shards 0 to count-1 of
// count, all started at once; it returns when each has handled its READY.
// They stop with the test, which then checks that no goroutine is left.
func runShards(t *testing.T, f *fakeDiscord, count int) []*live {
	t.Helper()
	return runShardsWith(t, f, count, func(int) Options { return Options{} })
}

// runShardsWith is runShards with opts(id) as shard id's options (but
// the shard).
func runShardsWith(t *testing.T, f *fakeDiscord, count int, opts func(id int) Options) []*live {
	t.Helper()
	leaks := channeltest.LeakCheck(t)
	var all []*live
	for id := range count {
		o := opts(id)
		o.Shard = Shard{ID: id, Count: count}
		a := f.adapter(t, o)
		ctx, cancel := context.WithCancel(context.Background())
		s := &live{a: a, in: make(chan channels.Inbound, 100), cancel: cancel, done: make(chan error, 1)}
		go func() {
			s.done <- a.Run(ctx, func(ctx context.Context, in channels.Inbound) {
				select {
				case s.in <- in:
				case <-ctx.Done():
				}
			})
		}()
		all = append(all, s)
	}
	t.Cleanup(func() {
		for _, s := range all {
			s.stop(t)
		}
		leaks()
		if v := f.Violations(); len(v) > 0 {
			t.Errorf("fake discord saw protocol misuse: %q", v)
		}
	})
	for id, s := range all {
		select {
		case <-s.a.ready:
		case err := <-s.done:
			t.Fatalf("shard %d: Run returned %v before READY", id, err)
		case <-testCtx(t).Done():
			t.Fatalf("shard %d never handled READY", id)
		}
	}
	return all
}

// TestShardRefused: an adapter whose shard the bot does not have is
// refused (close code 4010), and Run says which setting to fix.
func TestShardRefused(t *testing.T) {
	f := newFake(t)
	f.shard(2, 1)
	a := f.adapter(t, Options{Shard: Shard{ID: 2, Count: 3}})
	err := a.Run(testCtx(t), func(context.Context, channels.Inbound) {})
	if err == nil || !strings.Contains(err.Error(), "channels.discord.shard") || !strings.Contains(err.Error(), "4010") {
		t.Errorf("Run = %v, want the shard refused (4010), naming channels.discord.shard", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shards.refused != 1 || f.identifies != 0 {
		t.Errorf("%d identifies refused, %d accepted; want 1 and 0", f.shards.refused, f.identifies)
	}
}

// TestShardsIdentifyInTurn: with an identify concurrency of 1, two shards
// started together identify 5 s apart (the fake reports a violation
// otherwise).
func TestShardsIdentifyInTurn(t *testing.T) {
	f := newFake(t)
	f.shard(2, 1)
	_, th0 := f.addGuild(0)
	_, th1 := f.addGuild(1)
	s := runShards(t, f, 2) // both start at once
	for i, th := range []string{th0, th1} {
		id := f.say(ann, th, "hello", false)
		if in := s[i].next(t); string(in.ID) != id {
			t.Errorf("shard %d got %s, want %s", i, in.ID, id)
		}
	}
	f.mu.Lock()
	identifies := f.identifies
	f.mu.Unlock()
	if identifies != 2 {
		t.Errorf("%d identifies, want 2", identifies)
	}
}

// TestIdentifyTurns: a bucket's identifies are 5 s apart; other buckets
// do not wait; a wait ends with its context.
func TestIdentifyTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tu := &turns{next: map[string]time.Time{}}
		ctx := t.Context()
		start := time.Now()
		for i := range 3 {
			if err := tu.wait(ctx, "bucket 0"); err != nil {
				t.Fatal(err)
			}
			if got, want := time.Since(start), time.Duration(i)*identifyInterval; got != want {
				t.Errorf("identify %d after %v, want %v", i, got, want)
			}
		}
		at := time.Now()
		if err := tu.wait(ctx, "bucket 1"); err != nil || time.Since(at) != 0 {
			t.Errorf("another bucket waited %v (%v), want no wait", time.Since(at), err)
		}
		// A READY 2 s after a turn moves the next to 5 s after the READY.
		time.Sleep(2 * time.Second) // virtual time
		tu.ready("bucket 1")
		at = time.Now()
		if err := tu.wait(ctx, "bucket 1"); err != nil || time.Since(at) != identifyInterval {
			t.Errorf("after a READY the turn came in %v (%v), want %v", time.Since(at), err, identifyInterval)
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := tu.wait(short, "bucket 1"); err != context.DeadlineExceeded {
			t.Errorf("wait = %v, want its context's error", err)
		}
	})
}

// TestShardConfig: a shard id not below its count is an error naming the
// key; the default is the one shard; New refuses a bad shard too.
func TestShardConfig(t *testing.T) {
	c := DefaultConfig()
	if c.Shard != (Shard{ID: 0, Count: 1}) || len(c.Validate("channels.discord", true)) != 0 {
		t.Errorf("default shard %+v (%v), want {0 1} and valid", c.Shard, c.Validate("channels.discord", true))
	}
	c.Shard = Shard{ID: 2, Count: 2}
	errs := c.Validate("channels.discord", true)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "channels.discord.shard.id") || !strings.Contains(errs[0].Error(), "want 0 to 1") {
		t.Errorf("Validate = %v, want one error naming channels.discord.shard.id and 0 to 1", errs)
	}
	if _, err := New(Options{Token: "t", Shard: Shard{ID: 2, Count: 2}}); err == nil {
		t.Error("New took shard 2 of 2")
	}
}
