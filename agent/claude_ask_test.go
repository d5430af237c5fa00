package agent_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/claudetest"
	"github.com/acpgw/gateway/internal/fakeanthropic"
)

// The AskUserQuestion interop test drives the claude-agent-acp release
// that turns Claude's AskUserQuestion tool into an elicitation (pinned in
// testdata/claude-ask) against the fake model API. It is opt-in like
// TestClaudeAgent (the same variable).
const (
	askPrompt   = "ask me which color"
	askQuestion = "Which color should the button be?"
	askReply    = "You chose Green."
)

// askModel is the fake model's script: AskUserQuestion for askPrompt, and
// once the tool's result comes back, a text that says what it holds.
func askModel(req fakeanthropic.Request) fakeanthropic.Reply {
	if b, ok := req.ToolResult(); ok {
		if strings.Contains(string(b.Content), `=\"Green\"`) { // "question"="answer"
			return fakeanthropic.Reply{Text: askReply}
		}
		return fakeanthropic.Reply{Text: "The tool result did not carry the answer: " + string(b.Content)}
	}
	if len(req.Tools) == 0 {
		return fakeanthropic.Reply{Text: "ok"} // not the main loop (a title, a summary)
	}
	if req.UserSaid(askPrompt) && !req.Called(fakeanthropic.DefaultToolID) {
		return fakeanthropic.Reply{
			ToolName:  "AskUserQuestion",
			ToolInput: `{"questions":[{"question":"` + askQuestion + `","header":"Color","multiSelect":false,"options":[{"label":"Red","description":"warm"},{"label":"Green","description":"calm"}]}]}`,
		}
	}
	return fakeanthropic.Reply{Text: "ok"}
}

// claudeAsker is a claudeHandler that answers each question with Green.
type claudeAsker struct {
	claudeHandler
	qmu   sync.Mutex
	asked []agent.Question
}

func (h *claudeAsker) Question(ctx context.Context, q agent.Question) agent.Answer {
	h.qmu.Lock()
	h.asked = append(h.asked, q)
	h.qmu.Unlock()
	if len(q.Fields) == 0 {
		return agent.Answer{Action: agent.Cancel}
	}
	return agent.Answer{Action: agent.Accept, Content: map[string]any{q.Fields[0].Name: "Green"}}
}

// TestClaudeAskUserQuestion: Claude's AskUserQuestion reaches the
// gateway as a form question with the model's options, and the answer
// reaches the model in the tool's result.
func TestClaudeAskUserQuestion(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), claudeTurnTimeout)
	defer cancel()
	cwd := t.TempDir()
	fake := fakeanthropic.New(t, askModel)
	spec := claudetest.Spec(t, claudetest.Asker, fake.URL, cwd)
	h := &claudeAsker{}
	p := start(t, spec, agent.Options{Logger: slog.New(slog.NewTextHandler(claudeLogWriter{t}, nil)), StopGrace: time.Second})
	s, err := p.NewSession(ctx, cwd, h)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	stop, err := s.Prompt(ctx, askPrompt)
	if err != nil || stop != "end_turn" {
		t.Fatalf("Prompt = %q, %v", stop, err)
	}
	h.qmu.Lock()
	asked := h.asked
	h.qmu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("asked %d questions, want 1: %+v", len(asked), asked)
	}
	q := asked[0]
	if q.Mode != "form" || q.Message != askQuestion || q.SessionID != s.ID || len(q.Fields) == 0 || q.Fields[0].Kind != agent.FieldChoice {
		t.Fatalf("question = %+v, want a form with a choice asking %q", q, askQuestion)
	}
	var choices []string
	for _, c := range q.Fields[0].Choices {
		choices = append(choices, c.Value)
	}
	if strings.Join(choices, ",") != "Red,Green" {
		t.Errorf("choices = %v, want Red, Green", choices)
	}
	updates, _, _ := h.snapshot()
	if text := strings.Join(textChunks(updates), ""); !strings.Contains(text, askReply) {
		t.Errorf("reply = %q, want %q (the answer reached the model)", text, askReply)
	}
	t.Logf("API requests: %q", fake.Paths())
}
