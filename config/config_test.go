package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/projector"
)

func TestDefaults(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.ACP.Stream.MetaMode, "minimal"; got != want {
		t.Errorf("metaMode = %q, want %q", got, want)
	}
	if got, want := cfg.ACP.Stream.MaxTurnChars, 24000; got != want {
		t.Errorf("maxTurnChars = %d, want %d", got, want)
	}
}

func writeYAML(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFileAndSet(t *testing.T) {
	p := writeYAML(t, `
acp:
  stream:
    metaMode: verbose
    maxTurnChars: 500
    tagVisibility:
      plan: true
typing:
  mode: message
  ttl: 2m
`)
	cfg, err := Load(p, []string{"acp.stream.showUsage=true", "acp.stream.maxTurnChars=900"})
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.ACP.Stream
	if s.MetaMode != projector.MetaVerbose || !s.ShowUsage || s.MaxTurnChars != 900 || !s.TagVisibility["plan"] {
		t.Errorf("stream = %+v", s)
	}
	if s.MaxStatusChars != 320 {
		t.Errorf("an unset key lost its default: maxStatusChars = %d", s.MaxStatusChars)
	}
	if cfg.Typing.Mode != "message" || cfg.Typing.TTL != 2*time.Minute {
		t.Errorf("typing = %+v", cfg.Typing)
	}
}

func TestErrorsNameKeysAndAllowedValues(t *testing.T) {
	p := writeYAML(t, `
acp:
  stream:
    metaMode: quiet
    deliveryMode: later
    maxTurnChars: 0
    metaMod: off
typing:
  mode: sometimes
`)
	_, err := Load(p, nil)
	if err == nil {
		t.Fatal("no error for an invalid config")
	}
	msg := err.Error()
	for _, want := range []string{
		`acp.stream.metaMode: must be one of off minimal verbose, got "quiet"`,
		`acp.stream.deliveryMode: must be one of live final_only, got "later"`,
		`acp.stream.maxTurnChars: must be at least 1, got 0`,
		`acp.stream.metaMod: unknown key (did you mean acp.stream.metaMode?)`,
		`typing.mode: must be one of instant message never, got "sometimes"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q; got:\n%s", want, msg)
		}
	}
}

func TestBadSet(t *testing.T) {
	if _, err := Load("", []string{"acp.stream.metaMode"}); err == nil || !strings.Contains(err.Error(), "want key=value") {
		t.Errorf("err = %v, want a key=value complaint", err)
	}
	if _, err := Load("", []string{"acp.stream.maxTurnChars=lots"}); err == nil {
		t.Error("a non-number for maxTurnChars was accepted")
	}
}
