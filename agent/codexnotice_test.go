package agent_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/agenttest"
	"github.com/acpgw/gateway/internal/fakemodel"
	"github.com/acpgw/gateway/projector"
)

// TestCodexWarningIsANotice: codex-acp warns about a model it has no
// metadata for. To a client that did not advertise notices it glued the
// warning onto the answer as agent_message_chunk text (codex-acp
// 0.16.0: "Model metadata for `fake-model` not found…" before the
// reply, no separator); the gateway advertises notices (ACP 1.33), so
// the warning comes as a notice and the answer is only the model's text.
func TestCodexWarningIsANotice(t *testing.T) {
	a := agenttest.Codex
	cwd := t.TempDir()
	const hello, answer = "hello there", "Hi from the model."
	fake := fakemodel.New(t, fakemodel.Script{{Prompt: hello, Steps: []fakemodel.Step{{Text: answer, Chunks: 2}}}})
	spec := a.Spec(t, fake.URL, cwd)
	// A model name Codex has no metadata for.
	home := ""
	for _, e := range spec.Env {
		if v, ok := strings.CutPrefix(e, "CODEX_HOME="); ok {
			home = v
		}
	}
	conf := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(conf)
	if err != nil || !strings.Contains(string(b), "\nmodel = ") && !strings.HasPrefix(string(b), "model = ") {
		t.Fatalf("codex config %s: %v\n%s", conf, err, b)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "model = ") {
			lines[i] = `model = "fake-model"`
		}
	}
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), realTurnTimeout)
	defer cancel()
	p := start(t, spec, agent.Options{Logger: slog.New(slog.NewTextHandler(claudeLogWriter{t}, nil)), StopGrace: time.Second})
	h := &realHandler{}
	s, err := p.NewSession(ctx, cwd, h)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	got := h.turn(true)
	if stop, err := s.Prompt(ctx, hello); err != nil || stop != "end_turn" {
		t.Fatalf("Prompt = %q, %v; want end_turn", stop, err)
	}
	us, _ := got()
	if text := strings.Join(textChunks(us), ""); text != answer {
		t.Errorf("the answer is %q, want only the model's %q", text, answer)
	}
	var warned bool
	for _, u := range us {
		if u.Tag == projector.TagNotice && u.Notice.Severity == "warning" && strings.Contains(u.Notice.Title, "fake-model") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning notice about the model; updates: %+v", us)
	}
}
