package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/acpgw/gateway/acpwire"
)

// FuzzUnstableModels: the unstable models of any session/new result are
// read without a panic, every model with an id and a name.
func FuzzUnstableModels(f *testing.F) {
	line, err := os.ReadFile("testdata/gemini-cli.models.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(line)
	f.Add([]byte(`{"availableModels":null,"currentModelId":""}`))
	f.Add([]byte(`{"availableModels":[{"modelId":""},{"modelId":"m"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := unstableModels(raw)
		if m == nil {
			return
		}
		for _, md := range m.Available {
			if md.ID == "" || md.Name == "" {
				t.Fatalf("a model without an id or name: %+v", md)
			}
		}
	})
}

// TestTapReadsGeminiModels: the result of a session/new as Gemini CLI
// 0.61.0 sent it (recorded) leaves its models for the session, and the
// answer to the tap's own request does not reach the SDK.
func TestTapReadsGeminiModels(t *testing.T) {
	models, err := os.ReadFile("testdata/gemini-cli.models.json")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{stdin: discard{}}
	if _, err := tp.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/workspace","mcpServers":[]}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	line := `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"97edeb06","modes":{"availableModes":[],"currentModeId":"default"},"models":` + strings.TrimSpace(string(models)) + `}}`
	var f acpwire.Frame
	if err := acpwire.Decode([]byte(line), &f); err != nil {
		t.Fatal(err)
	}
	if tp.response(&f) {
		t.Fatal("the SDK's own answer was kept from it")
	}
	m := unstableModels(tp.takeModels("97edeb06"))
	if m == nil || m.Current != "auto" || len(m.Available) != 4 || m.Available[1].ID != "gemini-2.5-pro" || m.Available[0].Name != "Auto" {
		t.Fatalf("models %+v", m)
	}
	tp.calls = map[string]chan rawReply{"s:acpgw-1": make(chan rawReply, 1)}
	if err := acpwire.Decode([]byte(`{"jsonrpc":"2.0","id":"acpgw-1","result":{}}`), &f); err != nil {
		t.Fatal(err)
	}
	if !tp.response(&f) {
		t.Fatal("the answer to the tap's own request went on to the SDK")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
