// Command compat renders the README's compatibility table of the real
// agents from what the tests proved (the JSON lines agenttest.Proved
// appends to the directory GATEWAY_TEST_COMPAT_OUT names), and checks it:
//
//	go run ./internal/agenttest/compat -check README.md DIR
//	go run ./internal/agenttest/compat -write README.md DIR
//
// The table sits between the lines BeginMarker and EndMarker. -check
// fails, naming each cell, when the README claims a feature no test proved
// or misses one a test proved; -write puts the table in. -skip PKG (more
// than once, or comma-separated) leaves a package's rows as the README has
// them, for a run that could not install that agent.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpgw/gateway/internal/agenttest"
)

// The lines that enclose the table in the README.
const (
	BeginMarker = "<!-- compat:begin (go run ./internal/agenttest/compat -write README.md DIR) -->"
	EndMarker   = "<!-- compat:end -->"
)

// maxLine bounds one line of a compat file.
const maxLine = 64 << 10

// row is one package at one version and the features proved of it.
type row struct {
	Package, Version string
	Has              map[agenttest.Feature]bool
}

func (r row) key() string { return r.Package + " " + r.Version }

func main() {
	check := flag.Bool("check", false, "fail when the README's table differs from what the tests proved")
	write := flag.Bool("write", false, "write the table into the README")
	var skip []string
	flag.Func("skip", "a package whose rows are kept as the README has them (repeatable, comma-separated)", func(s string) error {
		for p := range strings.SplitSeq(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				skip = append(skip, p)
			}
		}
		return nil
	})
	flag.Parse()
	if *check == *write || flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: compat -check|-write [-skip PKG] README.md DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *write, skip, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(1)
	}
}

func run(readme, dir string, write bool, skip []string, out io.Writer) error {
	doc, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	before, table, after, err := split(string(doc))
	if err != nil {
		return fmt.Errorf("%s: %v", readme, err)
	}
	claimed, err := parseTable(table)
	if err != nil {
		return fmt.Errorf("%s: %v", readme, err)
	}
	proved, err := load(dir)
	if err != nil {
		return err
	}
	for _, r := range claimed {
		if slices.Contains(skip, r.Package) {
			proved = slices.DeleteFunc(proved, func(p row) bool { return p.Package == r.Package })
		}
	}
	for _, r := range claimed {
		if slices.Contains(skip, r.Package) {
			proved = append(proved, r)
		}
	}
	sortRows(proved)
	if write {
		return os.WriteFile(readme, []byte(before+render(proved)+after), 0o644)
	}
	if problems := diff(claimed, proved); len(problems) > 0 {
		return fmt.Errorf("%s's compatibility table is not what the tests proved (go run ./internal/agenttest/compat -write %s %s):\n  %s",
			readme, readme, dir, strings.Join(problems, "\n  "))
	}
	fmt.Fprintf(out, "compat: %s matches what the tests proved (%d rows)\n", readme, len(proved))
	return nil
}

// split cuts doc into the text up to and including the begin marker's
// line, the table, and the rest from the end marker's line on.
func split(doc string) (before, table, after string, err error) {
	b := strings.Index(doc, BeginMarker+"\n")
	if b < 0 {
		return "", "", "", fmt.Errorf("no line %q", BeginMarker)
	}
	b += len(BeginMarker) + 1
	e := strings.Index(doc[b:], EndMarker)
	if e < 0 {
		return "", "", "", fmt.Errorf("no line %q after %q", EndMarker, BeginMarker)
	}
	return doc[:b], doc[b : b+e], doc[b+e:], nil
}

// load reads every *.jsonl file of dir.
func load(dir string) ([]row, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no *.jsonl: did the tests run with %s set?", dir, agenttest.CompatVar)
	}
	byKey := map[string]*row{}
	for _, f := range files {
		if err := loadFile(f, byKey); err != nil {
			return nil, err
		}
	}
	var rows []row
	for _, r := range byKey {
		rows = append(rows, *r)
	}
	sortRows(rows)
	return rows, nil
}

