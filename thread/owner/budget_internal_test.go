package owner

import (
	"testing"

	"github.com/acpgw/gateway/sysmsg"
)

func TestBudgetsReached(t *testing.T) {
	b := Budgets{TokensPerTurn: 30000, CostPerThread: 5, CostPerChannelDay: 20}
	for _, tc := range []struct {
		name string
		b    Budgets
		s    spent
		want string // the budget reached, "" none
	}{
		{"nothing reported", b, spent{}, ""},
		{"tokens under", b, spent{Tokens: 29999, TokensKnown: true}, ""},
		{"tokens at the limit", b, spent{Tokens: 30000, TokensKnown: true}, "⚙️ Budget reached: tokens per turn, 30000 tokens of 30000 tokens (budgets.tokensPerTurn). The turn is stopped; the next prompt here waits for an approver's Continue."},
		{"thread cost", b, spent{Thread: 5.01, ChannelDay: 6, CostKnown: true, Currency: "USD"}, "⚙️ Budget reached: cost of this thread, $5.01 of $5.00 (budgets.costPerThread). The turn is stopped; the next prompt here waits for an approver's Continue."},
		{"channel day cost", b, spent{Thread: 1, ChannelDay: 20, CostKnown: true, Currency: "EUR"}, "⚙️ Budget reached: cost of this channel today, 20.00 EUR of 20.00 EUR (budgets.costPerChannelDay). The turn is stopped; the next prompt here waits for an approver's Continue."},
		{"costs without a report this turn", b, spent{Thread: 50, ChannelDay: 50}, ""},
		{"no limits", Budgets{}, spent{Tokens: 1 << 40, TokensKnown: true, Thread: 1e9, ChannelDay: 1e9, CostKnown: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if r, ok := tc.b.reached(tc.s); ok {
				got = sysmsg.Text(r)
			}
			if got != tc.want {
				t.Errorf("reached = %q, want %q", got, tc.want)
			}
		})
	}
}
