package sysmsg

import "testing"

func TestAgentCommandLabel(t *testing.T) {
	for _, c := range []struct{ name, desc, want string }{
		{"compact", "Compact the\nconversation ", "compact — Compact the conversation"},
		{"init", "  ", "init"},
	} {
		if got := AgentCommandLabel(c.name, c.desc); got != c.want {
			t.Errorf("AgentCommandLabel(%q, %q) = %q, want %q", c.name, c.desc, got, c.want)
		}
	}
}
