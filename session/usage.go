package session

// /usage: the thread's turns, tokens and cost, the channel's today, and
// how much of each budget is used.

import (
	"context"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// UsageAsked: someone who may prompt gave /usage (In).
type UsageAsked struct{ In channels.Inbound }

// ShowUsage answers In with the thread's usage.
type ShowUsage struct{ In channels.Inbound }

func (UsageAsked) isEvent() {}
func (ShowUsage) isEffect() {}

// ownerCommand reports whether the thread's owner handles the gateway
// command name (besides stop, which the router sorts out).
func ownerCommand(name string) bool { return name == channels.CommandUsage }

// command handles a gateway command for the owner; false when e is none.
func (t *thread) command(e inboundEv) bool {
	if e.in.Command == nil || !ownerCommand(e.in.Command.Name) {
		return false
	}
	t.apply(UsageAsked{In: e.in})
	return true
}

// showUsage answers /usage privately where the platform can.
func (t *thread) showUsage(in channels.Inbound) {
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	st := t.r.o.Store
	var u sysmsg.Usage
	if sp, err := st.ThreadSpend(ctx, t.ref); err == nil {
		u.Turns, u.Cost, u.CostKnown = sp.Turns, sp.Cost, sp.CostKnown
	} else {
		t.r.log.Warn("cannot read the thread's usage", "thread", t.ref, "err", err)
	}
	now := time.Now()
	if sp, err := st.ChannelSpend(ctx, t.ref.Platform, t.ref.Channel, dayStart(now)); err == nil {
		u.ChannelTurns, u.ChannelCost, u.ChannelCostKnown = sp.Turns, sp.Cost, sp.CostKnown
	} else {
		t.r.log.Warn("cannot read the channel's usage", "thread", t.ref, "err", err)
	}
	last := t.proj.LastUsage()
	u.Tokens, u.TokensKnown = last.Used, last.UsedKnown
	if last.SizeKnown {
		u.Size = last.Size
	}
	u.Currency = last.Currency
	if tu := t.cur; tu != nil {
		// The running turn counts too.
		usage, frames := t.proj.TurnUsage()
		if _, _, inc, known, _ := turnSpend(usage, frames, tu.budget.sessionCost); known {
			u.Cost, u.CostKnown = u.Cost+inc, true
			u.ChannelCost, u.ChannelCostKnown = u.ChannelCost+inc, true
		}
	}
	b := t.r.policyFor(t.ref, t.space).Budgets
	if b.TokensPerTurn > 0 {
		used := int64(0)
		if u.TokensKnown {
			used = u.Tokens
		}
		u.Budgets = append(u.Budgets, sysmsg.BudgetUse{Budget: sysmsg.BudgetTurnTokens, Used: float64(used), Limit: float64(b.TokensPerTurn), Unknown: !u.TokensKnown && u.Turns > 0})
	}
	if b.CostPerThread > 0 {
		u.Budgets = append(u.Budgets, sysmsg.BudgetUse{Budget: sysmsg.BudgetThreadCost, Used: u.Cost, Limit: b.CostPerThread, Unknown: !u.CostKnown && u.Turns > 0})
	}
	if b.CostPerChannelDay > 0 {
		u.Budgets = append(u.Budgets, sysmsg.BudgetUse{Budget: sysmsg.BudgetChannelDayCost, Used: u.ChannelCost, Limit: b.CostPerChannelDay, Unknown: !u.ChannelCostKnown && u.ChannelTurns > 0})
	}
	if h, ok := t.m.Held(); ok {
		u.Held = h
	}
	t.reply(in, u)
}
