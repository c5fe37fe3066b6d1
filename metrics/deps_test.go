package metrics_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that does not import package metrics links none of
// Prometheus: not through sn, config, the core drivers, the server or the client.
func TestNotLinkedUnlessAsked(t *testing.T) {
	pkgs := []string{"github.com/sngen/sn", "github.com/sngen/sn/config", "github.com/sngen/sn/backend/bolt", "github.com/sngen/sn/backend/sql", "github.com/sngen/sn/backend/snowflake", "github.com/sngen/sn/server", "github.com/sngen/sn/client"}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/sngen/sn/sequence\n") {
		t.Fatalf("go list -deps lists no sequence package: it no longer answers as this test reads it:\n%s", out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "prometheus") || strings.Contains(dep, "chromedp") {
			t.Errorf("%s is linked without package metrics", dep)
		}
	}
	deps, err := exec.Command("go", "list", "-deps", "github.com/sngen/sn/metrics").CombinedOutput()
	if err != nil || !strings.Contains(string(deps), "github.com/prometheus/client_golang/prometheus\n") {
		t.Errorf("package metrics does not link client_golang (%v): the test cannot see it", err)
	}
}