func loadFile(name string, byKey map[string]*row) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), maxLine)
	for n := 1; sc.Scan(); n++ {
		var rec agenttest.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if rec.Package == "" || rec.Version == "" || strings.ContainsAny(rec.Package+rec.Version, "|\n`") {
			return fmt.Errorf("%s:%d: bad package or version %q %q", name, n, rec.Package, rec.Version)
		}
		if !slices.Contains(agenttest.Features, rec.Feature) {
			return fmt.Errorf("%s:%d: unknown feature %q (known: %v)", name, n, rec.Feature, agenttest.Features)
		}
		r := row{Package: rec.Package, Version: rec.Version}
		if byKey[r.key()] == nil {
			r.Has = map[agenttest.Feature]bool{}
			byKey[r.key()] = &r
		}
		byKey[r.key()].Has[rec.Feature] = true
	}
	return sc.Err()
}

func sortRows(rows []row) {
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.key(), b.key()) })
}

// The cells of the table.
const (
	yes = "✅"
	no  = "–"
)

func render(rows []row) string {
	var b bytes.Buffer
	b.WriteString("| agent | version |")
	for _, f := range agenttest.Features {
		fmt.Fprintf(&b, " %s |", f)
	}
	b.WriteString("\n|---|---|")
	for range agenttest.Features {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s |", r.Package, r.Version)
		for _, f := range agenttest.Features {
			c := no
			if r.Has[f] {
				c = yes
			}
			fmt.Fprintf(&b, " %s |", c)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// parseTable reads a table render wrote (an empty one has no rows).
func parseTable(table string) ([]row, error) {
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	if len(lines) < 2 {
		return nil, errors.New("the compatibility table has no header")
	}
	header := cells(lines[0])
	want := append([]string{"agent", "version"}, func() (fs []string) {
		for _, f := range agenttest.Features {
			fs = append(fs, string(f))
		}
		return
	}()...)
	if !slices.Equal(header, want) {
		return nil, fmt.Errorf("the compatibility table's columns are %q, want %q", header, want)
	}
	var rows []row
	for _, l := range lines[2:] {
		c := cells(l)
		if len(c) != len(want) {
			return nil, fmt.Errorf("row %q has %d cells, want %d", l, len(c), len(want))
		}
		r := row{Package: strings.Trim(c[0], "`"), Version: c[1], Has: map[agenttest.Feature]bool{}}
		for i, f := range agenttest.Features {
			switch c[i+2] {
			case yes:
				r.Has[f] = true
			case no:
			default:
				return nil, fmt.Errorf("row %q: cell %q is neither %s nor %s", l, c[i+2], yes, no)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var out []string
	for c := range strings.SplitSeq(line, "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// diff lists where claimed and proved differ, cell by cell.
func diff(claimed, proved []row) []string {
	var out []string
	index := func(rows []row) map[string]row {
		m := map[string]row{}
		for _, r := range rows {
			m[r.key()] = r
		}
		return m
	}
	c, p := index(claimed), index(proved)
	for _, r := range claimed {
		pr, ok := p[r.key()]
		if !ok {
			out = append(out, fmt.Sprintf("%s: the README has a row no test ran", r.key()))
			continue
		}
		for _, f := range agenttest.Features {
			switch {
			case r.Has[f] && !pr.Has[f]:
				out = append(out, fmt.Sprintf("%s: the README claims %s, which no test proved", r.key(), f))
			case !r.Has[f] && pr.Has[f]:
				out = append(out, fmt.Sprintf("%s: a test proved %s, which the README does not claim", r.key(), f))
			}
		}
	}
	for _, r := range proved {
		if _, ok := c[r.key()]; !ok {
			out = append(out, fmt.Sprintf("%s: tests ran it, and the README has no row for it", r.key()))
		}
	}
	return out
}
