package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The client links the wire types, not the library: neither the template
// compiler (the engine, participle) nor the config loader (config,
// yaml.v3), nor the server.
func TestClientLinksNoEngine(t *testing.T) {
	banned := []string{
		"github.com/sngen/sn", // the library, with the engine under it
		"github.com/sngen/sn/internal/engine",
		"github.com/sngen/sn/parser",
		"github.com/alecthomas/participle/v2",
		"github.com/sngen/sn/config",
		"gopkg.in/yaml.v3",
		"github.com/sngen/sn/server",
	}
	deps := func(pkg string) map[string]bool {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		m := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			m[d] = true
		}
		return m
	}
	client := deps("github.com/sngen/sn/client")
	if !client["github.com/sngen/sn/wire"] {
		t.Fatal("go list -deps of the client lists no wire package: it no longer answers as this test reads it")
	}
	for _, b := range banned {
		if client[b] {
			t.Errorf("the client links %s", b)
		}
	}
	// The control: the server links all of them but itself.
	server := deps("github.com/sngen/sn/server")
	for _, b := range banned[:len(banned)-1] {
		if !server[b] {
			t.Errorf("the server does not link %s: the test cannot see it", b)
		}
	}
}
