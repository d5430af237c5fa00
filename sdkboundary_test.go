package gateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sdkPath is the ACP SDK's import path.
const sdkPath = "github.com/coder/acp-go-sdk"

// sdkUsers are the packages that may import the SDK: agent, the gateway's
// client side, and demoagent, which is an ACP agent of its own (the other
// side of the wire, run as a subprocess).
var sdkUsers = []string{"agent", "demoagent"}

// TestSDKStaysInAgent enforces that the ACP SDK's types stay in package
// agent: no other package imports the SDK (tests and the demo agent
// aside), and agent's
// exported declarations (types, fields, functions, methods, variables)
// name none of its types, so everything else sees the gateway's own types
// (converted in agent/convert.go).
func TestSDKStaysInAgent(t *testing.T) {
	agentFiles := 0
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		local := sdkName(f)
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "demoagent" {
			return nil
		}
		if dir != "agent" {
			if local != "" {
				t.Errorf("%s imports the ACP SDK; only %v may (convert to gateway types in agent/convert.go)", path, sdkUsers)
			}
			var named []string
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "acp" {
						named = append(named, "acp."+sel.Sel.Name)
					}
				}
				return true
			})
			if len(named) > 0 {
				t.Errorf("%s names %v outside package agent", path, named)
			}
			return nil
		}
		agentFiles++
		if local == "" {
			return nil
		}
		for _, name := range exportedSDKUses(f, local) {
			t.Errorf("%s: exported %s names an ACP SDK type; expose a gateway type instead", path, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if agentFiles == 0 {
		t.Fatal("found no file of package agent; is the test running from the module root?")
	}
}

// sdkName returns the name f imports the SDK under, "" when it does not.
func sdkName(f *ast.File) string {
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != sdkPath && !strings.HasPrefix(p, sdkPath+"/") {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "acp"
	}
	return ""
}

// exportedSDKUses lists f's exported declarations whose types (or, for
// functions, signatures) name the package imported as local.
func exportedSDKUses(f *ast.File, local string) []string {
	names := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					found = true
				}
			}
			return !found
		})
		return found
	}
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedReceiver(d.Recv)) {
				continue
			}
			if names(d.Type) {
				out = append(out, "func "+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							exported := len(field.Names) == 0 // embedded
							for _, n := range field.Names {
								exported = exported || n.IsExported()
							}
							if exported && names(field.Type) {
								out = append(out, "field of type "+s.Name.Name)
							}
						}
						continue
					}
					if names(s.Type) {
						out = append(out, "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						if (s.Type != nil && names(s.Type)) || (s.Type == nil && slices.ContainsFunc(s.Values, func(v ast.Expr) bool { return names(v) })) {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// exportedReceiver reports whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
