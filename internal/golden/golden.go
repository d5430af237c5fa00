// Package golden reads and writes the txtar files of golden tests: a
// comment, then sections that each start with a "-- name --" line.
package golden

import (
	"fmt"
	"strings"
)

// Archive is a parsed txtar file.
type Archive struct {
	Comment string
	files   map[string]string
	order   []string
}

// Parse reads a txtar file. A section holds the text between its marker
// and the next, newlines included.
func Parse(data string) *Archive {
	a := &Archive{files: map[string]string{}}
	cur, named := "", false
	var b strings.Builder
	flush := func() {
		if named {
			a.Set(cur, b.String())
		} else {
			a.Comment = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			cur, named = strings.TrimSpace(t[3:len(t)-3]), true
			continue
		}
		b.WriteString(line)
	}
	flush()
	return a
}

// Get returns the section called name and whether there is one.
func (a *Archive) Get(name string) (string, bool) {
	s, ok := a.files[name]
	return s, ok
}

// Section returns the section called name, "" if there is none.
func (a *Archive) Section(name string) string { return a.files[name] }

// Has reports whether there is a section called name.
func (a *Archive) Has(name string) bool {
	_, ok := a.files[name]
	return ok
}

// Names lists the sections in their order.
func (a *Archive) Names() []string { return append([]string(nil), a.order...) }

// Set replaces the section called name, or adds it at the end.
func (a *Archive) Set(name, data string) {
	if _, ok := a.files[name]; !ok {
		a.order = append(a.order, name)
	}
	a.files[name] = data
}

// Format writes the archive back. A section that does not end in a
// newline gets one only where another marker follows, so that Parse
// gives every section back unchanged.
func (a *Archive) Format() string {
	var b strings.Builder
	b.WriteString(a.Comment)
	for i, name := range a.order {
		fmt.Fprintf(&b, "-- %s --\n", name)
		s := a.files[name]
		b.WriteString(s)
		if i < len(a.order)-1 && s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
