package sessiontest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Prompts returns the prompts the demo agent received in its session id,
// first to last, as it recorded them in stateDir (see DemoAgent): what
// the agent was sent, not what the gateway meant to send.
func Prompts(stateDir, id string) ([]string, error) {
	if id == "" || filepath.Base(id) != id {
		return nil, fmt.Errorf("sessiontest: %q is not a session id", id)
	}
	b, err := os.ReadFile(filepath.Join(stateDir, id+".json"))
	if err != nil {
		return nil, fmt.Errorf("sessiontest: the demo agent's session: %w", err)
	}
	var rec struct {
		History []struct {
			Role string `json:"role"`
			Text string `json:"text"`
		} `json:"history"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("sessiontest: the demo agent's session %s: %w", id, err)
	}
	var out []string
	for _, m := range rec.History {
		if m.Role == "user" {
			out = append(out, m.Text)
		}
	}
	return out, nil
}
