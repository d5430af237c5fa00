package sysmsg

import (
	"strings"
	"time"
	"unicode/utf8"
)

// The agent's questions (elicitation), as the thread shows them and
// folds them once settled.

// FormTitle is the title of a question's form: the agent's title cut to
// 45 code points (Discord's limit), or "The agent asks" when it gave none.
func FormTitle(title string) string {
	if strings.TrimSpace(title) == "" {
		return "The agent asks"
	}
	return oneLine(title, 45)
}

// Asked shows an agent's question where no form can: its Message, the URL
// to open (url questions), and, when Unanswerable (the chat has neither
// forms nor buttons for it), that it is cancelled after Timeout or by a
// stop.
type Asked struct {
	Message, URL string
	Unanswerable bool
	Timeout      time.Duration
}

func (a Asked) Body() string {
	s := "❓ " + a.Message
	if a.URL != "" {
		s += "\n" + a.URL
	}
	if a.Unanswerable {
		s += "\nThis chat cannot show the form to answer it: it is cancelled in " + a.Timeout.Round(time.Second).String() + " or by a stop."
	}
	return s
}

// QA is one field of an answer: its label and the values given.
type QA struct {
	Field  string
	Values []string
}

// Decline labels the button that declines to answer a question.
const Decline = "Decline"

// QuestionSettled is an agent's question folded to one line once
// settled: answered (Action "accept" with Answers, or Done at the link,
// By someone or as the agent says; "decline"), Expired after After without an answer, cancelled at a
// Restart, because it was NotShown, or by a stop (By).
type QuestionSettled struct {
	Question string
	Action   string
	Answers  []QA
	By       string
	Done     bool
	Expired  bool
	After    time.Duration
	Restart  bool
	NotShown bool
}

func (q QuestionSettled) Body() string {
	s := "❓ " + oneLine(q.Question, 120) + " — "
	switch {
	case q.Action == "accept" && q.Done && q.By != "":
		return s + "✅ done at the link (" + q.By + ")"
	case q.Action == "accept" && q.Done:
		return s + "✅ done at the link"
	case q.Action == "accept":
		var parts []string
		for _, a := range q.Answers {
			v := strings.Join(a.Values, ", ")
			if len(q.Answers) == 1 {
				parts = append(parts, v)
				break
			}
			parts = append(parts, a.Field+": "+v)
		}
		ans := strings.Join(parts, "; ")
		if ans == "" {
			ans = "answered"
		}
		return s + "✅ " + oneLine(ans, 300) + " (" + q.By + ")"
	case q.Action == "decline":
		return s + "❌ declined by " + q.By
	case q.Expired:
		return s + "⏱️ no answer within " + q.After.Round(time.Second).String() + "; cancelled"
	case q.Restart:
		return s + "⏱️ cancelled: the gateway restarted"
	case q.NotShown:
		return s + "⏹️ cancelled: the question could not be shown in this thread"
	case q.By != "":
		return s + "⏹️ cancelled (stopped by " + q.By + ")"
	}
	return s + "⏹️ cancelled"
}

// BadAnswer tells the person their answer to a question cannot be taken
// (Err says why); the question still waits.
type BadAnswer struct{ Err string }

func (b BadAnswer) Body() string {
	return "That answer cannot be taken: " + b.Err + ". The question is still waiting."
}

// oneLine is the first line of s, cut to max code points with "…".
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return s
}
