package slack

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
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
	if in.Choice != nil {
		what = "choice " + in.Choice.OptionID
	}
	return in.Thread.Thread + " " + in.Author.Name + ": " + what
}
