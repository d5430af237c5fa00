package discord

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

var (
	ann  = fakeUser{ID: "800000000000000001", Name: "Ann", Roles: []string{"700000000000000001"}}
	bob  = fakeUser{ID: "800000000000000002", Name: "Bob"}
	bot2 = fakeUser{ID: "800000000000000009", Name: "otherbot", Bot: true}
)

// testCtx bounds a test's waits.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// live is a running adapter whose inbound messages a test reads.
type live struct {
	a      *Adapter
	in     chan channels.Inbound
	cancel context.CancelFunc
	done   chan error
}

// start runs a against the fake until the test ends, then checks that Run
// returned nil and left no goroutine behind.
func start(t *testing.T, f *fakeDiscord, o Options) *live {
	t.Helper()
	leaks := channeltest.LeakCheck(t)
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
	t.Cleanup(func() {
		s.stop(t)
		leaks()
		if v := f.Violations(); len(v) > 0 {
			t.Errorf("fake discord saw protocol misuse: %q", v)
		}
	})
	f.waitLive(testCtx(t))
	// The fake has sent READY; wait until the adapter has handled it too.
	select {
	case <-a.ready:
	case <-testCtx(t).Done():
		t.Fatal("the adapter never handled READY")
	}
	return s
}

// stop ends Run and waits for it: every event it received has been
// delivered or dropped then.
func (s *live) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	if s.done == nil {
		return
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Run = %v, want nil after its context ended", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("Run did not return after its context ended")
	}
	s.done = nil
}

// next returns the next inbound message.
func (s *live) next(t *testing.T) channels.Inbound {
	t.Helper()
	select {
	case in := <-s.in:
		return in
	case err := <-s.done:
		t.Fatalf("Run returned %v", err)
	case <-testCtx(t).Done():
		t.Fatal("no inbound message")
	}
	return channels.Inbound{}
}

// mentions decodes the allowed_mentions of a request body; ok is false
// when the body has none.
func mentions(t *testing.T, body []byte) (parse []string, ok bool) {
	t.Helper()
	var b struct {
		AllowedMentions *struct {
			Parse *[]string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("request body %s: %v", body, err)
	}
	if b.AllowedMentions == nil || b.AllowedMentions.Parse == nil {
		return nil, false
	}
	return *b.AllowedMentions.Parse, true
}
