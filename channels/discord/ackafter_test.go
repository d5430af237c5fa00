package discord

import (
	"context"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// A slash command that prompts the agent is answered "Sent … to the
// agent" once the handler returned, so the handler's context is marked
// channels.AckAfterHandler (a cluster edge then returns only once the
// prompt is stored); a gateway command, answered later through Reply, is
// not.
func TestSlashPromptAcknowledgedAfterHandler(t *testing.T) {
	f := newFake(t)
	leaks := channeltest.LeakCheck(t)
	a := f.adapter(t, Options{})
	type handled struct {
		in     channels.Inbound
		marked bool
	}
	got := make(chan handled, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, func(ctx context.Context, in channels.Inbound) {
			got <- handled{in, channels.AcksAfterHandler(ctx)}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		leaks()
	})
	f.waitLive(testCtx(t))
	select {
	case <-a.ready:
	case <-testCtx(t).Done():
		t.Fatal("the adapter never handled READY")
	}
	if err := a.SetCommands(testCtx(t), testCommands()); err != nil {
		t.Fatal(err)
	}
	next := func() handled {
		t.Helper()
		select {
		case h := <-got:
			return h
		case <-testCtx(t).Done():
			t.Fatal("nothing delivered")
			return handled{}
		}
	}
	f.slash(ann, f.thread, "compact", "", "", false)
	if h := next(); h.in.Text != "/compact" || !h.marked {
		t.Errorf("the prompt /compact: delivered %q, marked %v; want it marked AckAfterHandler", h.in.Text, h.marked)
	}
	f.slash(ann, f.thread, "stop", "", "", false)
	if h := next(); h.in.Command == nil || h.marked {
		t.Errorf("the command /stop: delivered %+v, marked %v; want the command, not marked", h.in, h.marked)
	}
}
