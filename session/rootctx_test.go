package session_test

import (
	"go/ast"
	"testing"
)

// TestNoRootContextInSession: session's code takes its contexts from
// the router's Run context or a thread's own (cancelled after the
// shutdown's grace), never a new root (context.Background or TODO), so
// that nothing a thread does outlives the gateway's stop unbounded.
func TestNoRootContextInSession(t *testing.T) {
	fset, files := productionFiles(t)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "context" && (sel.Sel.Name == "Background" || sel.Sel.Name == "TODO") {
				t.Errorf("%s: context.%s in session: take the router's or the thread's context", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
