package session_test

import (
	"context"
	"slices"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// A request for the agent's commands (channels.AgentCommandPicker) gets
// the commands the agent announced, with their descriptions, those that
// match what was typed (by name, with or without "/", or description).
func TestSuggestAgentCommands(t *testing.T) {
	e := newEnv(t, envOptions{})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "agent-commands"}
	ask := func(typed string) []channels.Option {
		t.Helper()
		got := make(chan []channels.Option, 1)
		in := channels.Inbound{Thread: th, Author: ann, Command: &channels.Command{Name: channels.AgentCommandPicker, Args: typed},
			Suggest: func(_ context.Context, opts []channels.Option) error { got <- opts; return nil }}
		if err := e.rec.Deliver(e.ctx(), in); err != nil {
			t.Fatal(err)
		}
		select {
		case opts := <-got:
			return opts
		case <-e.ctx().Done():
			t.Fatalf("no suggestions after %q", typed)
			return nil
		}
	}
	e.say(th, ann, "hello")
	e.waitEnd(th)
	help := channels.Option{ID: "help", Label: "help — List the demo scenarios"}
	stop := channels.Option{ID: "stop", Label: "stop — Say that there is nothing to stop"}
	for _, c := range []struct {
		typed string
		want  []channels.Option
	}{
		{"", []channels.Option{help, stop}},
		{"/HEL", []channels.Option{help}},
		{"scenarios", []channels.Option{help}},
		{"compact", nil},
	} {
		if got := ask(c.typed); !slices.Equal(got, c.want) {
			t.Errorf("after %q: suggestions %v, want %v", c.typed, got, c.want)
		}
	}
}
