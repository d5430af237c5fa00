package acpwire

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// readLines returns the non-empty lines of a testdata file.
func readLines(tb testing.TB, name string) [][]byte {
	tb.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	var lines [][]byte
	for l := range bytes.Lines(data) {
		if l = bytes.TrimRight(l, "\r\n"); len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

// streamFiles returns the recorded streams in testdata.
func streamFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("testdata/*.ndjson")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no streams in testdata: %v", err)
	}
	return files
}
