package sysmsg

import "fmt"

// Budget names one of a channel's budgets by its key in the budgets
// section.
type Budget string

// The budgets.
const (
	BudgetTurnTokens     Budget = "tokensPerTurn"
	BudgetThreadCost     Budget = "costPerThread"
	BudgetChannelDayCost Budget = "costPerChannelDay"
)

// what says what a budget limits, for people.
func (b Budget) what() string {
	switch b {
	case BudgetTurnTokens:
		return "tokens per turn"
	case BudgetThreadCost:
		return "cost of this thread"
	case BudgetChannelDayCost:
		return "cost of this channel today"
	}
	return string(b)
}

// Stopper names a budget as the one who stopped a turn (Stopped.By).
func (b Budget) Stopper() string { return "the budget budgets." + string(b) }

// BudgetReached: the running turn reached Budget (Used of Limit: tokens,
// or an amount in Currency, "" being USD) and is stopped; the next prompt
// waits for an approver.
type BudgetReached struct {
	Budget      Budget
	Used, Limit float64
	Currency    string
}

func (b BudgetReached) Body() string {
	return fmt.Sprintf("Budget reached: %s, %s of %s (budgets.%s). The turn is stopped; the next prompt here waits for an approver's Continue.",
		b.Budget.what(), b.amount(b.Used), b.amount(b.Limit), b.Budget)
}

// amount renders a number of the budget: tokens, or money.
func (b BudgetReached) amount(v float64) string {
	switch {
	case b.Budget == BudgetTurnTokens:
		return fmt.Sprintf("%d tokens", int64(v))
	case b.Currency == "" || b.Currency == "USD":
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("%.2f %s", v, b.Currency)
}

// BudgetWait asks an approver whether the prompt waiting behind a budget
// reached (Budget) may run; its one button is ContinueLabel.
type BudgetWait struct{ Budget Budget }

func (b BudgetWait) Body() string {
	return fmt.Sprintf("A budget was reached here (%s, budgets.%s): the next prompt waits. An approver may let it run.", b.Budget.what(), b.Budget)
}

// ContinueLabel is the label of BudgetWait's button.
const ContinueLabel = "Continue"

// Continued: By let the prompts after a budget reached run.
type Continued struct{ By string }

func (c Continued) Body() string { return "Continued by " + c.By + "; the waiting prompt runs." }

// NotWaiting answers a Continue when nothing waits for one.
type NotWaiting struct{}

func (NotWaiting) Body() string { return "Nothing is waiting for a Continue here." }
