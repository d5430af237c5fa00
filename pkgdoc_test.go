package gateway_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageComments enforces exactly one package comment per package:
// every package documents itself once, in one file.
func TestPackageComments(t *testing.T) {
	dirs := map[string][]string{} // dir → files with a package comment
	seen := map[string]bool{}
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		seen[dir] = true
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			dirs[dir] = append(dirs[dir], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 5 {
		t.Fatalf("found only %d packages; is the test running from the module root?", len(seen))
	}
	for dir := range seen {
		switch n := len(dirs[dir]); {
		case n == 0:
			t.Errorf("package in %s has no package comment", dir)
		case n > 1:
			t.Errorf("package in %s has %d package comments (%v), want 1", dir, n, dirs[dir])
		}
	}
}
