package discord

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// TestChoiceAsSelectMenu: a choice of more than five options, or with a
// long label, is posted as one string select menu; a pick arrives as
// Inbound.Choice with the option's id (a long id mapped back), and a few
// short options stay buttons.
func TestChoiceAsSelectMenu(t *testing.T) {
	long := strings.Repeat("x", 150)
	many := []channels.Option{}
	for i := range 7 {
		many = append(many, channels.Option{ID: fmt.Sprintf("model-%d", i), Label: fmt.Sprintf("Model %d", i)})
	}
	many[6].ID = long
	cases := []struct {
		name string
		opts []channels.Option
		menu bool
		pick string
	}{
		{"many", many, true, long},
		{"long label", []channels.Option{{ID: "a", Label: "Allow this tool to run with every argument it asks for, in this folder and every folder below it, always"}, {ID: "d", Label: "Deny"}}, true, "d"},
		{"few", []channels.Option{{ID: "allow", Label: "Allow"}, {ID: "deny", Label: "Deny"}}, false, "deny"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			s := start(t, f, Options{})
			ctx := testCtx(t)
			h, err := s.a.Prompt(ctx, f.threadRef(), channels.Choice{Text: "Pick one", Options: c.opts})
			if err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			m, _ := f.message(string(h.ID))
			menu, values, ok := selectMenu(m)
			if ok != c.menu {
				t.Fatalf("select menu = %v, want %v (components %s)", ok, c.menu, m.Components)
			}
			if !ok {
				f.click(ann, f.thread, string(h.ID), c.pick)
			} else {
				if len(values) != len(c.opts) {
					t.Fatalf("menu has %d options, want %d", len(values), len(c.opts))
				}
				f.pick(ann, f.thread, string(h.ID), menu, values[len(values)-1])
			}
			in := s.next(t)
			if in.Intent() != channels.IntentChoice || in.Choice.OptionID != c.pick || in.Choice.Prompt.ID != h.ID {
				t.Errorf("inbound = %+v, want the choice %q of the prompt", in.Choice, c.pick)
			}
		})
	}
}
