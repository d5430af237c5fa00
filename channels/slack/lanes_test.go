package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/lanes"
)

// TestSlowLookupHoldsUpNoOtherThread: while the users.info of one
// thread's author stalls, another thread's messages, its stop and a click
// on its prompt are delivered; the stalled thread's later message waits
// for the stalled one, and its envelopes are acknowledged at once.
func TestSlowLookupHoldsUpNoOtherThread(t *testing.T) {
	const slowThread, fastThread = fakeThread, "1700000000.000002"
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	f.addUser("U0CARL", "Carl")
	a := f.adapter(t, Options{})
	// The stall must outlast the test's waits, not end in the directory's
	// timeout.
	a.users.timeout = time.Minute
	r := run(t, a, nil)
	ctx := testCtx(t)
	for _, th := range []string{slowThread, fastThread} {
		f.mustSay(ctx, sayOptions{user: "U0ANN", thread: th, text: "bind " + th, mention: true})
		if in := r.next(ctx); in.Text != "bind "+th {
			t.Fatalf("inbound = %q, want the mention that binds %s", in.Text, th)
		}
	}
	prompt, err := a.Prompt(ctx, ref(fakeChannel, fastThread), channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "p1/allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}

	release := f.stallUser("U0CARL")
	defer release()
	f.mustSay(ctx, sayOptions{user: "U0CARL", thread: slowThread, text: "slow"})
	if err := f.waitStalled(ctx, "U0CARL"); err != nil {
		t.Fatal(err)
	}
	after := f.mustSay(ctx, sayOptions{user: "U0ANN", thread: slowThread, text: "after slow"})
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: fastThread, text: "hello"})
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: fastThread, text: "stop"})
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(prompt.ID), "p1/allow"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		in := r.next(ctx)
		got = append(got, describe(in))
	}
	want := []string{
		fastThread + " Ann: hello",
		fastThread + " Ann: stop",
		fastThread + " Ann: choice p1/allow",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("inbound while a users.info stalls (-want +got):\n%s", diff)
	}
	for _, id := range after.envelopes {
		if err := f.waitAck(ctx, id); err != nil {
			t.Errorf("envelope %s of the stalled thread not acknowledged: %v", id, err)
		}
	}

	release()
	got = nil
	for range 2 {
		got = append(got, describe(r.next(ctx)))
	}
	want = []string{slowThread + " Carl: slow", slowThread + " Ann: after slow"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the stalled thread's messages (-want +got):\n%s", diff)
	}
}

// describe returns "thread author: text" (or "choice option") of in.
func describe(in channels.Inbound) string {
	what := in.Text
	switch {
	case in.Choice != nil:
		what = "choice " + in.Choice.OptionID
	case in.Closed:
		what = "(closed)"
	}
	return in.Thread.Thread + " " + in.Author.Name + ": " + what
}

// TestRootDeletionWaitsInItsThreadsLane: a thread root's deletion (a
// tombstone, message_changed, whose own ts is the event's) runs in the
// lane of the thread it deletes: while the thread's earlier reply is
// still being handed over, neither the deletion nor a later reply is
// delivered; then they follow, in order. The envelopes go from the fake
// to the adapter's inbound path in memory, in a synctest bubble, so
// that "nothing else was delivered meanwhile" is a fact, not a wait.
func TestRootDeletionWaitsInItsThreadsLane(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeState(t, fakeOptions{})
		f.addUser(ann, "Ann")
		f.addUser("U0CARL", "Carl")
		a, err := New(Options{AppToken: f.appToken, BotToken: f.botToken, APIURL: "http://fake.invalid/api/",
			HTTPClient: &http.Client{Transport: handlerTransport{f.handler}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if _, err := a.Detect(ctx); err != nil {
			t.Fatal(err)
		}
		var (
			mu  sync.Mutex
			got []string
		)
		hold := make(chan struct{})
		h := func(ctx context.Context, in channels.Inbound) {
			mu.Lock()
			got = append(got, describe(in))
			mu.Unlock()
			if in.Text == "slow" {
				<-hold // the thread's lane is busy with this reply
			}
		}
		in := &inbound{ctx: ctx, work: ctx, h: h, lanes: lanes.New()}
		f.sink = func(env map[string]any) {
			payload, err := json.Marshal(env["payload"])
			if err != nil {
				t.Fatal(err)
			}
			a.queue(in, item{kind: env["type"].(string), payload: payload})
		}
		delivered := func() []string {
			synctest.Wait() // every lane ran as far as it can
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), got...)
		}

		root := f.mustSay(ctx, sayOptions{user: ann, text: "start", mention: true}).ts
		f.mustSay(ctx, sayOptions{user: "U0CARL", thread: root, text: "slow"})
		if err := f.deleteMessage(ctx, fakeChannel, root, true); err != nil {
			t.Fatal(err)
		}
		f.mustSay(ctx, sayOptions{user: ann, thread: root, text: "after"})
		want := []string{root + " Ann: start", root + " Carl: slow"}
		if diff := cmp.Diff(want, delivered()); diff != "" {
			t.Errorf("delivered while the thread's reply is handed over (-want +got):\n%s", diff)
		}
		close(hold)
		want = append(want, root+" : (closed)", root+" Ann: after")
		if diff := cmp.Diff(want, delivered()); diff != "" {
			t.Errorf("delivered in the end (-want +got):\n%s", diff)
		}
		in.lanes.Close()
	})
}
