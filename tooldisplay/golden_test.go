package tooldisplay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/summary.golden with the current output")

// goldenCase is one line of testdata/summary.golden: a tool call and the
// Summary expected for it. Input holds RawInput when it is valid JSON,
// InputText when it is not.
type goldenCase struct {
	Name      string          `json:"name"`
	Kind      string          `json:"kind,omitempty"`
	Title     string          `json:"title,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	InputText string          `json:"inputText,omitempty"`
	Status    string          `json:"status,omitempty"`
	Locations []string        `json:"locations,omitempty"`
	Want      string          `json:"want"`
}

func (g goldenCase) call() Call {
	raw := []byte(g.Input)
	if g.InputText != "" {
		raw = []byte(g.InputText)
	}
	return Call{Kind: g.Kind, Title: g.Title, RawInput: raw, Status: g.Status, Locations: g.Locations}
}

// TestSummaryGolden checks Summary against testdata/summary.golden, one JSON
// object per line. To add a case, append a line with an empty "want" and run
// go test ./tooldisplay -update, then review the diff.
func TestSummaryGolden(t *testing.T) {
	file := filepath.Join("testdata", "summary.golden")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var g goldenCase
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		cases = append(cases, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	if *update {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for _, g := range cases {
			g.Want = Summary(g.call())
			if err := enc.Encode(g); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}

	for _, g := range cases {
		t.Run(g.Name, func(t *testing.T) {
			if got := Summary(g.call()); got != g.Want {
				t.Errorf("Summary(%s) = %q, want %q (run go test ./tooldisplay -update to accept)", formatCall(g.call()), got, g.Want)
			}
		})
	}
}
