package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEStatesTheWebLimits checks that the README's Limits table
// states what the web chat takes in one message as the code enforces it.
func TestREADMEStatesTheWebLimits(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("| a message written in the web chat | %d KiB of text and %d files (%d MiB request body) |",
		maxTextBytes>>10, maxUploads, maxMessageBodyBytes>>20)
	if !strings.Contains(string(b), want+"\n") {
		t.Errorf("README.md's Limits table lacks the row\n%s", want)
	}
}
