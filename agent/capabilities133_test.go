package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/acpgw/gateway/agent"
)

// TestACP133Capabilities: initialize advertises the ACP 1.33 features the
// gateway handles: notices, compaction and boolean config options under
// session, plan operations.
func TestACP133Capabilities(t *testing.T) {
	var fr frames
	start(t, demoSpec(t.TempDir()), agent.Options{Frames: fr.sink})
	fr.mu.Lock()
	line := fr.lines[0]
	fr.mu.Unlock()
	var init struct {
		Params struct {
			Caps struct {
				Session map[string]json.RawMessage `json:"session"`
				Plans   json.RawMessage            `json:"planCapabilities"`
			} `json:"clientCapabilities"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &init); err != nil {
		t.Fatal(err)
	}
	c := init.Params.Caps
	for _, k := range []string{"notices", "compaction"} {
		if string(c.Session[k]) != "{}" {
			t.Errorf("session.%s = %s, want {} (initialize %s)", k, c.Session[k], line)
		}
	}
	if string(c.Session["configOptions"]) != `{"boolean":{}}` {
		t.Errorf("session.configOptions = %s, want boolean", c.Session["configOptions"])
	}
	if string(c.Plans) != "{}" {
		t.Errorf("planCapabilities = %s, want {}", c.Plans)
	}
}
