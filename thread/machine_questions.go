package thread

// The agent's questions (ACP elicitation) in the thread machine: asked,
// answered (by the person who started the turn, or an approver), done at
// a link (url questions), expired, cancelled by a stop, withdrawn by the
// agent, or settled by the shutdown. They follow the permission prompts'
// life; the owner shows them (question.go).

import (
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// The question events.
type (
	// QuestionAsked: the agent asks people question ID; it waits at most
	// Timeout.
	QuestionAsked struct {
		ID      string
		Timeout time.Duration
	}
	// QuestionAnswer: By answered question ID with Action (channels'
	// accept, decline or cancel) and Values (by field, already checked
	// against the question). Approver says whether they may answer
	// prompts.
	QuestionAnswer struct {
		ID       string
		Action   channels.FormAction
		Values   map[string][]string
		By       channels.Author
		Approver bool
	}
	// QuestionDone: the agent says the person finished at the link of url
	// question ID (elicitation/complete).
	QuestionDone struct{ ID string }
	// QuestionUnshown: question ID could not be shown in the thread.
	QuestionUnshown struct{ ID string }
	// QuestionWithdrawn: the agent no longer waits for question ID.
	QuestionWithdrawn struct{ ID string }
)

func (QuestionAsked) isEvent()     {}
func (QuestionAnswer) isEvent()    {}
func (QuestionDone) isEvent()      {}
func (QuestionUnshown) isEvent()   {}
func (QuestionWithdrawn) isEvent() {}

// The question effects.
type (
	// ShowQuestion shows question ID.
	ShowQuestion struct{ ID string }
	// SettleQuestion answers question ID to the agent and folds it to
	// its outcome: Status answered (Action, Values, By; Done: finished at
	// the link), expired (cancel) or cancelled (By: who stopped;
	// NotShown: it could not be shown). Unshown: it was never shown
	// (asked after a stop): nothing to fold. Shutdown: the gateway stops.
	SettleQuestion struct {
		ID       string
		Status   store.PromptStatus
		Action   channels.FormAction
		Values   map[string][]string
		By       channels.Author
		Done     bool
		NotShown bool
		Unshown  bool
		Shutdown bool
	}
	// NotAsker answers someone who may not answer question ID: neither
	// the person who started the turn nor an approver.
	NotAsker struct{ ID string }
)

func (ShowQuestion) isEffect()   {}
func (SettleQuestion) isEffect() {}
func (NotAsker) isEffect()       {}

// asking is a question waiting for an answer.
type asking struct {
	id      string
	expires time.Time
	// asker started the turn the question belongs to ("" ID: no turn;
	// only approvers may answer).
	asker channels.Author
}

// question applies a question event.
func (m *Machine) question(now time.Time, e Event, fx []Effect) []Effect {
	switch e := e.(type) {
	case QuestionAsked:
		if m.shutting || (m.turn != nil && m.turn.stop != nil) {
			return append(fx, SettleQuestion{ID: e.ID, Status: store.PromptCancelled, Action: channels.FormCancel, Unshown: true})
		}
		q := asking{id: e.ID, expires: now.Add(e.Timeout)}
		if m.turn != nil {
			q.asker = m.turn.in.Author
		}
		m.asks = append(m.asks, q)
		fx = append(fx, ShowQuestion{ID: e.ID})
	case QuestionAnswer:
		q, ok := m.asked(e.ID)
		switch {
		case !ok:
			fx = append(fx, PromptNotWaiting{ID: e.ID})
		case !e.Approver && (q.asker.ID == "" || q.asker.ID != e.By.ID):
			fx = append(fx, NotAsker{ID: e.ID})
		default:
			m.dropQuestion(e.ID)
			action := e.Action
			if action != channels.FormAccept && action != channels.FormDecline {
				action = channels.FormCancel
			}
			fx = append(fx, SettleQuestion{ID: e.ID, Status: store.PromptAnswered, Action: action, Values: e.Values, By: e.By})
		}
	case QuestionDone:
		if m.dropQuestion(e.ID) {
			fx = append(fx, SettleQuestion{ID: e.ID, Status: store.PromptAnswered, Action: channels.FormAccept, Done: true})
		}
	case QuestionUnshown:
		if m.dropQuestion(e.ID) {
			fx = append(fx, SettleQuestion{ID: e.ID, Status: store.PromptCancelled, Action: channels.FormCancel, NotShown: true})
		}
	case QuestionWithdrawn:
		if m.dropQuestion(e.ID) {
			fx = append(fx, SettleQuestion{ID: e.ID, Status: store.PromptCancelled, Action: channels.FormCancel, By: channels.Author{Name: sysmsg.TheAgent}})
		}
	}
	return fx
}

// cancelQuestions answers every waiting question cancel: by stopped them.
func (m *Machine) cancelQuestions(by channels.Author, fx []Effect) []Effect {
	for _, q := range m.asks {
		fx = append(fx, SettleQuestion{ID: q.id, Status: store.PromptCancelled, Action: channels.FormCancel, By: by})
	}
	m.asks = nil
	return fx
}

// shutQuestions answers every waiting question cancel at the shutdown.
func (m *Machine) shutQuestions(fx []Effect) []Effect {
	for _, q := range m.asks {
		fx = append(fx, SettleQuestion{ID: q.id, Status: store.PromptExpired, Action: channels.FormCancel, Shutdown: true})
	}
	m.asks = nil
	return fx
}

// expireQuestions answers cancel to the questions whose time is up.
func (m *Machine) expireQuestions(now time.Time, fx []Effect) []Effect {
	kept := m.asks[:0]
	for _, q := range m.asks {
		if now.Before(q.expires) {
			kept = append(kept, q)
			continue
		}
		fx = append(fx, SettleQuestion{ID: q.id, Status: store.PromptExpired, Action: channels.FormCancel})
	}
	clear(m.asks[len(kept):])
	m.asks = kept
	if len(m.asks) == 0 {
		m.asks = nil
	}
	return fx
}

// questionWake is the earliest expiry of a waiting question, zero if none.
func (m *Machine) questionWake() time.Time {
	var w time.Time
	for _, q := range m.asks {
		if w.IsZero() || q.expires.Before(w) {
			w = q.expires
		}
	}
	return w
}

func (m *Machine) asked(id string) (asking, bool) {
	for _, q := range m.asks {
		if q.id == id {
			return q, true
		}
	}
	return asking{}, false
}

func (m *Machine) dropQuestion(id string) bool {
	for i, q := range m.asks {
		if q.id == id {
			m.asks = append(m.asks[:i], m.asks[i+1:]...)
			return true
		}
	}
	return false
}

// Asking reports whether question id waits for an answer.
func (m *Machine) Asking(id string) bool {
	_, ok := m.asked(id)
	return ok
}
