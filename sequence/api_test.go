package sequence_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxExported is how many names package sequence exports: its types,
// functions, constants and variables, and the methods of its exported
// types. The package is the contract of a store and its generators; the
// journal's vocabulary, claims, catalogs and records have packages of
// their own. A name added here is a decision: raise the figure with it.
const maxExported = 103 // 100, and Transactor, Holder and Hold: gapless numbers over HTTP

// The package exports no more names than maxExported.
func TestExportedNames(t *testing.T) {
	names := exported(t, ".")
	if len(names) > maxExported {
		t.Errorf("package sequence exports %d names, more than %d: %s", len(names), maxExported, strings.Join(names, " "))
	}
	t.Logf("%d exported names", len(names))
}

// exported returns the exported names of the package in dir, methods as
// Type.Method.
func exported(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil {
					rt := d.Recv.List[0].Type
					if s, ok := rt.(*ast.StarExpr); ok {
						rt = s.X
					}
					id, ok := rt.(*ast.Ident)
					if !ok || !id.IsExported() {
						continue
					}
					name = id.Name + "." + name
				}
				if d.Name.IsExported() {
					out = append(out, name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							out = append(out, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								out = append(out, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return out
}
