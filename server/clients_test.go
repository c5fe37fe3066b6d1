package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// clientResult is what the TypeScript and Python clients print.
type clientResult struct {
	Numbers       []string
	Valid         bool
	Invalid       bool
	InvalidCode   wire.Code
	Key           string
	Seq           int64 `json:",string"`
	MaxBlock      int64
	Block         wire.BlockResponse
	WrongStatus   int
	WrongCode     wire.Code
	MissingStatus int
	MissingCode   wire.Code
}

// checkClient checks what a client in another language printed: the
// numbers the service issued, read back; a block of their counter,
// apart from them; the errors with their codes.
func checkClient(t *testing.T, out []byte, issue func() []string) {
	t.Helper()
	var got clientResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client printed %s: %v", out, err)
	}
	if len(got.Numbers) != 5 || !got.Valid || got.Invalid || got.InvalidCode != wire.CodeInvalidNumber {
		t.Errorf("numbers and validation: %+v", got)
	}
	if got.Key != "SN-@<seq>-" || got.Seq < 1 || got.MaxBlock < 100 {
		t.Errorf("parse and template: %+v", got)
	}
	if got.Block.Key != got.Key || got.Block.Last-got.Block.First != 99 || got.Block.First <= got.Seq {
		t.Errorf("block: %+v, after the number %d", got.Block, got.Seq)
	}
	if got.WrongStatus != 400 || got.WrongCode != wire.CodeVarInvalid || got.MissingStatus != 404 || got.MissingCode != wire.CodeNotFound {
		t.Errorf("errors: %+v", got)
	}
	// The service's next numbers are after the block: none of them is in
	// it, nor one the client was given.
	for _, n := range issue() {
		for _, m := range got.Numbers {
			if n == m {
				t.Errorf("%s issued twice", n)
			}
		}
	}
}

// clientsServer serves orders for the clients of other languages.
func clientsServer(t *testing.T) (url, token string, issue func() []string) {
	token = "clients-test-0123456789abcdef"
	ts, set := startConfig(t, `
store: {backend: bolt, path: sn.db, step: 10}
templates:
  orders: {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
`, server.Options{Scoped: []server.Token{{ID: "clients", Secret: token, Actions: []server.Action{server.Issue, server.Read}}}})
	g, _ := set.Get("orders")
	return ts.URL, token, func() []string {
		nums, err := g.Issue(t.Context(), sn.Request{N: 200})
		if err != nil {
			t.Fatal(err)
		}
		return nums
	}
}

// A TypeScript client generated from the OpenAPI document by an outside
// generator (openapi-typescript, from the npm registry) and compiled by
// tsc in strict mode issues, validates, parses and takes a block, run by
// Node. A document that does not describe the answers fails to compile
// or to run.
func TestClientsTypeScript(t *testing.T) {
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (make test installs nodejs and npm): %v", tool, err)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "tsconfig.json", "main.ts"} {
		data, err := os.ReadFile(filepath.Join("testdata", "ts", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "openapi.json"), server.OpenAPI(), 0o644)
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	run("npm", "install", "--no-audit", "--no-fund", "--silent")
	run("npx", "--no-install", "openapi-typescript", "openapi.json", "-o", "schema.d.ts")
	run("npx", "--no-install", "tsc", "-p", ".")
	url, token, issue := clientsServer(t)
	cmd := exec.Command("node", "out/main.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SN_URL="+url, "SN_TOKEN="+token)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	checkClient(t, out, issue)
}

// A Python client with the standard library only, which reads the
// OpenAPI document and checks every answer against it, does the same.
func TestClientsPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is not installed (make test installs it): %v", err)
	}
	url, token, issue := clientsServer(t)
	cmd := exec.Command("python3", "check.py")
	cmd.Dir = filepath.Join("testdata", "python")
	cmd.Env = append(os.Environ(), "SN_URL="+url, "SN_TOKEN="+token, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("python3: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	checkClient(t, out, issue)
}

// The Python client refuses an answer the document does not describe:
// the control, which shows that its check can fail.
func TestClientsPythonContract(t *testing.T) {
	url, token, _ := clientsServer(t)
	script := `
import json, os, sys
from sn_client import Client, ContractError
sn = Client(os.environ["SN_URL"], os.environ["SN_TOKEN"])
# The document with one field of the answer of next retyped: the same
# answer no longer fits it.
sn.doc["components"]["schemas"]["NextResponse"]["properties"]["numbers"]["items"] = {"type": "integer"}
try:
    sn.call("next", name="orders", body={"n": 1})
except ContractError as err:
    print("refused:", err)
    sys.exit(0)
print("accepted")
`
	cmd := exec.Command("python3", "-c", script)
	cmd.Dir = filepath.Join("testdata", "python")
	cmd.Env = append(os.Environ(), "SN_URL="+url, "SN_TOKEN="+token, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "refused: next.numbers[0]: ") {
		t.Errorf("python3: %v\n%s", err, out)
	}
}
