package gateway_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels/attach"
)

// size writes n bytes the way the README's Limits table does: 256 KiB,
// 5 MiB.
func size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// TestREADMELimits checks that the README's Limits table states the
// limits on the files people attach as the code enforces them (the web
// chat's own limits are checked in channels/web).
func TestREADMELimits(t *testing.T) {
	text := readme(t)
	i := strings.Index(text, "## Limits\n")
	if i < 0 {
		t.Fatal("README.md has no Limits section")
	}
	rows := map[string]string{}
	for _, row := range tableRows(text[i:]) {
		cells := strings.Split(row, "|")
		if len(cells) >= 3 {
			rows[strings.TrimSpace(cells[1])] = cells[2]
		}
	}
	for _, c := range []struct{ row, want string }{
		{"attached text files", size(attach.MaxFile) + " each"},
		{"attached text files", size(attach.MaxTotal) + " per message"},
		{"attached images", size(attach.MaxImage) + " each"},
		{"attached images", fmt.Sprintf("%s, %s and %s per message", size(attach.MaxImage)+" each", numberWord(attach.MaxImages), size(attach.MaxImageTotal))},
	} {
		got, ok := rows[c.row]
		if !ok {
			t.Errorf("the Limits table has no row %q", c.row)
			continue
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("the Limits row %q says %q, want it to say %q", c.row, strings.TrimSpace(got), c.want)
		}
	}
}

// numberWord writes a small count as the README does.
func numberWord(n int) string {
	if words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}; n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

// TestLicense checks that the repository carries its licence, Apache-2.0,
// at the root.
func TestLicense(t *testing.T) {
	b, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("LICENSE lacks %q: not the Apache License 2.0", want)
		}
	}
}
