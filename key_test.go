package sn_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
)

// keyRecorder is a sequence that remembers the key it was last asked for.
type keyRecorder struct {
	mu   sync.Mutex
	keys []string
}

func (r *keyRecorder) Next(_ context.Context, key string) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, key)
	return int64(len(r.keys)), nil
}

// keyOf returns the counter key that template draws from for vars at the
// given instant.
func keyOf(t *testing.T, template string, vars sn.Vars) string {
	t.Helper()
	r := &keyRecorder{}
	at := time.Date(2017, 3, 4, 10, 0, 0, 0, time.UTC)
	g, err := sn.New(template, sn.WithSequence("seq", r), sn.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatalf("New(%q): %v", template, err)
	}
	if _, err := first(g.Issue(context.Background(), sn.Request{Vars: vars})); err != nil {
		t.Fatalf("%q: NextWith: %v", template, err)
	}
	return r.keys[0]
}

// The counter key follows what a template means, not how it is spelt:
// tidying a config file or widening a number continues the numbering.
func TestKeySameSeries(t *testing.T) {
	groups := []struct {
		name      string
		templates []string
		vars      sn.Vars
	}{
		{"spelling", []string{
			`QJ@<seq, width=6>`,
			`QJ@<seq, width=06>`,
			`QJ@<seq, width=+6>`,
			`QJ@< seq ,width = 6 >`,
			`QJ@<seq, width="6">`,
			`QJ@<seq, width=6, overflow=error>`,
			`QJ@<seq, overflow=error, width=6>`,
			`QJ@<seq, width=6, reset=never>`,
		}, nil},
		{"formatting", []string{
			`QJ@<seq, width=6>`,
			`QJ@<seq, width=8>`,
			`QJ@<seq>`,
			`QJ@<seq, width=6, overflow=grow>`,
			`QJ@<seq, width=6>@<checksum, algo=luhn>`,
			`QJ@<seq, width=6>@<random, width=2>`,
		}, nil},
		{"date format beyond the reset period", []string{
			`INV@<date, format=yyyyMMdd>-@<seq, width=4, reset=day>`,
			`INV@<date, format=yyyy-MM-dd>-@<seq, width=4, reset=day>`,
			`INV@<date, format=yyyyMMddHH, tz=Asia/Shanghai>-@<seq, width=4, reset=day>`,
			`INV@<date, format=yyMMdd, window=2000>-@<seq, reset=day>`,
		}, nil},
		{"variable limits", []string{
			`@<unit>-@<seq, key=unit>`,
			`@<unit, chars=0-9>-@<seq, key=unit>`,
			`@<unit, maxlen=8, chars=0-9>-@<seq, width=5, key=unit>`,
			`@<unit, var>-@<seq, key=unit>`,
		}, sn.Vars{"unit": "6541"}},
		{"ownerKey names the series", []string{
			`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
			`@<ownerKey, value=SN>@<seq, width=8>`,
			`@<ownerKey, value="SN">/@<seq>`,
		}, nil},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			want := keyOf(t, g.templates[0], g.vars)
			for _, tpl := range g.templates[1:] {
				if got := keyOf(t, tpl, g.vars); got != want {
					t.Errorf("key of %s = %q, want %q (that of %s)", tpl, got, want, g.templates[0])
				}
			}
		})
	}
}

// A different prefix, ownerKey, key= or reset= is a different series.
func TestKeyDifferentSeries(t *testing.T) {
	vars := sn.Vars{"unit": "6541", "area": "010", "ownerKey": "K"}
	templates := []string{
		`QJ@<seq, width=6>`,
		`QK@<seq, width=6>`,
		`QJ-@<seq, width=6>`,
		`@<ownerKey, value=SN>@<seq>`,
		`@<ownerKey, value=SM>@<seq>`,
		`@<ownerKey>-@<seq>`,
		`@<unit>-@<seq, key=unit>`,
		`@<unit>-@<seq>`,
		`@<area>-@<seq, key=area>-@<unit>`,
		`@<date, format=yyyyMMdd>@<seq, reset=day>`,
		`@<date, format=yyyyMMdd>@<seq, reset=month>`,
		`@<date, format=yyyyMMdd>@<seq>`,
		`@<tag, value=A>@<seq>`,
		`@<tag, value=B>@<seq>`,
	}
	seen := map[string]string{}
	for _, tpl := range templates {
		k := keyOf(t, tpl, vars)
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s share the counter key %q", tpl, other, k)
		}
		seen[k] = tpl
	}
}

// Explain prints the key, with placeholders for what varies per call.
func TestExplainKey(t *testing.T) {
	tests := []struct{ tpl, key string }{
		{`@<ownerKey, value=SN>-@<seq, width=8>`, `SN`},
		{`@<ownerKey>-@<seq, width=8>`, `<ownerKey>`},
		{`QJ@<seq, width=6>`, `QJ@<seq>`},
		{`@<area>-@<unit>-@<seq, width=5, key=unit>`, `@<area>-@<unit>-@<seq, key=unit>|unit=<unit>`},
		{`@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`, `@<date>@<seq, reset=day>|<yyyy-MM-dd>`},
		{`A|B@<seq>`, `A\|B@<seq>`},
	}
	for _, tt := range tests {
		g := sn.MustNew(tt.tpl, mem())
		var got string
		for _, p := range g.Explain().Parts {
			if p.Kind == "sequence" {
				got = p.Key
			}
		}
		if got != tt.key {
			t.Errorf("Explain of %s: key %q, want %q", tt.tpl, got, tt.key)
		}
	}
}
