package agent

import (
	"log/slog"
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
// 0.61.0 sent it (recorded) leaves its models for the session and goes
// to the call waiting for it; an answer no call waits for is dropped.
func TestTapReadsGeminiModels(t *testing.T) {
	models, err := os.ReadFile("testdata/gemini-cli.models.json")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{stdin: discard{}, log: slog.New(slog.DiscardHandler)}
	if _, err := tp.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/workspace","mcpServers":[]}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan rawReply, 1)
	tp.calls = map[string]chan rawReply{"n:2": waiting}
	line := `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"97edeb06","modes":{"availableModes":[],"currentModeId":"default"},"models":` + strings.TrimSpace(string(models)) + `}}`
	var f acpwire.Frame
	if err := acpwire.Decode([]byte(line), &f); err != nil {
		t.Fatal(err)
	}
	tp.watchResult(&f)
	tp.deliver(&f)
	select {
	case r := <-waiting:
		if !strings.Contains(string(r.result), `"sessionId":"97edeb06"`) || r.err != nil {
			t.Errorf("the call got %s, %v", r.result, r.err)
		}
	default:
		t.Fatal("the answer did not reach the call waiting for it")
	}
	m := unstableModels(tp.takeModels("97edeb06"))
	if m == nil || m.Current != "auto" || len(m.Available) != 4 || m.Available[1].ID != "gemini-2.5-pro" || m.Available[0].Name != "Auto" {
		t.Fatalf("models %+v", m)
	}
	if err := acpwire.Decode([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`), &f); err != nil {
		t.Fatal(err)
	}
	tp.deliver(&f) // no call waits: dropped, not a panic or a block
	if len(tp.calls) != 0 {
		t.Errorf("calls left: %v", tp.calls)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
