package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/internal/agenttest"
)

// The table is written from the records, a README that matches passes the
// check, and one that claims a feature no test proved, misses one a test
// proved, or lacks a row fails it, naming the cell; -skip keeps a
// package's row as the README has it.
func TestCheckAndWrite(t *testing.T) {
	dir := t.TempDir()
	lines := `{"package":"@google/gemini-cli","version":"0.61.0","feature":"text","test":"T/gemini"}
{"package":"@google/gemini-cli","version":"0.61.0","feature":"stop","test":"T/gemini"}
{"package":"opencode-ai","version":"1.18.33","feature":"modes","test":"T/opencode"}
`
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(t.TempDir(), "README.md")
	doc := "# x\n\n" + BeginMarker + "\n" + EndMarker + "\n\nafter\n"
	if err := os.WriteFile(readme, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(readme, dir, false, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "@google/gemini-cli 0.61.0: tests ran it, and the README has no row for it") {
		t.Fatalf("check of an empty table: %v", err)
	}
	if err := run(readme, dir, true, nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := run(readme, dir, false, nil, io.Discard); err != nil {
		t.Fatalf("check after write: %v", err)
	}
	b, _ := os.ReadFile(readme)
	got := string(b)
	want := "| `@google/gemini-cli` | 0.61.0 | ✅ | – | – | ✅ | – | – | – | – | – | – |\n"
	if !strings.Contains(got, want) || !strings.HasSuffix(got, EndMarker+"\n\nafter\n") || !strings.HasPrefix(got, "# x\n\n"+BeginMarker+"\n| agent | version |") {
		t.Fatalf("README after write:\n%s\nwant the row %q", got, want)
	}

	claims := strings.Replace(got, want, strings.Replace(want, "| – | ✅ |", "| ✅ | ✅ |", 1), 1)
	if err := os.WriteFile(readme, []byte(claims), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(readme, dir, false, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "@google/gemini-cli 0.61.0: the README claims permissions, which no test proved") {
		t.Fatalf("check of a claim: %v", err)
	}
	// A run that could not install Gemini CLI keeps its row.
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(lines[strings.Index(lines, `{"package":"opencode-ai"`):]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(readme, dir, false, []string{"@google/gemini-cli"}, io.Discard); err != nil {
		t.Fatalf("check with -skip: %v", err)
	}
	if err := run(readme, dir, false, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "the README has a row no test ran") {
		t.Fatalf("check without -skip of a row no test ran: %v", err)
	}
	missing := strings.Replace(got, "| `opencode-ai` | 1.18.33 | – | – | – | – | – | ✅ |", "| `opencode-ai` | 1.18.33 | – | – | – | – | – | – |", 1)
	if err := os.WriteFile(readme, []byte(missing), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(readme, dir, false, []string{"@google/gemini-cli"}, io.Discard); err == nil || !strings.Contains(err.Error(), "opencode-ai 1.18.33: a test proved modes, which the README does not claim") {
		t.Fatalf("check of a missing claim: %v", err)
	}
}

// A record of an unknown feature is refused, naming the file and line.
func TestBadRecord(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(`{"package":"p","version":"1","feature":"teleport"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load(dir); err == nil || !strings.Contains(err.Error(), "x.jsonl:1: unknown feature") {
		t.Fatalf("load = %v", err)
	}
}

// Proved appends a line for each feature once the test passed, and the
// version is the one package-lock.json pins.
func TestProved(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(agenttest.CompatVar, dir)
	t.Run("passes", func(t *testing.T) {
		agenttest.Proved(t, agenttest.Qwen.Pin(), agenttest.Text, agenttest.Stop)
	})
	rows, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := agenttest.PinnedVersion(agenttest.Qwen.Pin())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Package != agenttest.Qwen.Package || rows[0].Version != v || len(rows[0].Has) != 2 || !rows[0].Has[agenttest.Stop] {
		t.Fatalf("rows %+v, want %s %s with text and stop", rows, agenttest.Qwen.Package, v)
	}
}
