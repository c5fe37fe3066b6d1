package sn_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

var orderKey = []byte("a key of 16 bytes or more, from a secret store")

// An obfuscated sequence prints every number of its width once, in an
// order that does not follow the counter, and Parse gives back the number
// drawn.
func TestObfuscate(t *testing.T) {
	const tpl = `ORD-@<seq, width=4, obfuscate=orders>-@<checksum, algo=luhn>`
	g := mustNew(t, tpl, sn.WithObfuscation("orders", orderKey))
	seen := map[string]bool{}
	ascending := 0
	prev := ""
	for n := int64(1); n <= 9999; n++ {
		s, err := g.Next(ctx)
		if err != nil {
			t.Fatalf("number %d: %v", n, err)
		}
		if seen[s] {
			t.Fatalf("%q printed twice", s)
		}
		seen[s] = true
		if s > prev {
			ascending++
		}
		prev = s
		p, err := g.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if p.Seq != n {
			t.Fatalf("Parse(%q).Seq = %d, drew %d", s, p.Seq, n)
		}
		if strings.Contains(s, "-0000-") {
			t.Fatalf("%q: an all-zero sequence", s)
		}
	}
	if ascending > 6000 || ascending < 4000 {
		t.Errorf("%d of 9999 numbers printed above the one before: the order shows", ascending)
	}
	// The width is full: the next number overflows, never wraps.
	if _, err := g.Next(ctx); !errors.Is(err, sn.ErrOverflow) {
		t.Fatalf("number 10000 of width 4: %v, want ErrOverflow", err)
	}
	// The same key and template in another process print the same numbers.
	h := mustNew(t, tpl, sn.WithObfuscation("orders", orderKey))
	first, _ := h.Next(ctx)
	g2 := mustNew(t, tpl, sn.WithObfuscation("orders", orderKey))
	if again, _ := g2.Next(ctx); again != first {
		t.Errorf("number 1 prints %q and %q under one key", first, again)
	}
	other := mustNew(t, tpl, sn.WithObfuscation("orders", []byte("another key of sixteen bytes")))
	if s, _ := other.Next(ctx); s == first {
		t.Errorf("two keys print number 1 as %q", s)
	}
}

func TestObfuscateErrors(t *testing.T) {
	tests := []struct {
		tpl  string
		opts []sn.Option
		want string
	}{
		{`@<seq, width=6, obfuscate=order>`, []sn.Option{sn.WithObfuscation("orders", orderKey)}, `obfuscate=order: no key of that name (did you mean orders?)`},
		{`@<seq, width=6, obfuscate=x>`, nil, `obfuscate=x: no key of that name (give its key with sn.WithObfuscation or in the config's obfuscation section)`},
		{`@<seq, obfuscate=orders>`, []sn.Option{sn.WithObfuscation("orders", orderKey)}, `obfuscate= needs width= and overflow=error`},
		{`@<seq, width=6, overflow=grow, obfuscate=orders>`, []sn.Option{sn.WithObfuscation("orders", orderKey)}, `obfuscate= needs width= and overflow=error`},
		{`@<seq, width=19, obfuscate=orders>`, []sn.Option{sn.WithObfuscation("orders", orderKey)}, `obfuscate= needs width= and overflow=error`},
		{`@<seq, width=6>`, []sn.Option{sn.WithObfuscation("orders", []byte("short"))}, `WithObfuscation("orders"): a key of 5 bytes, want at least 16`},
	}
	for _, tt := range tests {
		_, err := sn.New(tt.tpl, append(tt.opts, mem())...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s) = %v, want an error with %q", tt.tpl, err, tt.want)
		}
	}
}

func ExampleWithObfuscation() {
	key := []byte("load me from a secret store, 16+ bytes")
	g := sn.MustNew(`INV-@<seq, width=8, obfuscate=invoices>`,
		sn.WithSequence("seq", sequence.NewMemory()), sn.WithObfuscation("invoices", key))
	for range 3 {
		s, _ := g.Next(ctx)
		p, _ := g.Parse(s)
		fmt.Println(len(s), p.Seq)
	}
	// Output:
	// 12 1
	// 12 2
	// 12 3
}

