package discord

import (
	"context"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// A thread someone else opened and mentioned the bot in before the
// adapter started (a restart, or an edge that did not see the mention) is
// delivered without a new mention when Options.KnownThread says it is
// bound, and asked about once; another thread it does not know stays
// silent.
func TestKnownThreadOfOthers(t *testing.T) {
	f := newFake(t)
	f.mu.Lock()
	bound, other := f.newIDLocked(), f.newIDLocked()
	f.chans[bound] = &fakeChannel{ID: bound, Type: 11, Guild: f.guild, Parent: f.channel, Owner: ann.ID, Name: "Ann's thread"}
	f.chans[other] = &fakeChannel{ID: other, Type: 11, Guild: f.guild, Parent: f.channel, Owner: ann.ID, Name: "Bob's thread"}
	f.mu.Unlock()
	ref := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: bound}
	var mu sync.Mutex
	asked := map[channels.ThreadRef]int{}
	s := start(t, f, Options{KnownThread: func(_ context.Context, th channels.ThreadRef) bool {
		mu.Lock()
		defer mu.Unlock()
		asked[th]++
		return th == ref
	}})
	f.say(bob, other, "chatter the bot does not see", false)
	f.say(bob, bound, "still there after the restart?", false)
	if in := s.next(t); in.Thread != ref || in.Text != "still there after the restart?" {
		t.Fatalf("inbound = %+v, want the message in the bound thread", in)
	}
	f.say(bob, bound, "and again", false)
	if in := s.next(t); in.Text != "and again" {
		t.Errorf("inbound = %q, want the thread's next message", in.Text)
	}
	s.stop(t) // every event has been delivered or dropped now
	close(s.in)
	for in := range s.in {
		t.Errorf("delivered %+v, from a thread the gateway is not part of", in)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked[ref] != 1 {
		t.Errorf("asked %d times about the bound thread, want once", asked[ref])
	}
}
