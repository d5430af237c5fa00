package owner

// /usage: the thread's turns, tokens and cost, the channel's today, and
// how much of each budget is used.

import (
	"context"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// showUsage answers /usage privately where the platform can: what the
// owner knows (the context, the running turn, the budgets, a hold) taken
// now, the store's spend read on a child goroutine.
func (t *Thread) showUsage(in channels.Inbound) {
	var u sysmsg.Usage
	last := t.proj.LastUsage()
	u.Tokens, u.TokensKnown = last.Used, last.UsedKnown
	if last.SizeKnown {
		u.Size = last.Size
	}
	u.Currency = last.Currency
	var running float64
	runningKnown := false
	if tu := t.cur; tu != nil {
		// The running turn counts too.
		usage, frames := t.proj.TurnUsage()
		_, _, running, runningKnown, _ = turnSpend(usage, frames, tu.budget.sessionCost)
	}
	if h, ok := t.m.Held(); ok {
		u.Held = h
	}
	b := t.d.Host.PolicyFor(t.ref, t.space).Budgets
	ctx, st, ref, log := t.ctx, t.d.Store, t.ref, t.d.Log
	t.d.WG.Go(func() {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if sp, err := st.ThreadSpend(ctx, ref); err == nil {
			u.Turns, u.Cost, u.CostKnown = sp.Turns, sp.Cost, sp.CostKnown
		} else {
			log.Warn("cannot read the thread's usage", "thread", ref, "err", err)
		}
		if sp, err := st.ChannelSpend(ctx, ref.Platform, ref.Channel, dayStart(time.Now())); err == nil {
			u.ChannelTurns, u.ChannelCost, u.ChannelCostKnown = sp.Turns, sp.Cost, sp.CostKnown
		} else {
			log.Warn("cannot read the channel's usage", "thread", ref, "err", err)
		}
		if runningKnown {
			u.Cost, u.CostKnown = u.Cost+running, true
			u.ChannelCost, u.ChannelCostKnown = u.ChannelCost+running, true
		}
		u.Budgets = budgetUses(b, u)
		t.reply(in, u)
	})
}

// budgetUses is how much of each of b's budgets u used.
func budgetUses(b Budgets, u sysmsg.Usage) []sysmsg.BudgetUse {
	var out []sysmsg.BudgetUse
	if b.TokensPerTurn > 0 {
		used := int64(0)
		if u.TokensKnown {
			used = u.Tokens
		}
		out = append(out, sysmsg.BudgetUse{Budget: sysmsg.BudgetTurnTokens, Used: float64(used), Limit: float64(b.TokensPerTurn), Unknown: !u.TokensKnown && u.Turns > 0})
	}
	if b.CostPerThread > 0 {
		out = append(out, sysmsg.BudgetUse{Budget: sysmsg.BudgetThreadCost, Used: u.Cost, Limit: b.CostPerThread, Unknown: !u.CostKnown && u.Turns > 0})
	}
	if b.CostPerChannelDay > 0 {
		out = append(out, sysmsg.BudgetUse{Budget: sysmsg.BudgetChannelDayCost, Used: u.ChannelCost, Limit: b.CostPerChannelDay, Unknown: !u.ChannelCostKnown && u.ChannelTurns > 0})
	}
	return out
}
