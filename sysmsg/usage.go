package sysmsg

import (
	"fmt"
	"strings"
)

// Usage answers /usage: the thread's turns, tokens and cost, the
// channel's today, and how much of each budget set is used.
type Usage struct {
	// Turns is the thread's recorded turns; Tokens the context tokens the
	// agent last reported (TokensKnown), Size its window (0: unknown).
	Turns       int
	Tokens      int64
	TokensKnown bool
	Size        int64
	// Cost is the thread's cost (CostKnown), in Currency ("" = USD).
	Cost      float64
	CostKnown bool
	Currency  string
	// ChannelTurns and ChannelCost are the channel's since midnight UTC;
	// ChannelCostKnown whether any of those turns reported a cost.
	ChannelTurns     int
	ChannelCost      float64
	ChannelCostKnown bool
	// Budgets are the budgets set, in the order tokens, thread, channel.
	Budgets []BudgetUse
	// Held names the budget whose Continue the thread waits for, "" none.
	Held Budget
}

// BudgetUse is how much of one budget is used; Unknown: the agent
// reported nothing to measure it by (shown as unknown, not as 0).
type BudgetUse struct {
	Budget      Budget
	Used, Limit float64
	Unknown     bool
}

func (u Usage) Body() string {
	money := func(v float64) string {
		return BudgetReached{Budget: BudgetThreadCost, Currency: u.Currency}.amount(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Usage of this thread: %d %s", u.Turns, plural(u.Turns, "turn", "turns"))
	if u.TokensKnown {
		fmt.Fprintf(&b, ", %d tokens in context", u.Tokens)
		if u.Size > 0 {
			fmt.Fprintf(&b, " (%d%% of %d)", u.Tokens*100/u.Size, u.Size)
		}
	}
	switch {
	case u.CostKnown:
		b.WriteString(", " + money(u.Cost))
	case u.Turns > 0:
		b.WriteString(", cost unknown (the agent reported none)")
	}
	channelCost := money(u.ChannelCost)
	if !u.ChannelCostKnown && u.ChannelTurns > 0 {
		channelCost = "cost unknown"
	}
	fmt.Fprintf(&b, ". This channel today: %d %s, %s.", u.ChannelTurns, plural(u.ChannelTurns, "turn", "turns"), channelCost)
	for _, bu := range u.Budgets {
		r := BudgetReached{Budget: bu.Budget, Currency: u.Currency}
		if bu.Unknown {
			fmt.Fprintf(&b, "\n- budgets.%s (%s): unknown of %s (the agent reported nothing to count)", bu.Budget, bu.Budget.what(), r.amount(bu.Limit))
			continue
		}
		pct := 0.0
		if bu.Limit > 0 {
			pct = bu.Used * 100 / bu.Limit
		}
		fmt.Fprintf(&b, "\n- budgets.%s (%s): %s of %s, %.0f%%", bu.Budget, bu.Budget.what(), r.amount(bu.Used), r.amount(bu.Limit), pct)
	}
	if len(u.Budgets) == 0 {
		b.WriteString(" No budgets are set here.")
	}
	if u.Held != "" {
		fmt.Fprintf(&b, "\nThe budget budgets.%s was reached: the next prompt waits for an approver's Continue.", u.Held)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
