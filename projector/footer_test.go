package projector

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFooter(t *testing.T) {
	compact := settings(func(s *Settings) { s.Footer = FooterCompact })
	withCost := func(used, size int64, cost float64, currency string) *Update {
		u := usage(used, size, true)
		u.Usage.Cost, u.Usage.Currency, u.Usage.CostKnown = cost, currency, true
		return u
	}
	tests := []struct {
		name    string
		set     Settings
		elapsed time.Duration
		stop    string
		ups     []*Update
		want    []string
	}{
		{"off by default", DefaultSettings(), 3 * time.Second, "end_turn",
			[]*Update{toolCall("t1", "ls", "execute", "completed", ""), withCost(31000, 74000, 0.21, "USD")},
			[]string{"tool:t1:🛠️ ls · done", "end:end_turn"}},
		{"everything known", compact, 2*time.Minute + 40*time.Second, "end_turn",
			[]*Update{toolCall("t1", "ls", "execute", "completed", ""), toolCall("t2", "cat", "read", "completed", ""),
				withCost(31234, 74000, 0.2149, "USD")},
			[]string{"tool:t1:🛠️ ls · done", "tool:t2:📖 cat · done",
				"status:⏱ 2m 40s · 🛠 2 tools · 31k tokens · 42% context · $0.21", "end:end_turn"}},
		{"one tool, no usage", compact, 1500 * time.Millisecond, "end_turn",
			[]*Update{toolCall("t1", "ls", "execute", "completed", "")},
			[]string{"tool:t1:🛠️ ls · done", "status:⏱ 2s · 🛠 1 tool", "end:end_turn"}},
		{"tokens without size, another currency", compact, time.Hour + 5*time.Minute + 9*time.Second, "end_turn",
			[]*Update{withCost(4230, 0, 1.5, "EUR"), msg("hi")},
			[]string{"text:hi", "status:⏱ 1h 5m · 4.2k tokens · 1.50 EUR", "end:end_turn"}},
		{"millions, time unknown", compact, -1, "end_turn",
			[]*Update{usage(1_250_000, 2_000_000, true)},
			[]string{"status:1.2M tokens · 63% context", "end:end_turn"}},
		{"a share under 1 %, as in the header", compact, -1, "end_turn",
			[]*Update{usage(2140, 258400, true)},
			[]string{"status:2.1k tokens · <1% context", "end:end_turn"}},
		{"a null used shows no tokens", compact, -1, "end_turn",
			[]*Update{usage(0, 1000, false)},
			[]string{"end:end_turn"}},
		{"nothing known: no line", compact, -1, "end_turn", nil, []string{"end:end_turn"}},
		{"a cancelled turn has one too", compact, 4 * time.Second, "cancelled",
			[]*Update{msg("part")},
			[]string{"text:part", "notice:⚙️ Stopped.", "status:⏱ 4s", "end:cancelled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.set)
			out := p.BeginTurn(nil)
			for _, u := range tt.ups {
				out = p.Apply(u, out)
			}
			out = p.EndTurnAfter(tt.elapsed, tt.stop, "", out)
			if got := brief(out); !cmp.Equal(got, tt.want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, tt.want))
			}
		})
	}
}

// The footer counts only this turn: the next turn starts from nothing
// but keeps the session's last context size for the share.
func TestFooterPerTurn(t *testing.T) {
	p := New(settings(func(s *Settings) { s.Footer = FooterCompact }))
	out := p.BeginTurn(nil)
	out = p.Apply(toolCall("t1", "ls", "execute", "completed", ""), out)
	out = p.Apply(usage(500, 1000, true), out)
	p.EndTurnAfter(time.Second, "end_turn", "", out)
	out = p.BeginTurn(nil)
	out = p.EndTurnAfter(time.Second, "end_turn", "", out)
	if got, want := brief(out), []string{"status:⏱ 1s", "end:end_turn"}; !cmp.Equal(got, want) {
		t.Errorf("second turn (-got +want):\n%s", cmp.Diff(got, want))
	}
}
