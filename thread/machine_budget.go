package thread

// Budgets in the thread machine: a budget reached stops the running turn
// and holds the thread; the next prompt waits until an approver presses
// Continue.

import (
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// The budget events.
type (
	// BudgetReached: the owner found the running turn over a budget
	// (Notice says which, how much of how much). Restored: the hold was
	// read back from the store (a thread brought back); nothing is said
	// or recorded again.
	BudgetReached struct {
		Notice   sysmsg.BudgetReached
		Restored bool
	}
	// ContinueIn: By pressed Continue; Approver says whether they may.
	ContinueIn struct {
		By       channels.Author
		Approver bool
	}
)

func (BudgetReached) isEvent() {}
func (ContinueIn) isEvent()    {}

// The budget effects.
type (
	// HoldBudget records in the store that Budget was reached: the
	// thread's next prompt waits for a Continue.
	HoldBudget struct{ Budget sysmsg.Budget }
	// AskContinue shows the thread's Continue button (prompt ID).
	AskContinue struct {
		ID     string
		Budget sysmsg.Budget
	}
	// ReleaseBudget forgets the hold (store) after By pressed Continue;
	// the waiting prompt runs next. Ask is the Continue prompt's ID, ""
	// when none was shown.
	ReleaseBudget struct {
		By  channels.Author
		Ask string
	}
	// RefuseContinue answers a Continue that cannot be taken: Notice
	// says why (not an approver, nothing waiting).
	RefuseContinue struct{ Notice sysmsg.Notice }
)

func (HoldBudget) isEffect()     {}
func (AskContinue) isEffect()    {}
func (ReleaseBudget) isEffect()  {}
func (RefuseContinue) isEffect() {}

// hold is a budget reached: the thread waits for a Continue.
type hold struct {
	budget sysmsg.Budget
	ask    string // the Continue prompt shown, "" until a prompt waits
}

// budgetReached stops the running turn over a budget and holds the
// thread. The queue stays: its prompts wait for the Continue.
func (m *Machine) budgetReached(now time.Time, e BudgetReached, fx []Effect) []Effect {
	if e.Restored {
		if m.hold == nil {
			m.hold = &hold{budget: e.Notice.Budget}
		}
		return fx
	}
	tu := m.turn
	if m.shutting || tu == nil || tu.stop != nil {
		return fx // the turn ended or is stopping anyway
	}
	m.hold = &hold{budget: e.Notice.Budget}
	by := e.Notice.Budget.Stopper()
	tu.stop = &stopping{by: by, author: channels.Author{Name: by}, deadline: now.Add(m.cfg.Grace)}
	fx = append(fx, HoldBudget{Budget: e.Notice.Budget}, Notify{Notice: e.Notice})
	fx = m.cancelPrompts(channels.Author{Name: by}, fx)
	return append(fx, StopTyping{}, CancelTurn{})
}

// continueIn lets the prompts held by a budget run, if By may.
func (m *Machine) continueIn(e ContinueIn, fx []Effect) []Effect {
	switch {
	case m.hold == nil:
		return append(fx, RefuseContinue{Notice: sysmsg.NotWaiting{}})
	case !e.Approver:
		return append(fx, RefuseContinue{Notice: sysmsg.RefuseNotApprover})
	}
	ask := m.hold.ask
	m.hold = nil
	return append(fx, ReleaseBudget{By: e.By, Ask: ask})
}

// held reports whether the queue waits for a Continue; it asks for one
// the first time a prompt waits.
func (m *Machine) held(fx []Effect) (bool, []Effect) {
	if m.hold == nil {
		return false, fx
	}
	if m.hold.ask == "" && len(m.queue) > 0 && !m.shutting {
		m.seqAsk++
		m.hold.ask = fmt.Sprintf("budget-%d", m.seqAsk)
		fx = append(fx, AskContinue{ID: m.hold.ask, Budget: m.hold.budget})
	}
	return true, fx
}

// Held returns the budget the thread waits on, if any.
func (m *Machine) Held() (sysmsg.Budget, bool) {
	if m.hold == nil {
		return "", false
	}
	return m.hold.budget, true
}
