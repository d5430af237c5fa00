package thread

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// ARCHITECTURE.md's two tables name every event of the machine (the
// first, "| event | sent by |") and every effect (the second, "| effect |
// performed |"), in their first column: a new event or effect is not
// done until the map says who sends or performs it.
func TestArchitectureTablesNameEveryEventAndEffect(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{} // "isEvent"/"isEffect" → the types
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || (fn.Name.Name != "isEvent" && fn.Name.Name != "isEffect") {
					continue
				}
				if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
					want[fn.Name.Name] = append(want[fn.Name.Name], id.Name)
				}
			}
		}
	}
	if len(want["isEvent"]) < 20 || len(want["isEffect"]) < 20 {
		t.Fatalf("found %d events and %d effects in the package, fewer than it has", len(want["isEvent"]), len(want["isEffect"]))
	}
	doc, err := os.ReadFile("../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]map[string]bool{"isEvent": {}, "isEffect": {}}
	var table string
	code := regexp.MustCompile("`([A-Za-z]+)`")
	for line := range strings.Lines(string(doc)) {
		switch {
		case strings.HasPrefix(line, "| event |"):
			table = "isEvent"
		case strings.HasPrefix(line, "| effect |"):
			table = "isEffect"
		case !strings.HasPrefix(line, "|"):
			table = ""
		case table != "":
			first := strings.SplitN(line, "|", 3)[1]
			for _, m := range code.FindAllStringSubmatch(first, -1) {
				named[table][m[1]] = true
			}
		}
	}
	for kind, names := range want {
		for _, n := range names {
			if !named[kind][n] {
				t.Errorf("ARCHITECTURE.md's %s table does not name %s", strings.TrimPrefix(kind, "is"), n)
			}
		}
	}
}
