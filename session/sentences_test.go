package session_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestNoSentencesInSession: session says what happened (typed outcomes of
// package sysmsg, events for the projector), never the words people read.
// A string literal of its code that reads as text (it has a space, or a
// character beyond ASCII such as an emoji or "…") may only be a log
// message, an error's text, the name of a record or an action that only
// logs see (persist, retry, reap), a value the store records, or a piece
// of text being parsed. Struct tags and imports are not text.
func TestNoSentencesInSession(t *testing.T) {
	// Calls whose string arguments nobody reads in a thread.
	forLogs := map[string]bool{
		"Debug": true, "Info": true, "Warn": true, "Error": true, // slog
		"Errorf": true, "New": true, // fmt.Errorf, errors.New
		"persist": true, "Persist": true, "retry": true, "reap": true, "Reap": true, // what they name is logged
		"write": true, "mark": true, "unmark": true, // a thread's saves: logged
		"resolvePrompt": true, // who settled a prompt, as the store records it
		"ResolvePrompt": true, // who settled a prompt, as the store records it
		"Index":         true, // parsing an error's text
	}
	fset, files := productionFiles(t)
	for _, f := range files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			switch n := n.(type) {
			case *ast.ImportSpec:
				stack = stack[:len(stack)-1] // no f(nil) follows a false
				return false
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil || !readsAsText(s) || isTag(stack) || insideCall(stack, forLogs) {
					return true
				}
				t.Errorf("%s: %s reads as text for people; render it in package sysmsg (or the projector) and pass a typed outcome", fset.Position(n.Pos()), n.Value)
			}
			return true
		})
	}
}

func readsAsText(s string) bool {
	for _, r := range s {
		if r == ' ' || r > unicode.MaxASCII {
			return true
		}
	}
	return false
}

// isTag reports whether the literal on top of stack is a struct field's
// tag.
func isTag(stack []ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	f, ok := stack[len(stack)-2].(*ast.Field)
	return ok && f.Tag == stack[len(stack)-1]
}

// productionFiles parses the package's files but its tests.
func productionFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	// The thread's owner (package thread/owner) is held to the same
	// rules as the router.
	var names []string
	for _, pattern := range []string{"*.go", "../thread/owner/*.go"} {
		more, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, more...)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 20 {
		t.Fatalf("only %d files parsed", len(files))
	}
	return fset, files
}

// insideCall reports whether a call to one of names encloses the top of
// stack.
func insideCall(stack []ast.Node, names map[string]bool) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		c, ok := stack[i].(*ast.CallExpr)
		if !ok {
			continue
		}
		switch fn := c.Fun.(type) {
		case *ast.SelectorExpr:
			if names[fn.Sel.Name] {
				return true
			}
		case *ast.Ident:
			if names[fn.Name] {
				return true
			}
		}
	}
	return false
}
