package gateway_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readme returns README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// acpMethod matches the names of ACP methods (session/load), which look
// like paths.
var acpMethod = regexp.MustCompile(`^(session|fs|terminal)/[a-z_]+$`)

// mentioned finds what README.md names in `code` spans and link targets.
var mentioned = regexp.MustCompile("`([^`\\s]+)`|\\]\\(([^)\\s]+)\\)")

// TestREADMEPathsExist checks that every file or folder of the repository
// README.md names exists. A name counts as a repository path when its
// first element is a top-level folder here (channels/web/API.md) or when
// it is a lone file name with a documentation or config extension
// (config.example.yaml); names of the user's files are listed below.
func TestREADMEPathsExist(t *testing.T) {
	users := map[string]bool{"gateway.yaml": true} // the user's own file, not the repo's
	top := map[string]bool{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			top[e.Name()] = true
		}
	}
	checked := 0
	for _, m := range mentioned.FindAllStringSubmatch(readme(t), -1) {
		name := m[1] + m[2]
		if strings.Contains(name, "://") || strings.HasPrefix(name, "#") || strings.HasPrefix(name, "/") || acpMethod.MatchString(name) {
			continue
		}
		name = strings.TrimPrefix(strings.TrimSuffix(name, "/"), "./")
		first, _, nested := strings.Cut(name, "/")
		ext := filepath.Ext(name)
		isPath := nested && top[first] || !nested && (ext == ".md" || ext == ".yaml" || ext == ".yml" || ext == ".json" || ext == ".ndjson") && !users[name]
		if !isPath {
			continue
		}
		checked++
		if _, err := os.Stat(name); err != nil {
			t.Errorf("README.md names %s, which is not in the repository", name)
		}
	}
	if checked < 10 {
		t.Errorf("only %d paths checked; is the test running from the module root?", checked)
	}
}

// TestREADMELayout checks that the layout table names every package once,
// in its first column.
func TestREADMELayout(t *testing.T) {
	text := readme(t)
	i := strings.Index(text, "## Layout\n")
	if i < 0 {
		t.Fatal("README.md has no Layout section")
	}
	count := map[string]int{} // package → rows that have it in the first column
	for _, row := range tableRows(text[i:]) {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range mentioned.FindAllStringSubmatch(cells[1], -1) {
			count[m[1]]++
		}
	}
	pkgs := modulePackages(t)
	for _, dir := range pkgs {
		if n := count[dir]; n != 1 {
			t.Errorf("the layout table names %s %d times, want once", dir, n)
		}
	}
	if len(pkgs) < 10 {
		t.Errorf("found only %d packages; is the test running from the module root?", len(pkgs))
	}
}

// tableRows returns the lines of the first Markdown table in text, after
// its first line (the section's heading).
func tableRows(text string) []string {
	var table []string
	for _, l := range strings.Split(text, "\n")[1:] {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		} else if len(table) > 0 {
			break
		}
	}
	return table
}

// modulePackages returns the folders of the module's packages (those with
// a non-test Go file), relative to the module root, testdata and hidden
// folders left out.
func modulePackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	var pkgs []string
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
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || seen[dir] {
			return nil
		}
		seen[dir] = true
		pkgs = append(pkgs, dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestNpxAnswersYes checks that every npx command in the documentation
// has -y: without it npx asks before it installs, and an agent started by
// the gateway has nobody to answer.
func TestNpxAnswersYes(t *testing.T) {
	npx := regexp.MustCompile(`\bnpx[, ]+([^\s,\]]+)`)
	files := []string{"README.md", "config.example.yaml", "channels/web/API.md"}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range npx.FindAllStringSubmatch(line, -1) {
				if m[1] != "-y" {
					t.Errorf("%s:%d: npx without -y: %s", f, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}
