package owner

// The owner's side of budgets: measuring the running turn, recording and
// releasing holds, the Continue button.

import (
	"context"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// budgetBase is what a turn's budgets start from, read when it begins.
type budgetBase struct {
	sessionCost float64 // the session's cost so far (the agent's last report)
	thread      float64 // the thread's cost before the turn
	channelDay  float64 // the channel's cost today before the turn
}

// continuePrefix starts the id of a Continue prompt (Machine.held).
const continuePrefix = "budget-"

// continueOption is the option id of the Continue button.
const continueOption = "continue"

// budgetBaseFor reads what the turn starting now in session id starts
// from. Errors are logged; the budgets then count from zero.
func (t *Thread) budgetBaseFor(now time.Time, id string) budgetBase {
	var b budgetBase
	if t.policy.Budgets == (Budgets{}) {
		return b
	}
	if u := t.proj.LastUsage(); u.CostKnown {
		b.sessionCost = u.Cost
	}
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	st := t.d.Store
	if c, ok, err := st.SessionCost(ctx, id); err == nil && ok {
		b.sessionCost = max(b.sessionCost, c)
	} else if err != nil {
		t.d.Log.Warn("cannot read the session's cost for the budgets", "thread", t.ref, "err", err)
	}
	if sp, err := st.ThreadSpend(ctx, t.ref); err == nil {
		b.thread = sp.Cost
	} else {
		t.d.Log.Warn("cannot read the thread's cost for the budgets", "thread", t.ref, "err", err)
	}
	if sp, err := st.ChannelSpend(ctx, t.ref.Platform, t.ref.Channel, dayStart(now)); err == nil {
		b.channelDay = sp.Cost
	} else {
		t.d.Log.Warn("cannot read the channel's cost for the budgets", "thread", t.ref, "err", err)
	}
	return b
}

// checkBudgets tells the machine when the running turn reached a budget
// (after a usage report).
func (t *Thread) checkBudgets(u *projector.Update) {
	if u.Tag != projector.TagUsage || t.cur == nil || t.m.Stopped() || t.policy.Budgets == (Budgets{}) {
		return
	}
	usage, frames := t.proj.TurnUsage()
	tokens, tokensKnown, inc, costKnown, currency := turnSpend(usage, frames, t.cur.budget.sessionCost)
	s := spent{
		Tokens: tokens, TokensKnown: tokensKnown,
		Thread: t.cur.budget.thread + inc, ChannelDay: t.cur.budget.channelDay + inc,
		CostKnown: costKnown, Currency: currency,
	}
	if n, ok := t.policy.Budgets.reached(s); ok {
		t.d.Log.Info("budget reached; the turn is stopped", "thread", t.ref, "budget", n.Budget, "used", n.Used, "limit", n.Limit)
		t.apply(thread.BudgetReached{Notice: n})
	}
}

// restoreHold tells a thread brought back whether it waits for a
// Continue.
func (t *Thread) restoreHold() {
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	h, ok, err := t.d.Store.BudgetHoldOf(ctx, t.ref)
	if err != nil {
		t.d.Log.Error("cannot read the thread's budget hold", "thread", t.ref, "err", err)
		return
	}
	if ok {
		t.apply(thread.BudgetReached{Notice: sysmsg.BudgetReached{Budget: sysmsg.Budget(h.Budget)}, Restored: true})
	}
}

// isContinue reports whether a click is on a Continue button.
func isContinue(promptID string) bool { return strings.HasPrefix(promptID, continuePrefix) }

// performBudget performs the budget effects; false for any other.
func (t *Thread) performBudget(f thread.Effect) bool {
	st, ref, log := t.d.Store, t.ref, t.d.Log
	switch f := f.(type) {
	case thread.HoldBudget:
		h := store.BudgetHold{Thread: t.ref, Budget: string(f.Budget), Reached: time.Now()}
		t.saves.write("budget hold", "the budget reached", func(ctx context.Context) error { return st.PutBudgetHold(ctx, h) },
			func(err error) { log.Error("cannot record the budget reached", "thread", ref, "err", err) })
	case thread.AskContinue:
		c := channels.Choice{
			Text:    sysmsg.Text(sysmsg.BudgetWait{Budget: f.Budget}),
			Options: []channels.Option{{ID: f.ID + thread.OptionSep + continueOption, Label: sysmsg.ContinueLabel}},
		}
		t.runner.Prompt(f.ID, c, func(_ channels.Handle, err error) {
			if err != nil {
				t.d.Log.Error("the Continue button could not be shown", "thread", t.ref, "err", err)
			}
		})
	case thread.ReleaseBudget:
		t.saves.write("budget hold", "the Continue", func(ctx context.Context) error { return st.ClearBudgetHold(ctx, ref) },
			func(err error) { log.Error("cannot clear the budget hold", "thread", ref, "err", err) })
		t.notice(sysmsg.Continued{By: thread.DisplayName(f.By)})
	case thread.ShowUsage:
		t.showUsage(f.In)
	case thread.RefuseContinue:
		if in := t.replyTo; in != nil {
			t.reply(*in, f.Notice)
		}
	default:
		return false
	}
	return true
}
