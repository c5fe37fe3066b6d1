package server_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// openapi is the part of the document the test reads.
type openapi struct {
	Paths      map[string]map[string]json.RawMessage
	Components struct {
		Schemas map[string]struct {
			Properties map[string]struct {
				Enum []string
			}
		}
	}
}

// The checked-in OpenAPI document describes every route the Server
// serves and nothing else, every field of every body, and every error
// code.
func TestOpenAPIInStep(t *testing.T) {
	var doc openapi
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	_, set := start(t, server.Options{})
	s, err := server.New(set, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := s.Routes()
	slices.Sort(documented)
	slices.Sort(served)
	if diff := cmp.Diff(served, documented); diff != "" {
		t.Errorf("routes served (-) and documented (+):\n%s", diff)
	}

	// Each schema has the JSON fields of its Go type.
	for name, v := range map[string]any{
		"NextRequest": wire.NextRequest{}, "NextResponse": wire.NextResponse{}, "NumberRequest": wire.NumberRequest{},
		"ValidateResponse": wire.ValidateResponse{}, "ParseResponse": wire.ParseResponse{}, "Draw": wire.Draw{},
		"Template": wire.TemplateInfo{}, "Part": wire.Part{}, "TemplatesResponse": wire.TemplatesResponse{},
		"Health": wire.Health{}, "StoreHealth": wire.StoreHealth{}, "ErrorResponse": wire.ErrorResponse{}, "Error": wire.Error{},
		"Monitor": wire.Monitor{}, "MonitorTemplate": wire.MonitorTemplate{}, "Blocks": wire.Blocks{}, "KeyState": wire.KeyState{},
		"Range": wire.Range{}, "LeaseState": wire.LeaseState{}, "MonitorSeries": wire.MonitorSeries{},
		"VoidRequest": wire.VoidRequest{}, "VoidResponse": wire.VoidResponse{}, "BlockRequest": wire.BlockRequest{}, "BlockResponse": wire.BlockResponse{}, "BlockNote": wire.BlockNote{}, "BlockNoteResponse": wire.BlockNoteResponse{}, "History": wire.History{}, "Capacity": wire.Capacity{}, "Gap": wire.Gap{},
		"HoldRequest": wire.HoldRequest{}, "HoldResponse": wire.HoldResponse{}, "CommitRequest": wire.CommitRequest{}, "CommitResponse": wire.CommitResponse{},
	} {
		schema, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("no schema %s", name)
			continue
		}
		var fields []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			fields = append(fields, tag)
		}
		props := slices.Sorted(maps.Keys(schema.Properties))
		slices.Sort(fields)
		if diff := cmp.Diff(fields, props); diff != "" {
			t.Errorf("schema %s: Go fields (-) and documented properties (+):\n%s", name, diff)
		}
	}
	if len(doc.Components.Schemas) != 33 {
		t.Errorf("%d schemas; the test checks 33: add the new ones", len(doc.Components.Schemas))
	}

	// The error codes: every Code constant in wire/codes.go, and no other.
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../wire/codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
				for _, v := range vs.Values {
					codes = append(codes, strings.Trim(v.(*ast.BasicLit).Value, `"`))
				}
			}
		}
		return true
	})
	documentedCodes := slices.Clone(doc.Components.Schemas["Error"].Properties["code"].Enum)
	slices.Sort(codes)
	slices.Sort(documentedCodes)
	if len(codes) < 10 {
		t.Fatalf("found %d codes in wire/codes.go: the test no longer reads it", len(codes))
	}
	if diff := cmp.Diff(codes, documentedCodes); diff != "" {
		t.Errorf("codes in wire/codes.go (-) and documented (+):\n%s", diff)
	}
}

// The server serves the document it embeds.
func TestOpenAPIServed(t *testing.T) {
	ts, _ := start(t, server.Options{Tokens: []string{testToken}})
	var doc map[string]any
	if st, _ := call(t, ts, "GET", "/openapi.json", nil, &doc); st != 200 || doc["openapi"] != "3.0.3" {
		t.Errorf("GET /openapi.json: %d %v", st, doc["openapi"])
	}
}
