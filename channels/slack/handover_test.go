package slack

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Run told to stop hands every envelope it acknowledged to the handler
// (Slack does not send an acknowledged one again): a thread's message
// waiting behind a lookup when Run's context ends is handed over, with
// the ended context, before Run returns.
func TestStopHandsOverWhatWasAcknowledged(t *testing.T) {
	ctx := testCtx(t)
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	const thread = "1700000000.000111"
	stopping := make(chan struct{})
	asked := make(chan struct{}, 10)
	a := f.adapter(t, Options{KnownThread: func(context.Context, channels.ThreadRef) bool {
		asked <- struct{}{}
		<-stopping // a lookup still under way when Run is stopped
		return true
	}})
	var (
		mu  sync.Mutex
		got []string
	)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(runCtx, func(_ context.Context, in channels.Inbound) {
			mu.Lock()
			got = append(got, in.Text)
			mu.Unlock()
		})
	}()
	first, err := f.say(ctx, sayOptions{user: "U0ANN", thread: thread, text: "one"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the thread was never looked up")
	}
	second, err := f.say(ctx, sayOptions{user: "U0ANN", thread: thread, text: "two"})
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range append(first.envelopes, second.envelopes...) {
		if err := f.waitAck(ctx, env); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	close(stopping)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"one", "two"}; !slices.Equal(got, want) {
		t.Errorf("handed over %q, want %q", got, want)
	}
}
