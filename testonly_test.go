package gateway_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testOnly are the packages that exist for tests: the gateway's own code
// never imports them (they start fake servers and skip tests, or, like
// internal/agenttest/compat, are tools CI runs after the tests).
var testOnly = []string{"internal/fakeanthropic", "internal/claudetest", "internal/fakemodel", "internal/agenttest", "internal/agenttest/compat", "internal/streamplayer", "channels/channeltest/e2e"}

// TestTestPackagesStayInTests: only _test.go files (and the test-only
// packages themselves) import a package of testOnly.
func TestTestPackagesStayInTests(t *testing.T) {
	const module = "github.com/acpgw/gateway/"
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || slices.Contains(testOnly, filepath.ToSlash(filepath.Dir(path))) {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(testOnly, strings.TrimPrefix(p, module)) {
				t.Errorf("%s imports %s, which is for tests only", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Errorf("looked at only %d files; is the test running from the module root?", files)
	}
}