// Obfuscating a series is a new series: CheckSet refuses the old and new
// templates on one store, since the new one prints numbers the old one
// printed.
func TestObfuscateIsANewSeries(t *testing.T) {
	plain := mustNew(t, `ORD-@<seq, width=4>`)
	obf := mustNew(t, `ORD-@<seq, width=4, obfuscate=orders>`, sn.WithObfuscation("orders", orderKey))
	p, _ := plain.Next(ctx)
	o, _ := obf.Next(ctx)
	pp, _ := plain.Parse(p)
	po, _ := obf.Parse(o)
	if pp.Key == po.Key {
		t.Errorf("the plain and the obfuscated template share the counter %q", pp.Key)
	}
	err := sn.CheckSet([]sn.Member{{Name: "old", Gen: plain, Store: "db"}, {Name: "new", Gen: obf, Store: "db"}})
	if !errors.Is(err, sn.ErrAmbiguous) {
		t.Errorf("CheckSet(plain, obfuscated on one store) = %v, want ErrAmbiguous", err)
	}
}

// hideRecords hides a Segment's records: the control of TestObfuscateKey.
type hideRecords struct{ s *sequence.Segment }

func (h hideRecords) Next(ctx context.Context, key string) (int64, error) { return h.s.Next(ctx, key) }

// A series issued with one obfuscation key, in a bbolt file, and then a
// process with another key under the same name: its draws, its Enroll,
// its Floor and its FloorParsed are refused with ErrKey (the file records the key's
// check value with the first number), so nothing prints twice and no
// floor is raised wrongly. The control, the same file without records,
// prints numbers the first key printed.
func TestObfuscateKey(t *testing.T) {
	otherKey := []byte("another key of sixteen bytes or more")
	const tpl = `INV-@<seq, width=3, obfuscate=invoices>`
	for _, recorded := range []bool{true, false} {
		t.Run(map[bool]string{true: "recorded", false: "control"}[recorded], func(t *testing.T) {
			store, err := boltseq.Open(filepath.Join(t.TempDir(), "sn.db"), boltseq.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			process := func(key []byte) *sn.Generator {
				seg := must(sequence.NewSegment(store, sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10}))
				t.Cleanup(func() { seg.Close() })
				var gen sequence.Gen = seg
				if !recorded {
					gen = hideRecords{seg}
				}
				return sn.MustNew(tpl, sn.WithSequence("seq", gen), sn.WithObfuscation("invoices", key))
			}
			seen := map[string]bool{}
			repeats := 0
			first := process(orderKey)
			for range 400 {
				n, err := first.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				seen[n] = true
			}
			second := process(otherKey)
			refused := 0
			for range 400 {
				n, err := second.Next(ctx)
				if errors.Is(err, sn.ErrKey) {
					refused++
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if seen[n] {
					repeats++
				}
				seen[n] = true
			}
			if !recorded {
				if repeats == 0 {
					t.Error("the control repeated nothing: the test cannot see a number printed under two keys")
				}
				return
			}
			if repeats != 0 || refused != 400 {
				t.Errorf("another key: %d repeats, %d of 400 draws refused", repeats, refused)
			}
			if err := second.Enroll(ctx); !errors.Is(err, sn.ErrKey) {
				t.Errorf("Enroll with another key: %v; want ErrKey, not a template that collides with itself", err)
			}
			if err := second.Floor(ctx, 900); !errors.Is(err, sn.ErrKey) {
				t.Errorf("Floor with another key: %v; want ErrKey", err)
			}
			p, err := second.Parse("INV-123")
			if err != nil {
				t.Fatal(err)
			}
			if err := second.FloorParsed(ctx, p); !errors.Is(err, sn.ErrKey) {
				t.Errorf("FloorParsed with another key: %v; want ErrKey", err)
			}
			if _, err := first.Next(ctx); err != nil {
				t.Errorf("the first key after the second was refused: %v", err)
			}
			_, err = second.Next(ctx)
			t.Log(err)
		})
	}
}
