package backend_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn/config"
)

// The sqlite backend: two Sets on one SQLite file at once (two
// processes of one machine, as far as the file can tell) issue numbers
// of one template, none twice; a third, after both closed, goes on above
// them. A config without a path says what is missing.
func TestSQLiteSharedFile(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Decode([]byte(`
store: {backend: sqlite, path: app.db, step: 10}
templates:
  orders: {template: "SN-@<seq>"}
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var top int64
	for range 2 {
		set, err := cfg.Build(t.Context(), config.WithDir(dir))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer set.Close()
			for _, s := range issue(t, set, "orders", 300) {
				n := seqOf(t, s, "SN-")
				mu.Lock()
				if seen[n] {
					t.Errorf("%s issued twice", s)
				}
				seen[n], top = true, max(top, n)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	set, err := cfg.Build(t.Context(), config.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if n := seqOf(t, issue(t, set, "orders", 1)[0], "SN-"); n <= top {
		t.Errorf("after both closed: %d, at or below the %d issued", n, top)
	}
	bad, _ := config.Decode([]byte("store: {backend: sqlite}\ntemplates:\n  a: {template: \"A@<seq>\"}\n"), "yaml")
	if _, err := bad.Build(t.Context(), config.WithDir(dir)); err == nil || !strings.Contains(err.Error(), "path") {
		t.Errorf("sqlite without a path: %v; want it to name the path", err)
	}
}
