package config_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sngen/sn/config"
)

// aliasBomb returns a YAML document of a few hundred bytes whose aliases
// stand for 9^depth nodes: each level is a list of nine aliases of the
// level below.
func aliasBomb(depth int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A document of a few hundred bytes whose aliases stand for up to 9^9
// nodes is refused with an error that says so, in a bounded amount of
// work: a few MB, however deep the aliases go.
func TestAliasBomb(t *testing.T) {
	for _, depth := range []int{5, 7, 9} {
		doc := aliasBomb(depth)
		var err error
		bytes := allocated(func() { _, err = config.Parse([]byte(doc), "yaml") })
		if err == nil || !strings.Contains(err.Error(), "aliases expand it") {
			t.Errorf("depth %d (%d bytes of YAML, 9^%d nodes): %v; want the aliases refused", depth, len(doc), depth, err)
		}
		if bytes > 64<<20 {
			t.Errorf("depth %d: Parse allocated %d MB; want a bounded amount", depth, bytes>>20)
		}
		t.Logf("depth %d, %d bytes: %d MB allocated: %v", depth, len(doc), bytes>>20, err)
	}
}

// Aliases and merge keys as people use them still load: 1,000 templates
// that each merge one mapping of defaults.
func TestAliasesInUse(t *testing.T) {
	var b strings.Builder
	b.WriteString("stores:\n  main: {backend: memory}\ndefaults: &d\n  store: main\ntemplates:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  t%d:\n    <<: *d\n    template: \"T%d-@<seq>\"\n", i, i)
	}
	if _, err := config.Parse([]byte(b.String()), "yaml"); err != nil && strings.Contains(err.Error(), "aliases") {
		t.Fatalf("1,000 merges of one mapping: %v", err)
	}
}

// FuzzParse loads arbitrary documents: no panic, and a bounded amount of
// memory for any input of up to a few KB.
func FuzzParse(f *testing.F) {
	f.Add([]byte(aliasBomb(9)), "yaml")
	f.Add([]byte("templates:\n  a: {template: \"A@<seq>\"}\n"), "yaml")
	f.Add([]byte(`{"templates": {"a": {"template": "A@<seq>"}}}`), "json")
	f.Add([]byte("a: &a [*a]\n"), "yaml")
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		if len(data) > 4096 || (format != "yaml" && format != "json") {
			return
		}
		if bytes := allocated(func() { config.Parse(data, format) }); bytes > 256<<20 {
			t.Fatalf("Parse of %d bytes allocated %d MB", len(data), bytes>>20)
		}
	})
}

// BenchmarkValidate validates configs of 100, 1,000 and 10,000 templates
// of distinct literal text on one store: compiling each template and
// proving them against one another.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		var s strings.Builder
		s.WriteString("store: {backend: bolt, path: sn.db}\ntemplates:\n")
		for i := range n {
			fmt.Fprintf(&s, "  t%d: {template: \"T%d-@<seq, width=8>-@<checksum, algo=luhn>\"}\n", i, i)
		}
		cfg, err := config.Parse([]byte(s.String()), "yaml")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if err := cfg.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
