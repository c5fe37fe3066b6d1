package backend_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sngen/sn/config"
)

// Two tenants whose bolt paths reach one file — through a symbolic link
// to its directory, a symbolic link to the file, a hard link, or ".." —
// are caught by Validate, naming both; the control, two files, passes.
// One Build whose templates spell one file two ways opens it once,
// instead of refusing it as held by another process (itself).
func TestStoreFileSpellings(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(real, "sn.db")
	// The file exists for the hard link; the directory links need not.
	if err := os.WriteFile(filepath.Join(real, "hard-src.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	must0(t, os.Symlink(real, filepath.Join(dir, "dirlink")))
	must0(t, os.Symlink(file, filepath.Join(dir, "filelink.db")))
	must0(t, os.Link(filepath.Join(real, "hard-src.db"), filepath.Join(dir, "hard.db")))
	yaml := func(a, b string) string {
		return `
tenants:
  shop: {store: {backend: bolt, path: "` + a + `"}}
  billing: {store: {backend: bolt, path: "` + b + `"}}
templates:
  a: {template: "A@<seq>", tenant: shop}
  b: {template: "B@<seq>", tenant: billing}
`
	}
	for _, tc := range []struct{ name, a, b string }{
		{"a link to the directory", file, filepath.Join(dir, "dirlink", "sn.db")},
		{"a link to the file", file, filepath.Join(dir, "filelink.db")},
		{"a hard link", filepath.Join(real, "hard-src.db"), filepath.Join(dir, "hard.db")},
		{"dot-dot", file, filepath.Join(dir, "dirlink", "..", "real", "sn.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Decode([]byte(yaml(tc.a, tc.b)), "yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), "tenants share no store") || !strings.Contains(err.Error(), `template "a"`) && !strings.Contains(err.Error(), `template a`) {
				t.Errorf("two tenants on %s and %s: %v", tc.a, tc.b, err)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		cfg, err := config.Decode([]byte(yaml(file, filepath.Join(real, "other.db"))), "yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("two files: %v", err)
		}
	})
	t.Run("one build", func(t *testing.T) {
		cfg, err := config.Decode([]byte(`
templates:
  a: {template: "A@<seq>", sequence: {backend: bolt, path: "`+file+`"}}
  b: {template: "B@<seq>", sequence: {backend: bolt, path: "`+filepath.Join(dir, "dirlink", "sn.db")+`"}}
`), "yaml")
		if err != nil {
			t.Fatal(err)
		}
		set, err := cfg.Build(t.Context())
		if err != nil {
			t.Fatalf("one file spelt two ways in one Build: %v", err)
		}
		defer set.Close()
		ida, _ := set.StoreID("a")
		idb, _ := set.StoreID("b")
		if ida != idb {
			t.Errorf("store IDs %q and %q: want one", ida, idb)
		}
		for _, name := range []string{"a", "b"} {
			g, _ := set.Get(name)
			if _, err := g.Next(t.Context()); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}

func must0(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
