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
		bytes := allocated(func() { _, err = config.Decode([]byte(doc), "yaml") })
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
	if _, err := config.Decode([]byte(b.String()), "yaml"); err != nil && strings.Contains(err.Error(), "aliases") {
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
		if bytes := allocated(func() { config.Decode(data, format) }); bytes > 256<<20 {
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
		cfg, err := config.Decode([]byte(s.String()), "yaml")
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

// mergeBomb is a document of a few KB whose merge keys ("<<") each merge
// fan copies of a mapping of k keys, over levels levels.
func mergeBomb(k, fan, levels int) string {
	var b strings.Builder
	b.WriteString("d: &d {")
	for i := range k {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "k%d: 1", i)
	}
	b.WriteString("}\n")
	prev := "d"
	for l := 1; l <= levels; l++ {
		fmt.Fprintf(&b, "e%d: &e%d {<<: [%s]}\n", l, l, strings.TrimSuffix(strings.Repeat("*"+prev+", ", fan), ", "))
		prev = fmt.Sprintf("e%d", l)
	}
	fmt.Fprintf(&b, "templates:\n  t0: {<<: [*%s, *%s]}\n", prev, prev)
	return b.String()
}

// Merge keys and deep nesting cost a bounded amount too (found by an
// adversary: 2.9 KB of merges took 3.4 s and 584 MB, and 2 KB of nested
// lists 5-13 s and 700 MB): the merges' work counts against the alias
// budget, and no document nests deeper than 32 levels, in YAML or JSON.
func TestMergeAndDepthBombs(t *testing.T) {
	for _, tt := range []struct {
		name, doc, format, want string
	}{
		{"merges", mergeBomb(300, 8, 5), "yaml", "aliases expand it"},
		{"more merges", mergeBomb(1000, 4, 8), "yaml", "aliases expand it"},
		{"nested lists", "templates: " + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + "\n", "yaml", "deeper than 32"},
		{"nested maps", "templates: " + strings.Repeat("{a: ", 1000) + "1" + strings.Repeat("}", 1000) + "\n", "yaml", "unknown field"},
		{"nested JSON", `{"templates": ` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + "}", "json", "deeper than 32"},
	} {
		var err error
		bytes := allocated(func() { _, err = config.Decode([]byte(tt.doc), tt.format) })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s (%d bytes): %v; want %q", tt.name, len(tt.doc), err, tt.want)
		}
		if bytes > 64<<20 {
			t.Errorf("%s (%d bytes): Parse allocated %d MB", tt.name, len(tt.doc), bytes>>20)
		}
		t.Logf("%s, %d bytes: %d MB: %v", tt.name, len(tt.doc), bytes>>20, err)
	}
}
