package owner

// The ask tool of the thread's MCP server (mcpgate.ToolAsk): for agents
// without elicitation, a question asked through the gateway's tool is the
// agent's question like any other: it goes to the thread's owner as the
// same event (Question), so it is shown, answered, timed out and stopped
// as one (machine_questions.go).

import (
	"context"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/mcpgate"
)

// askField is the name of the one field of an ask question.
const askField = "answer"

// askQuestion is the agent's question the ask tool asks: a single choice
// of options, or a text field when there are none.
func askQuestion(question string, options []string) agent.Question {
	f := agent.Field{Name: askField, Kind: agent.FieldText, Required: true}
	if len(options) > 0 {
		f.Kind = agent.FieldChoice
		for _, o := range options {
			f.Choices = append(f.Choices, agent.Choice{Value: o, Title: o})
		}
	}
	return agent.Question{Mode: "form", Message: question, Fields: []agent.Field{f}}
}

// Ask asks question through the thread's owner and waits for it to be
// settled; ctx ending (the server closing) withdraws it. Outside a turn
// it is refused (errNoTurn).
func (m mcpThread) Ask(ctx context.Context, question string, options []string) (mcpgate.Answer, error) {
	a, err := m.t.ask(ctx, askQuestion(question, options), true)
	if err != nil {
		return mcpgate.Answer{}, err
	}
	out := mcpgate.Answer{Action: a.Action}
	if a.Action == agent.Accept {
		s, ok := a.Content[askField].(string)
		if !ok {
			// An accepted form always carries its required field.
			out.Action = agent.Cancel
		}
		out.Text = s
	}
	return out, nil
}
