package gateway_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// braces matches a group of names in braces, channels/{discord,slack,web}.
var braces = regexp.MustCompile(`^(.*)\{([^}]*)\}(.*)$`)

// TestArchitecturePackages checks that the package table of
// ARCHITECTURE.md names every package of the module once, in its first
// column (a name with a brace group, channels/{discord,slack}, counts for
// each name in it), and names no package that does not exist.
func TestArchitecturePackages(t *testing.T) {
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "## Packages and who owns what\n")
	if i < 0 {
		t.Fatal("ARCHITECTURE.md has no section \"Packages and who owns what\"")
	}
	count := map[string]int{}
	for _, row := range tableRows(text[i:]) {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range mentioned.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			if g := braces.FindStringSubmatch(name); g != nil {
				for _, part := range strings.Split(g[2], ",") {
					count[g[1]+part+g[3]]++
				}
				continue
			}
			count[name]++
		}
	}
	pkgs := modulePackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages; is the test running from the module root?", len(pkgs))
	}
	for _, dir := range pkgs {
		if n := count[dir]; n != 1 {
			t.Errorf("ARCHITECTURE.md's package table names %s %d times, want once", dir, n)
		}
		delete(count, dir)
	}
	for name := range count {
		t.Errorf("ARCHITECTURE.md's package table names %s, which is not a package", name)
	}
}
