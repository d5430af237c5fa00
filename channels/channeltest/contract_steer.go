package channeltest

import (
	"fmt"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// testPromptMany: a choice of many options (a select menu on platforms
// that have one) is shown, and a pick of the last comes back.
func testPromptMany(t *testing.T, h Harness) {
	pr, ok := channels.As[channels.Prompter](h.Adapter)
	if !ok {
		t.Skip("not a Prompter")
	}
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	var opts []channels.Option
	for i := range 12 {
		opts = append(opts, channels.Option{ID: fmt.Sprintf("model-%d", i), Label: fmt.Sprintf("Model %d", i)})
	}
	hd, err := pr.Prompt(ctx, h.Thread, channels.Choice{Text: "Which model?", Options: opts})
	if err != nil {
		t.Fatalf("Prompt of 12 options: %v", err)
	}
	checkHandle(t, "Prompt", h, hd)
	author := h.author(channels.Author{ID: "u-clicker", Name: "Clicker"})
	if err := h.Click(ctx, author, hd, "model-11"); err != nil {
		t.Fatalf("Click: %v", err)
	}
	in := run.next(ctx, t)
	if in.Choice == nil || in.Choice.Prompt.ID != hd.ID || in.Choice.OptionID != "model-11" {
		t.Fatalf("inbound after the pick = %+v, want the choice model-11 of the prompt", in)
	}
}

// testCommands: the gateway's commands can be set.
func testCommands(t *testing.T, h Harness) {
	c, ok := channels.As[channels.Commander](h.Adapter)
	if !ok {
		t.Skip("not a Commander")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	if err := c.SetCommands(ctx, channels.Commands()); err != nil {
		t.Fatalf("SetCommands: %v", err)
	}
}
