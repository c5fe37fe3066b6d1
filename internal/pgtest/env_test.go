package pgtest

import (
	"strings"
	"testing"
)

func TestMissingBinariesSayMakeTest(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := findBinaries("/nonexistent/postgresql/*/bin")
	if err == nil {
		t.Fatal("findBinaries found PostgreSQL where there is none")
	}
	for _, want := range []string{"initdb", "postgres", "make test"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
