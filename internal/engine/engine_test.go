package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// at0 is the instant of every call that does not say otherwise.
var at0 = time.Date(2017, 3, 4, 12, 0, 0, 0, time.UTC)

// drawLog records, across the sequences of a test, every number drawn:
// which sequence, for which key, what it gave.
type drawLog struct {
	mu    sync.Mutex
	draws []logged
}

type logged struct {
	gen string
	key string
	n   int64
}

func (l *drawLog) add(d logged) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draws = append(l.draws, d)
}

func (l *drawLog) all() []logged {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.draws)
}

// recSeq is a sequence.Gen and nothing more (no Bind, no NextN): a counter
// per key starting after start, recording every key it is asked for.
type recSeq struct {
	name  string
	start int64
	log   *drawLog
	mu    sync.Mutex
	count map[string]int64
}

func (r *recSeq) Next(_ context.Context, key string) (int64, error) {
	r.mu.Lock()
	if r.count == nil {
		r.count = map[string]int64{}
	}
	r.count[key]++
	n := r.start + r.count[key]
	r.mu.Unlock()
	r.log.add(logged{r.name, key, n})
	return n, nil
}

// constExpr is a custom expression that prints a fixed text, without a
// Pattern.
type constExpr struct {
	text   string
	order  expression.Order
	maxLen int
}

func (e *constExpr) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return append(dst, e.text...), nil
}
func (e *constExpr) Order() expression.Order { return e.order }
func (e *constExpr) MaxLen() int             { return e.maxLen }

// patExpr is constExpr with a Pattern.
type patExpr struct {
	constExpr
	pattern string
}

func (e *patExpr) Pattern() string { return e.pattern }

// parityExpr prints E or O for the parity of the sequence value, and checks
// it when a number is read back.
type parityExpr struct{ order expression.Order }

func (e *parityExpr) Append(dst []byte, c *expression.Context) ([]byte, error) {
	n, ok := c.Seq()
	if !ok {
		return dst, errors.New("no sequence value")
	}
	return append(dst, "EO"[n%2]), nil
}
func (e *parityExpr) Order() expression.Order { return e.order }
func (e *parityExpr) MaxLen() int             { return 1 }
func (e *parityExpr) Pattern() string         { return "[EO]" }
func (e *parityExpr) Check(part string, c *expression.Context) error {
	n, ok := c.Seq()
	if !ok {
		return errors.New("no sequence value")
	}
	if want := string("EO"[n%2]); part != want {
		return fmt.Errorf("parity of %d is %s, not %s", n, want, part)
	}
	return nil
}

// panicExpr panics in Append.
type panicExpr struct{}

func (panicExpr) Append([]byte, *expression.Context) ([]byte, error) { panic("kaboom") }
func (panicExpr) Order() expression.Order                            { return expression.Normal }
func (panicExpr) MaxLen() int                                        { return 1 }
func (panicExpr) Pattern() string                                    { return "x" }

// shortenExpr takes back what the parts before it printed.
type shortenExpr struct{}

func (shortenExpr) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return dst[:0], nil
}
func (shortenExpr) Order() expression.Order { return expression.Normal }
func (shortenExpr) MaxLen() int             { return 1 }
func (shortenExpr) Pattern() string         { return "x" }

// spyExpr prints a fixed text and records what Printed held.
type spyExpr struct {
	patExpr
	name string
	mu   *sync.Mutex
	seen map[string]string
}

func (e *spyExpr) Append(dst []byte, c *expression.Context) ([]byte, error) {
	e.mu.Lock()
	e.seen[e.name] = string(c.Printed())
	e.mu.Unlock()
	return append(dst, e.text...), nil
}

func factory(e expression.Expression) expression.Factory {
	return func(expression.Args) (expression.Expression, error) { return e, nil }
}

// testConfig returns a Config with the built-in expressions, the given
// sequences and expressions, and a clock stopped at at0.
func testConfig(seqs map[string]sequence.Gen, exprs map[string]expression.Factory) Config {
	cfg := Config{
		Seqs: seqs,
		Exprs: map[string]expression.Factory{
			"date":     builtin.NewDate,
			"checksum": builtin.NewChecksum,
			"random":   builtin.NewRandom,
		},
		Clock: func() time.Time { return at0 },
	}
	for name, f := range exprs {
		cfg.Exprs[name] = f
	}
	return cfg
}

// customExprs are the custom expressions the tables use.
func customExprs() map[string]expression.Factory {
	return map[string]expression.Factory{
		"tag":    factory(&patExpr{constExpr{"XY", expression.Normal, 2}, `[A-Z]{2}`}),
		"free":   factory(&constExpr{"a/b", expression.Normal, 3}),
		"parity": factory(&parityExpr{expression.Normal}),
		"early":  factory(&parityExpr{expression.Before}),
		"args": func(args expression.Args) (expression.Expression, error) {
			if err := args.Check("a", "b"); err != nil {
				return nil, err
			}
			return &patExpr{constExpr{"Q", expression.Normal, 1}, "Q"}, nil
		},
	}
}

// recorders returns two recording sequences, seq and seq2, sharing a log.
func recorders() (map[string]sequence.Gen, *drawLog) {
	log := &drawLog{}
	return map[string]sequence.Gen{
		"seq":  &recSeq{name: "seq", start: 40, log: log},
		"seq2": &recSeq{name: "seq2", start: 7, log: log},
	}, log
}

// TestParseInvertsNext issues numbers and reads each back: the counter key
// and the value of every sequence part are the ones the sequences were
// asked for and gave.
func TestParseInvertsNext(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
		vars map[string]string
		at   time.Time
	}{
		{"one sequence", `QJ@<seq, width=6>`, nil, time.Time{}},
		{"unbounded sequence", `QJ-@<seq>`, nil, time.Time{}},
		{"two sequences", `@<seq, width=3>-@<seq2, width=2>`, nil, time.Time{}},
		{"one sequence twice", `@<seq, width=2>.@<seq2>.@<seq, width=3>`, nil, time.Time{}},
		{"key= a setter", `@<unit, value=U7>-@<seq, key=unit>`, nil, time.Time{}},
		{"key= a variable", `@<unit>-@<seq, width=4, key=unit>`, map[string]string{"unit": "6541"}, time.Time{}},
		{"key= one of two variables", `@<area>-@<unit>-@<seq, width=5, key=unit>`, map[string]string{"area": "N", "unit": "u|1\\"}, time.Time{}},
		{"reset yyyy", `INV@<date, format=yyyyMMdd>-@<seq, width=4, reset=day>`, nil, time.Time{}},
		{"reset yyyy monthly", `INV@<date, format=yyyy-MM>-@<seq, width=4, reset=month>`, nil, time.Time{}},
		{"reset yy with a window", `INV-@<date, format=yy, window=2000>-@<seq, width=4, reset=year>`, nil, time.Time{}},
		{"reset yy with a window, last year", `INV-@<date, format=yy, window=2000>-@<seq, width=4, reset=year>`, nil, time.Date(2099, 12, 31, 23, 0, 0, 0, time.UTC)},
		{"reset in a time zone on another day", `@<date, format=yyyy-MM-dd, tz=Asia/Shanghai>/@<seq, reset=day>`, nil, time.Date(2017, 3, 4, 20, 0, 0, 0, time.UTC)},
		{"ownerKey per call", `@<ownerKey>-@<seq>`, map[string]string{"ownerKey": "SN"}, time.Time{}},
		{"ownerKey set", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, nil, time.Time{}},
		{"checksum over=seq after the sequence", `A@<seq, width=5>@<checksum, algo=luhn>`, nil, time.Time{}},
		{"checksum over=seq before the sequence", `@<checksum, algo=luhn>-@<seq, width=5>`, nil, time.Time{}},
		{"checksum over=seq of the nearest sequence", `@<seq2, width=2>-@<seq, width=3>@<checksum, algo=damm>`, nil, time.Time{}},
		{"checksum over=all", `AB@<seq, width=5>@<checksum, algo=mod37-2, over=all>`, nil, time.Time{}},
		{"two-character checksum over=all", `AB@<seq, width=5>@<checksum, algo=mod97-10, over=all>`, nil, time.Time{}},
		{"random", `R@<random, width=3, alphabet=A-Z>-@<seq, width=4>`, nil, time.Time{}},
		{"custom with a Pattern", `@<seq, width=4>-@<tag>`, nil, time.Time{}},
		{"custom without a Pattern", `@<seq, width=4>/@<free>`, nil, time.Time{}},
		{"custom with a Checker", `@<seq, width=3>@<parity>`, nil, time.Time{}},
		{"variable with chars and maxlen", `@<area, chars=A-Z, maxlen=3>@<seq, width=4>`, map[string]string{"area": "QJ"}, time.Time{}},
		{"everything", `@<ownerKey>/@<date, format=yyMMdd, window=2000>/@<unit>-@<seq, width=3, key=unit, reset=month>@<checksum, algo=luhn>@<random, width=2>`,
			map[string]string{"ownerKey": "O", "unit": "U"}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, log := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, customExprs()))
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.tpl, err)
			}
			ctx := context.Background()
			var numbers []string
			for range 3 {
				s, err := pl.Next(ctx, tt.at, tt.vars)
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				numbers = append(numbers, s)
			}
			batch, err := pl.NextN(ctx, 3, tt.at, tt.vars)
			if err != nil {
				t.Fatalf("NextN: %v", err)
			}
			numbers = append(numbers, batch...)
			drawn := log.all()
			if len(drawn) != len(numbers)*len(pl.seqs) {
				t.Fatalf("%d numbers drew %d values from %d sequence parts", len(numbers), len(drawn), len(pl.seqs))
			}
			// Next draws each number's values in template position; NextN
			// draws the batch part by part.
			byNumber := make([][]logged, len(numbers))
			for j, d := range drawn {
				switch k := len(pl.seqs); {
				case j < 3*k:
					byNumber[j/k] = append(byNumber[j/k], d)
				default:
					byNumber[3+(j-3*k)%3] = append(byNumber[3+(j-3*k)%3], d)
				}
			}
			for j, s := range numbers {
				r, err := pl.Parse(s)
				if err != nil {
					t.Errorf("Parse(%q): %v", s, err)
					continue
				}
				want := byNumber[j]
				if r.Key != want[0].key || r.Seq != want[0].n {
					t.Errorf("Parse(%q) = key %q, seq %d; drew %d from %q", s, r.Key, r.Seq, want[0].n, want[0].key)
				}
				if len(r.Draws) != len(want) {
					t.Fatalf("Parse(%q): %d draws, want %d", s, len(r.Draws), len(want))
				}
				for k, d := range r.Draws {
					p := &pl.parts[pl.seqs[k]]
					if d.Key != want[k].key || d.Seq != want[k].n || d.Part != want[k].gen || d.Offset != p.Offset {
						t.Errorf("Parse(%q): draw %d = %+v, want %s=%d from %q at offset %d", s, k, d, want[k].gen, want[k].n, want[k].key, p.Offset)
					}
				}
				for name, v := range tt.vars {
					if r.Vars[name] != v {
						t.Errorf("Parse(%q): variable %s = %q, want %q", s, name, r.Vars[name], v)
					}
				}
			}
		})
	}
}

// TestParseInvertsNextSeq: a custom part's Context.Seq is "the sequence
// value of the number (of its last sequence part, when it has several).
// Sequences are drawn before any expression runs." Append and Check must
// see the same value, or Parse refuses what Next printed.
func TestParseInvertsNextSeq(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
	}{
		{"Normal part between two sequences", `@<seq, width=3>-@<parity>-@<seq2, width=3>`},
		{"Before part", `@<early>-@<seq, width=3>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, log := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, customExprs()))
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.tpl, err)
			}
			s, err := pl.Next(context.Background(), time.Time{}, nil)
			if err != nil {
				t.Fatalf("Next: %v (drew %v)", err, log.all())
			}
			if _, err := pl.Parse(s); err != nil {
				t.Errorf("Next printed %q (drew %v), which Parse refuses: %v", s, log.all(), err)
			}
		})
	}
}

// keyOf returns the counter key template draws from at at0.
func keyOf(t *testing.T, tpl string, vars map[string]string) string {
	t.Helper()
	seqs, log := recorders()
	pl, err := Compile(tpl, testConfig(seqs, customExprs()))
	if err != nil {
		t.Fatalf("Compile(%q): %v", tpl, err)
	}
	if _, err := pl.Next(context.Background(), time.Time{}, vars); err != nil {
		t.Fatalf("%q: Next: %v", tpl, err)
	}
	d := log.all()
	if len(d) == 0 {
		t.Fatalf("%q: nothing drawn", tpl)
	}
	return d[0].key
}

// The counter key follows what a template means, not how it is spelt.
func TestKeySameSeries(t *testing.T) {
	groups := []struct {
		name      string
		templates []string
		vars      map[string]string
		key       string
	}{
		{"spelling", []string{
			`QJ@<seq, width=6>`,
			`QJ@<seq, width=06>`,
			`QJ@<seq, width=+6>`,
			`QJ@<  seq ,width = 6 >`,
			"QJ@<seq,\n\twidth=6>",
			`QJ@<seq, width="6">`,
			`QJ@<seq, width=6, overflow=error>`,
			`QJ@<seq, overflow=error, width=6>`,
			`QJ@<seq, width=6, reset=never>`,
			`QJ@<seq, reset="never", width=6>`,
		}, nil, "QJ@<seq>"},
		{"formatting", []string{
			`QJ@<seq, width=6>`,
			`QJ@<seq, width=8>`,
			`QJ@<seq>`,
			`QJ@<seq, width=6, overflow=grow>`,
			`QJ@<seq, width=6>@<checksum, algo=luhn>`,
			`QJ@<seq, width=6>@<checksum, algo=mod37-2, over=all>`,
			`QJ@<checksum, algo=luhn>@<seq, width=6>`,
			`QJ@<seq, width=6>@<random, width=2>`,
		}, nil, "QJ@<seq>"},
		{"date format and time zone", []string{
			`INV@<date, format=yyyyMMdd>-@<seq, width=4, reset=day>`,
			`INV@<date, format=yyyy-MM-dd>-@<seq, width=4, reset=day>`,
			`INV@<date, format=yyyyMMddHH, tz=Asia/Shanghai>-@<seq, width=4, reset=day>`,
			`INV@<date, tz=UTC, format=yyyyMMdd>-@<seq, reset=day, width=4>`,
			`INV@<date, format=yyMMdd, window=2000>-@<seq, reset=day>`,
		}, nil, "INV@<date>-@<seq, reset=day>|2017-03-04"},
		{"variable limits", []string{
			`@<unit>-@<seq, key=unit>`,
			`@<unit, chars=0-9>-@<seq, key=unit>`,
			`@<unit, maxlen=8, chars=0-9>-@<seq, width=5, key=unit>`,
			`@<unit, var>-@<seq, key=unit>`,
		}, map[string]string{"unit": "6541"}, "@<unit>-@<seq, key=unit>|unit=6541"},
		{"ownerKey set names the series", []string{
			`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
			`@<ownerKey, value="SN">-@<seq>`,
			`X@<ownerKey, value=SN>/@<seq, width=3>`,
		}, nil, "SN"},
		{"ownerKey per call names the series", []string{
			`@<ownerKey>-@<seq>`,
			`@<ownerKey>/@<seq, width=5>@<checksum, algo=luhn>`,
		}, map[string]string{"ownerKey": "SN"}, "SN"},
		{"custom expression arguments", []string{
			`@<args, a=1, b=2>-@<seq>`,
			`@<args, b=2, a=1>-@<seq>`,
			`@<args, a="1", b=2>-@<seq>`,
		}, nil, "@<args, a=1, b=2>-@<seq>"},
		{"escaped", []string{
			`@<unit>|@<seq, key=unit>`,
			`@<unit, maxlen=3>|@<seq, width=2, key=unit>`,
		}, map[string]string{"unit": `a\b`}, `@<unit>\|@<seq, key=unit>|unit=a\\b`},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tpl := range g.templates {
				if got := keyOf(t, tpl, g.vars); got != g.key {
					t.Errorf("%q draws from %q, want %q", tpl, got, g.key)
				}
			}
		})
	}
}

// TestKeyDifferentSeries: what the template means, or the call's inputs,
// tell series apart.
func TestKeyDifferentSeries(t *testing.T) {
	type call struct {
		tpl  string
		vars map[string]string
	}
	tests := []struct {
		name string
		a, b call
	}{
		{"prefix", call{`QJ@<seq, width=6>`, nil}, call{`QK@<seq, width=6>`, nil}},
		{"separator", call{`QJ-@<seq>`, nil}, call{`QJ/@<seq>`, nil}},
		{"suffix", call{`QJ@<seq, width=6>A`, nil}, call{`QJ@<seq, width=6>B`, nil}},
		{"ownerKey set", call{`@<ownerKey, value=SN>-@<seq>`, nil}, call{`@<ownerKey, value=SM>-@<seq>`, nil}},
		{"ownerKey per call", call{`@<ownerKey>-@<seq>`, map[string]string{"ownerKey": "SN"}}, call{`@<ownerKey>-@<seq>`, map[string]string{"ownerKey": "SM"}}},
		{"ownerKey or the template", call{`@<ownerKey, value=SN>@<seq>`, nil}, call{`SN@<seq>`, nil}},
		{"key= names another variable", call{`@<unit>-@<area>-@<seq, key=unit>`, map[string]string{"unit": "1", "area": "1"}},
			call{`@<unit>-@<area>-@<seq, key=area>`, map[string]string{"unit": "1", "area": "1"}}},
		{"key= value", call{`@<unit>-@<seq, key=unit>`, map[string]string{"unit": "1"}}, call{`@<unit>-@<seq, key=unit>`, map[string]string{"unit": "2"}}},
		{"key= or none", call{`@<unit>-@<seq, key=unit>`, map[string]string{"unit": "1"}}, call{`@<unit>-@<seq>`, map[string]string{"unit": "1"}}},
		{"escaping keeps ownerKey and key= apart", call{`@<ownerKey>-@<unit>-@<seq, key=unit>`, map[string]string{"ownerKey": "a|unit=b", "unit": "c"}},
			call{`@<ownerKey>-@<unit>-@<seq, key=unit>`, map[string]string{"ownerKey": "a", "unit": "b|unit=c"}}},
		{"escaping keeps a backslash apart", call{`@<ownerKey>-@<unit>-@<seq, key=unit>`, map[string]string{"ownerKey": `x\`, "unit": "|unit=z"}},
			call{`@<ownerKey>-@<unit>-@<seq, key=unit>`, map[string]string{"ownerKey": `x|unit=\`, "unit": "z"}}},
		{"reset day or month", call{`INV@<date>-@<seq, reset=day>`, nil}, call{`INV@<date>-@<seq, reset=month>`, nil}},
		{"reset month or year", call{`INV@<date>-@<seq, reset=month>`, nil}, call{`INV@<date>-@<seq, reset=year>`, nil}},
		{"reset or never", call{`INV@<date>-@<seq, reset=year>`, nil}, call{`INV@<date>-@<seq>`, nil}},
		{"custom argument", call{`@<args, a=1>-@<seq>`, nil}, call{`@<args, a=2>-@<seq>`, nil}},
		{"setter value", call{`@<unit, value=A>-@<seq>`, nil}, call{`@<unit, value=B>-@<seq>`, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, kb := keyOf(t, tt.a.tpl, tt.a.vars), keyOf(t, tt.b.tpl, tt.b.vars)
			if ka == kb {
				t.Errorf("%q and %q both draw from %q", tt.a.tpl, tt.b.tpl, ka)
			}
		})
	}
}

// TestKeyPeriods: the reset period in the key follows the call's instant
// in the date's time zone.
func TestKeyPeriods(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
		at   time.Time
		key  string
	}{
		{"day", `@<date>@<seq, reset=day>`, at0, "@<date>@<seq, reset=day>|2017-03-04"},
		{"month", `@<date>@<seq, reset=month>`, at0, "@<date>@<seq, reset=month>|2017-03"},
		{"year", `@<date>@<seq, reset=year>`, at0, "@<date>@<seq, reset=year>|2017"},
		{"day in a time zone ahead", `@<date, tz=Asia/Shanghai>@<seq, reset=day>`, time.Date(2017, 3, 4, 20, 0, 0, 0, time.UTC), "@<date>@<seq, reset=day>|2017-03-05"},
		{"year in a time zone behind", `@<date, tz=America/New_York>@<seq, reset=year>`, time.Date(2018, 1, 1, 2, 0, 0, 0, time.UTC), "@<date>@<seq, reset=year>|2017"},
		{"year 0", `@<date>@<seq, reset=year>`, time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC), "@<date>@<seq, reset=year>|0000"},
		{"year 9999", `@<date>@<seq, reset=day>`, time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), "@<date>@<seq, reset=day>|9999-12-31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, log := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, nil))
			if err != nil {
				t.Fatal(err)
			}
			s, err := pl.Next(context.Background(), tt.at, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := log.all()[0].key; got != tt.key {
				t.Errorf("Next at %v drew from %q, want %q", tt.at, got, tt.key)
			}
			r, err := pl.Parse(s)
			if err != nil {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			if r.Key != tt.key {
				t.Errorf("Parse(%q).Key = %q, want %q", s, r.Key, tt.key)
			}
		})
	}
}

func TestCustomErrors(t *testing.T) {
	exprs := map[string]expression.Factory{
		"boom":   factory(panicExpr{}),
		"liar":   factory(&patExpr{constExpr{"x1", expression.Normal, 2}, `[A-Z]{2}`}),
		"long":   factory(&constExpr{"abc", expression.Normal, 2}),
		"huge":   factory(&constExpr{strings.Repeat("a", 301), expression.Normal, 300}),
		"short":  factory(shortenExpr{}),
		"failer": factory(&parityExpr{expression.Normal}),
	}
	tests := []struct {
		name   string
		tpl    string
		target error
		want   string
	}{
		{"panic in Append", `@<seq, width=3>-@<boom>`, ErrPanic, "sn: boom at offset 16: panic: kaboom"},
		{"output outside the Pattern", `@<seq, width=3>-@<liar>`, ErrPart, `sn: liar at offset 16: part printed text outside its pattern: "x1" does not match [A-Z]{2}`},
		{"output longer than MaxLen", `@<seq, width=3>/@<long>`, ErrPart, `sn: long at offset 16: part printed text outside its pattern: "abc" does not match (?s:.){0,2}`},
		{"output longer than a MaxLen the automaton does not count", `@<seq, width=3>/@<huge>`, ErrPart, `sn: huge at offset 16: part printed text outside its pattern: "` + strings.Repeat("a", 301) + `" does not match (?s:.){0,300}`},
		// A part appends to a buffer of its own: what it does to it cannot
		// reach the text before it.
		{"Append cannot shorten the number", `AB@<seq, width=3>@<short>`, ErrPart, `sn: short at offset 17: part printed text outside its pattern: "" does not match x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, _ := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, exprs))
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.tpl, err)
			}
			ctx := context.Background()
			s, err := pl.Next(ctx, time.Time{}, nil)
			checkErr(t, "Next", err, tt.target, tt.want)
			if s != "" {
				t.Errorf("Next = %q with the error", s)
			}
			dst := []byte("keep")
			out, err := pl.AppendNext(ctx, dst, time.Time{}, nil)
			checkErr(t, "AppendNext", err, tt.target, tt.want)
			if string(out) != "keep" {
				t.Errorf("AppendNext = %q with the error, want dst as it was", out)
			}
			ns, err := pl.NextN(ctx, 2, time.Time{}, nil)
			checkErr(t, "NextN", err, tt.target, tt.want)
			if len(ns) != 0 {
				t.Errorf("NextN = %q with the error", ns)
			}
			var pe *PartError
			if !errors.As(err, &pe) || pe.Name != tt.tpl[strings.LastIndex(tt.tpl, "<")+1:len(tt.tpl)-1] {
				t.Errorf("error %v is not a *PartError naming the part", err)
			}
		})
	}
}

func checkErr(t *testing.T, what string, err, target error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %q", what, want)
		return
	}
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v does not wrap %v", what, err, target)
	}
	if err.Error() != want {
		t.Errorf("%s: error\n%s\nwant\n%s", what, err, want)
	}
}

// TestCompileCustomErrors: a panic in a factory or in an expression's
// methods is a template error naming the part.
func TestCompileCustomErrors(t *testing.T) {
	exprs := map[string]expression.Factory{
		"pfactory": func(expression.Args) (expression.Expression, error) { panic("no factory") },
		"porder":   factory(&panicMethods{order: true}),
		"plen":     factory(&panicMethods{maxLen: true}),
		"ppattern": factory(&panicMethods{pattern: true}),
		"nilexpr":  func(expression.Args) (expression.Expression, error) { return nil, nil },
		"badpat":   factory(&patExpr{constExpr{"x", expression.Normal, 1}, `(`}),
		"anchored": factory(&patExpr{constExpr{"x", expression.Normal, 1}, `^x`}),
	}
	tests := []struct {
		name   string
		tpl    string
		target error
		want   string
	}{
		{"panic in the factory", `@<seq>-@<pfactory>`, ErrPanic, "sn: template: offset 9: pfactory: panic in factory: no factory\n\t@<seq>-@<pfactory>\n\t         ^"},
		{"panic in Order", `@<seq>-@<porder>`, ErrPanic, "sn: template: offset 9: porder: panic: Order\n\t@<seq>-@<porder>\n\t         ^"},
		{"panic in MaxLen", `@<seq>-@<plen>`, ErrPanic, "sn: template: offset 7: plen: panic: MaxLen\n\t@<seq>-@<plen>\n\t       ^"},
		{"panic in Pattern", `@<seq>-@<ppattern>`, ErrPanic, "sn: template: offset 7: ppattern: panic: Pattern\n\t@<seq>-@<ppattern>\n\t       ^"},
		{"nil expression", `@<seq>-@<nilexpr>`, ErrTemplate, "sn: template: offset 9: nilexpr: factory returned a nil expression\n\t@<seq>-@<nilexpr>\n\t         ^"},
		{"bad Pattern", `@<seq>-@<badpat>`, ErrTemplate, "sn: template: offset 7: badpat: Pattern() is not a valid regular expression: error parsing regexp: missing closing ): `(`\n\t@<seq>-@<badpat>\n\t       ^"},
		{"anchored Pattern", `@<seq>-@<anchored>`, ErrTemplate, "sn: template: offset 7: anchored: Pattern(): lang: pattern \"^x\": anchors and word boundaries are not allowed in a part's pattern\n\t@<seq>-@<anchored>\n\t       ^"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, _ := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, exprs))
			if err == nil {
				t.Fatalf("Compile(%q) = %v, want an error", tt.tpl, pl)
			}
			checkErr(t, "Compile", err, tt.target, tt.want)
		})
	}
}

type panicMethods struct{ order, maxLen, pattern bool }

func (p *panicMethods) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return append(dst, 'x'), nil
}
func (p *panicMethods) Order() expression.Order {
	if p.order {
		panic("Order")
	}
	return expression.Normal
}
func (p *panicMethods) MaxLen() int {
	if p.maxLen {
		panic("MaxLen")
	}
	return 1
}
func (p *panicMethods) Pattern() string {
	if p.pattern {
		panic("Pattern")
	}
	return "x"
}

// TestOrder: parts are evaluated by Order, then position; Printed holds
// the parts before the current one that were evaluated, all of them for an
// After part; the output follows position.
func TestOrder(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	spy := func(name, text string, o expression.Order) expression.Factory {
		return factory(&spyExpr{patExpr{constExpr{text, o, 1}, text}, name, &mu, seen})
	}
	exprs := map[string]expression.Factory{
		"bef":  spy("bef", "B", expression.Before),
		"nor":  spy("nor", "N", expression.Normal),
		"aft":  spy("aft", "A", expression.After),
		"aft2": spy("aft2", "Z", expression.After),
	}
	seqs, _ := recorders()
	pl, err := Compile(`S@<bef>-@<seq, width=3>-@<aft>-@<nor>-@<aft2>`, testConfig(seqs, exprs))
	if err != nil {
		t.Fatal(err)
	}
	s, err := pl.Next(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "SB-041-A-N-Z"; s != want {
		t.Errorf("Next = %q, want %q", s, want)
	}
	want := map[string]string{
		"bef":  "S",           // Before: only the text before it
		"nor":  "SB-041-",     // Normal: not the After part before it
		"aft":  "SB-041-",     // After: everything before it
		"aft2": "SB-041-A-N-", // After: the After part before it too
	}
	for name, w := range want {
		if seen[name] != w {
			t.Errorf("%s saw Printed() = %q, want %q", name, seen[name], w)
		}
	}
}

// binderSeq is a Gen with Bind whose numbers come from a function.
type binderSeq struct {
	next  func() int64
	mu    sync.Mutex
	bound []string
	calls int // to Next, not to a handle
}

func (b *binderSeq) Next(context.Context, string) (int64, error) {
	b.mu.Lock()
	b.calls++
	b.mu.Unlock()
	return b.next(), nil
}

func (b *binderSeq) Bind(key string) sequence.Handle {
	b.mu.Lock()
	b.bound = append(b.bound, key)
	b.mu.Unlock()
	return handleFunc(func(context.Context) (int64, error) { return b.next(), nil })
}

type handleFunc func(context.Context) (int64, error)

func (f handleFunc) Next(ctx context.Context) (int64, error) { return f(ctx) }

// batchSeq is a Gen with NextN that gives the numbers of a script.
type batchSeq struct {
	batch []int64
	err   error
	calls int
}

func (b *batchSeq) Next(context.Context, string) (int64, error) {
	b.calls++
	return 1, nil
}

func (b *batchSeq) NextN(_ context.Context, _ string, dst []int64, n int) ([]int64, error) {
	b.calls++
	return append(dst, b.batch...), b.err
}

// funcSeq gives the numbers of a function, and counts its calls.
type funcSeq struct {
	next  func(call int) int64
	calls int
}

func (f *funcSeq) Next(context.Context, string) (int64, error) {
	f.calls++
	return f.next(f.calls), nil
}

func TestSequenceNotPositive(t *testing.T) {
	ctx := context.Background()
	t.Run("bound handle", func(t *testing.T) {
		for _, n := range []int64{0, -5} {
			g := &binderSeq{next: func() int64 { return n }}
			pl, err := Compile(`QJ@<seq, width=6>`, testConfig(map[string]sequence.Gen{"seq": g}, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g.bound, []string{"QJ@<seq>"}) {
				t.Errorf("bound %q, want [QJ@<seq>]", g.bound)
			}
			s, err := pl.Next(ctx, time.Time{}, nil)
			checkErr(t, "Next", err, ErrSequence, fmt.Sprintf("sn: seq at offset 2: sequence returned a number that is not positive: %d", n))
			if s != "" || g.calls != 0 {
				t.Errorf("Next = %q, and %d calls to Gen.Next besides the handle", s, g.calls)
			}
		}
	})
	t.Run("per-call key", func(t *testing.T) {
		for _, n := range []int64{0, -5} {
			g := &funcSeq{next: func(int) int64 { return n }}
			pl, err := Compile(`@<ownerKey>-@<seq>`, testConfig(map[string]sequence.Gen{"seq": g}, nil))
			if err != nil {
				t.Fatal(err)
			}
			s, err := pl.Next(ctx, time.Time{}, map[string]string{"ownerKey": "SN"})
			checkErr(t, "Next", err, ErrSequence, fmt.Sprintf("sn: seq at offset 12: sequence returned a number that is not positive: %d", n))
			if s != "" || g.calls != 1 {
				t.Errorf("Next = %q after %d calls", s, g.calls)
			}
		}
	})
	t.Run("NextN without batches", func(t *testing.T) {
		g := &funcSeq{next: func(call int) int64 { return int64(2 - call) }} // 1, then 0
		pl, err := Compile(`QJ@<seq, width=6>`, testConfig(map[string]sequence.Gen{"seq": g}, nil))
		if err != nil {
			t.Fatal(err)
		}
		ns, err := pl.NextN(ctx, 3, time.Time{}, nil)
		checkErr(t, "NextN", err, ErrSequence, "sn: seq at offset 2: sequence returned a number that is not positive: 0")
		if !slices.Equal(ns, []string{"QJ000001"}) {
			t.Errorf("NextN = %q, want the number issued before the error", ns)
		}
	})
	batches := []struct {
		name  string
		batch []int64
		err   error
		out   []string
		want  string
	}{
		{"zero in a batch", []int64{1, 0, 3}, nil, []string{"QJ000001"}, "sn: seq at offset 2: sequence returned a number that is not positive: 0"},
		{"negative first", []int64{-5, 2, 3}, nil, nil, "sn: seq at offset 2: sequence returned a number that is not positive: -5"},
		{"short batch", []int64{1, 2}, nil, []string{"QJ000001", "QJ000002"}, "sn: seq at offset 2: sequence returned 2 numbers for a batch of 3"},
		{"zero before an error", []int64{0}, sequence.ErrUnavailable, nil, "sn: seq at offset 2: sequence returned a number that is not positive: 0"},
	}
	for _, tt := range batches {
		t.Run("NextN "+tt.name, func(t *testing.T) {
			g := &batchSeq{batch: tt.batch, err: tt.err}
			pl, err := Compile(`QJ@<seq, width=6>`, testConfig(map[string]sequence.Gen{"seq": g}, nil))
			if err != nil {
				t.Fatal(err)
			}
			ns, err := pl.NextN(ctx, 3, time.Time{}, nil)
			checkErr(t, "NextN", err, ErrSequence, tt.want)
			if !slices.Equal(ns, tt.out) {
				t.Errorf("NextN = %q, want %q", ns, tt.out)
			}
			if g.calls != 1 {
				t.Errorf("%d calls, want one batch", g.calls)
			}
		})
	}
}

// TestInstantOutOfRange: an instant a date cannot print is an error before
// anything is drawn.
func TestInstantOutOfRange(t *testing.T) {
	tests := []struct {
		name  string
		tpl   string
		at    time.Time
		clock bool // the instant comes from the clock
		want  string
	}{
		{"year -5", `INV@<date, format=yyyy>-@<seq, width=4, reset=year>`, time.Date(-5, 3, 4, 12, 0, 0, 0, time.UTC), false,
			"sn: date at offset 3: instant out of range: the year -5 of -0005-03-04T12:00:00Z is outside 0000-9999, which a date prints"},
		{"year 10000", `INV@<date, format=yyyy>-@<seq, width=4, reset=year>`, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false,
			"sn: date at offset 3: instant out of range: the year 10000 of 10000-01-01T00:00:00Z is outside 0000-9999, which a date prints"},
		{"year 10000 from the clock", `INV@<date, format=yyyy>-@<seq, width=4, reset=year>`, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), true,
			"sn: date at offset 3: instant out of range: the year 10000 of 10000-01-01T00:00:00Z is outside 0000-9999, which a date prints"},
		{"year 10000 in the date's time zone", `@<date, format=yyyy, tz=Asia/Shanghai>-@<seq, reset=year>`, time.Date(9999, 12, 31, 20, 0, 0, 0, time.UTC), false,
			"sn: date at offset 0: instant out of range: the year 10000 of 9999-12-31T20:00:00Z is outside 0000-9999, which a date prints"},
		{"date without a reset", `@<date>-@<seq>`, time.Date(-5, 3, 4, 12, 0, 0, 0, time.UTC), false,
			"sn: date at offset 0: instant out of range: the year -5 of -0005-03-04T12:00:00Z is outside 0000-9999, which a date prints"},
		{"yy window exceeded", `INV-@<date, format=yy, window=2000>-@<seq, width=4, reset=year>`, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), false,
			"sn: date at offset 4: instant out of range: the year 2100 of 2100-01-01T00:00:00Z is outside the window 2000-2099 of format=yy"},
		{"before the yy window", `INV-@<date, format=yy, window=2000>-@<seq, width=4, reset=year>`, time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC), false,
			"sn: date at offset 4: instant out of range: the year 1999 of 1999-12-31T23:59:59Z is outside the window 2000-2099 of format=yy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, log := recorders()
			cfg := testConfig(seqs, nil)
			at := tt.at
			if tt.clock {
				cfg.Clock = func() time.Time { return tt.at }
				at = time.Time{}
			}
			pl, err := Compile(tt.tpl, cfg)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.tpl, err)
			}
			ctx := context.Background()
			_, err = pl.Next(ctx, at, nil)
			checkErr(t, "Next", err, ErrInstant, tt.want)
			_, err = pl.AppendNext(ctx, nil, at, nil)
			checkErr(t, "AppendNext", err, ErrInstant, tt.want)
			ns, err := pl.NextN(ctx, 3, at, nil)
			checkErr(t, "NextN", err, ErrInstant, tt.want)
			if ns != nil {
				t.Errorf("NextN = %q with the error", ns)
			}
			_, err = pl.Preview(ctx, 3, at, nil)
			checkErr(t, "Preview", err, ErrInstant, tt.want)
			if d := log.all(); len(d) != 0 {
				t.Errorf("drew %v", d)
			}
		})
	}
}

func TestTooMany(t *testing.T) {
	tests := []struct {
		name string
		n    int
		want string
	}{
		{"above MaxN", MaxN + 1, "sn: too many numbers in one call: 100001 numbers asked for; one call gives 0 to 100000"},
		{"negative", -1, "sn: too many numbers in one call: -1 numbers asked for; one call gives 0 to 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, log := recorders()
			pl, err := Compile(`QJ@<seq, width=6>`, testConfig(seqs, nil))
			if err != nil {
				t.Fatal(err)
			}
			ns, err := pl.NextN(context.Background(), tt.n, time.Time{}, nil)
			checkErr(t, "NextN", err, ErrTooMany, tt.want)
			if ns != nil {
				t.Errorf("NextN = %q", ns)
			}
			_, err = pl.Preview(context.Background(), tt.n, time.Time{}, nil)
			checkErr(t, "Preview", err, ErrTooMany, tt.want)
			if d := log.all(); len(d) != 0 {
				t.Errorf("drew %v", d)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		seqs, log := recorders()
		pl, err := Compile(`QJ@<seq, width=6>`, testConfig(seqs, nil))
		if err != nil {
			t.Fatal(err)
		}
		ns, err := pl.NextN(context.Background(), 0, time.Time{}, nil)
		if ns != nil || err != nil {
			t.Errorf("NextN(0) = %q, %v", ns, err)
		}
		if d := log.all(); len(d) != 0 {
			t.Errorf("drew %v", d)
		}
	})
}

func TestPreview(t *testing.T) {
	seqs, log := recorders()
	pl, err := Compile(`@<area>-@<unit>-@<seq, width=3, key=unit>`, testConfig(seqs, nil))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pl.Preview(context.Background(), 2, time.Time{}, map[string]string{"area": "N"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"N-{unit}-001", "N-{unit}-002"}; !slices.Equal(got, want) {
		t.Errorf("Preview = %q, want %q", got, want)
	}
	if d := log.all(); len(d) != 0 {
		t.Errorf("Preview drew %v", d)
	}
}

// compileRefused compiles a template that the proof refuses and returns
// the plan with the error: the plan is complete but for finish, which
// Compile runs after the proof.
func compileRefused(t *testing.T, tpl string, cfg Config) (*Plan, error) {
	t.Helper()
	ast, err := parser.Parse(tpl)
	if err != nil {
		t.Fatal(err)
	}
	c := &compiler{cfg: cfg, tpl: ast, pl: &Plan{src: tpl, canonical: ast.String(), clock: cfg.Clock, owner: -1}}
	err = c.compile()
	if err == nil {
		t.Fatalf("Compile(%q) accepted it", tpl)
	}
	if c.pl.chain == nil {
		c.pl.chain = c.pl.langChain()
	}
	c.finish()
	return c.pl, err
}

// checkAmbiguity checks that err carries a verified witness: inputs of pa
// and pb that print one number, from different counters or values when
// same says the counters are shared.
func checkAmbiguity(t *testing.T, err error, pa, pb *Plan, same bool) *Ambiguity {
	t.Helper()
	if !errors.Is(err, ErrAmbiguous) {
		t.Errorf("error %v does not wrap ErrAmbiguous", err)
	}
	var amb *Ambiguity
	if !errors.As(err, &amb) {
		t.Fatalf("error %v has no *Ambiguity", err)
	}
	if !amb.Verified {
		t.Errorf("witness %q is not verified", amb.Number)
	}
	for _, side := range []struct {
		name string
		pl   *Plan
		in   Input
	}{{"A", pa, amb.A}, {"B", pb, amb.B}} {
		got, err := side.pl.renderInput(side.in)
		if err != nil {
			t.Errorf("%s %v: %v", side.name, side.in, err)
		} else if got != amb.Number {
			t.Errorf("%s %v prints %q, not %q", side.name, side.in, got, amb.Number)
		}
		if len(side.in.Draws) != len(side.pl.seqs) {
			t.Errorf("%s has %d draws for %d sequence parts", side.name, len(side.in.Draws), len(side.pl.seqs))
		}
		for k, d := range side.in.Draws {
			p := &side.pl.parts[side.pl.seqs[k]]
			if want := side.pl.callKey(p, side.in.At, side.in.Vars); d.Key != want {
				t.Errorf("%s: draw %d has key %q; its inputs give %q", side.name, k, d.Key, want)
			}
		}
	}
	if same {
		da, db := drawSet(amb.A), drawSet(amb.B)
		if slices.Equal(da, db) {
			t.Errorf("both inputs draw %v: not a repeat", da)
		}
	}
	return amb
}

func drawSet(in Input) []string {
	var out []string
	for _, d := range in.Draws {
		out = append(out, fmt.Sprintf("%q=%d", d.Key, d.Seq))
	}
	slices.Sort(out)
	return out
}

// TestAmbiguousTemplates: each template can print one string for two
// counter keys or values; Compile refuses it with a witness that the plan
// renders.
func TestAmbiguousTemplates(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
		want string // the witness's number
	}{
		{"variable then sequence", `@<area>@<seq>`, ""},
		{"variable, check, keyed sequence", `@<unit>@<checksum, algo=luhn>@<seq, key=unit>`, ""},
		{"yy without a window", `INV-@<date, format=yy>-@<seq, width=4, reset=year>`, "INV-17-0001"},
		{"two digit variables", `@<a, chars=0-9>@<b, chars=0-9>-@<seq, key=b>`, ""},
		{"two sequences adjacent", `@<seq, width=1, overflow=grow>@<seq, width=2, overflow=grow>`, ""},
		{"two sequences unbounded", `@<seq>@<seq2>`, ""},
		{"three sequences", `@<seq, width=2>-@<seq2, width=2>-@<seq>@<seq2>`, ""},
		{"ownerKey per call", `@<ownerKey>@<seq>`, ""},
		{"custom without a Pattern", `@<free>@<seq>`, ""},
		{"sequence then variable", `@<seq>@<unit>`, ""},
		{"yy without a window, daily", `@<date, format=yyMMdd>@<seq, width=3, reset=day>`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, log := recorders()
			cfg := testConfig(seqs, customExprs())
			pl, err := Compile(tt.tpl, cfg)
			if err == nil {
				t.Fatalf("Compile(%q) accepted it", tt.tpl)
			}
			if pl != nil {
				t.Errorf("Compile returned a plan with the error")
			}
			if !errors.Is(err, ErrTemplate) {
				t.Errorf("error %v does not wrap ErrTemplate", err)
			}
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("error %T is not a *TemplateError", err)
			}
			plan, err2 := compileRefused(t, tt.tpl, cfg)
			if err2.Error() != err.Error() {
				t.Fatalf("compiling again gives\n%v\nnot\n%v", err2, err)
			}
			amb := checkAmbiguity(t, err, plan, plan, true)
			if tt.want != "" && amb.Number != tt.want {
				t.Errorf("witness %q, want %q", amb.Number, tt.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", amb.Number)) {
				t.Errorf("message %q does not show the witness", err)
			}
			if amb.Hint == "" || !strings.Contains(err.Error(), "; "+amb.Hint+"\n") {
				t.Errorf("message %q does not give the hint %q", err, amb.Hint)
			}
			if d := log.all(); len(d) != 0 {
				t.Errorf("the proof drew %v", d)
			}
		})
	}
}

// TestAmbiguityMessage pins one refusal in full.
func TestAmbiguityMessage(t *testing.T) {
	seqs, _ := recorders()
	_, err := Compile(`@<area>@<seq>`, testConfig(seqs, nil))
	want := `sn: template: offset 0: ambiguous: "011" is printed by {area="01", seq=1 from counter "@<area>@<seq>"} and by {area="0", seq=11 from counter "@<area>@<seq>"}; where @<area> ends and @<seq> begins cannot be told: put literal text that @<area> cannot print after it, or bound it (chars=, maxlen=, width=)` +
		"\n\t@<area>@<seq>\n\t^"
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}

func TestCheckSet(t *testing.T) {
	tests := []struct {
		name         string
		a, b         string
		storeA       string
		storeB       string
		refused      bool
		sameCounters bool
	}{
		{"different bases that meet, one store", `1@<seq>`, `@<seq>`, "s", "s", true, true},
		{"different bases that meet, two stores", `1@<seq>`, `@<seq>`, "s", "t", true, false},
		{"widths 6 and 8, one store", `QJ@<seq, width=6>`, `QJ@<seq, width=8>`, "s", "s", false, true},
		{"widths 6 and 8, two stores", `QJ@<seq, width=6>`, `QJ@<seq, width=8>`, "s", "t", false, false},
		{"6 growing and 8, two stores", `QJ@<seq, width=6, overflow=grow>`, `QJ@<seq, width=8>`, "s", "t", true, false},
		{"6 growing and 8, one store", `QJ@<seq, width=6, overflow=grow>`, `QJ@<seq, width=8>`, "s", "s", false, true},
		{"one template twice, one store", `QJ@<seq>`, `QJ@<seq>`, "s", "s", false, true},
		{"one template twice, two stores", `QJ@<seq>`, `QJ@<seq>`, "s", "t", true, false},
		{"different prefixes, two stores", `QJ@<seq>`, `QK@<seq>`, "s", "t", false, false},
		{"ownerKey per call against text, one store", `@<ownerKey>-@<seq>`, `SN-@<seq>`, "s", "s", true, true},
		{"ownerKey set against text, one store", `@<ownerKey, value=SN>-@<seq>`, `SN-@<seq>`, "s", "s", true, true},
		{"ownerKey set twice, one store", `@<ownerKey, value=SN>-@<seq>`, `@<ownerKey, value=SN>-@<seq, width=4>`, "s", "s", false, true},
		{"check character against none, one store", `QJ@<seq, width=6>@<checksum, algo=luhn>`, `QJ@<seq, width=7>`, "s", "s", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, _ := recorders()
			cfg := testConfig(seqs, nil)
			pa, err := Compile(tt.a, cfg)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := Compile(tt.b, cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckSet([]Member{{"a", pa, tt.storeA}, {"b", pb, tt.storeB}})
			if !tt.refused {
				if err != nil {
					t.Fatalf("CheckSet refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckSet accepted")
			}
			var se *SetError
			if !errors.As(err, &se) || se.A != "a" || se.B != "b" {
				t.Errorf("error %v is not a *SetError of a and b", err)
			}
			amb := checkAmbiguity(t, err, pa, pb, tt.sameCounters)
			if amb.A.Template != "a" || amb.B.Template != "b" {
				t.Errorf("inputs of templates %q and %q", amb.A.Template, amb.B.Template)
			}
		})
	}
}

// TestCheckSetMessage pins one refusal in full.
func TestCheckSetMessage(t *testing.T) {
	seqs, _ := recorders()
	cfg := testConfig(seqs, nil)
	pa, _ := Compile(`1@<seq>`, cfg)
	pb, _ := Compile(`@<seq>`, cfg)
	err := CheckSet([]Member{{"a", pa, "s"}, {"b", pb, "s"}})
	want := `sn: templates "a" and "b": ambiguous: "11" is printed by {template "a", seq=1 from counter "1@<seq>"} and by {template "b", seq=11 from counter "@<seq>"}`
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}

// TestUnambiguousTemplates: templates whose numbers each read one way
// compile, among them some that look close to the refused ones.
func TestUnambiguousTemplates(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
	}{
		{"fixed-width sequence last", `@<seq, width=1, overflow=grow>@<seq, width=2>`}, // the last two digits are the second
		{"separated variables", `@<area>-@<unit>-@<seq, width=5, key=unit>`},
		{"yy with a window", `INV-@<date, format=yy, window=2000>-@<seq, width=4, reset=year>`},
		{"digit variable before fixed width", `@<a, chars=A-Z>@<b, chars=0-9, maxlen=2>-@<seq, key=b>`},
		{"check character between", `@<unit, chars=A-Z>@<checksum, algo=luhn>@<seq, key=unit>`},
		{"custom with a Pattern adjacent", `@<tag>@<seq>`},
		{"ownerKey separated", `@<ownerKey>-@<seq>`},
		{"sequence then letters", `@<seq>@<unit, chars=A-Z>`},
		{"variable of the separator's complement", `@<area>.@<seq>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, _ := recorders()
			if _, err := Compile(tt.tpl, testConfig(seqs, customExprs())); err != nil {
				t.Errorf("Compile(%q): %v", tt.tpl, err)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name   string
		tpl    string
		number string
		want   string
	}{
		{"wrong check digit", `QJ@<seq, width=6>@<checksum, algo=luhn>`, "QJ0000419",
			`sn: invalid number "QJ0000419": checksum at offset 17: check "9" is wrong for "000041" (luhn)`},
		{"too short", `QJ@<seq, width=6>`, "QJ00004",
			`sn: invalid number "QJ00004": seq at offset 2: want [0-9]{6} at byte 2, found "00004"`},
		{"too long", `QJ@<seq, width=6>`, "QJ0000411",
			`sn: invalid number "QJ0000411": unexpected "1" after byte 8`},
		{"wrong prefix", `QJ@<seq, width=6>`, "QK000041",
			`sn: invalid number "QK000041": text at offset 0: want "QJ" at byte 0, found "QK000041"`},
		{"sequence zero", `QJ@<seq, width=6>`, "QJ000000",
			`sn: invalid number "QJ000000": seq at offset 2: "000000": sequences start at 1`},
		{"Checker refuses", `@<seq, width=3>@<parity>`, "041E",
			`sn: invalid number "041E": parity at offset 15: parity of 41 is O, not E`},
		{"not a real date", `INV@<date, format=yyyyMMdd>-@<seq, width=4, reset=day>`, "INV20170230-0001",
			`sn: invalid number "INV20170230-0001": date at offset 3: "20170230" is not a date in format yyyyMMdd: day 30 out of range for the month`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, _ := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, customExprs()))
			if err != nil {
				t.Fatal(err)
			}
			r, err := pl.Parse(tt.number)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.number, r)
			}
			checkErr(t, "Parse", err, ErrInvalidNumber, tt.want)
			var inv *Invalid
			if !errors.As(err, &inv) || inv.Number != tt.number {
				t.Errorf("error %v is not an *Invalid of the number", err)
			}
		})
	}
}

// TestConcurrentNext: one plan serves many goroutines; every number is
// new and reads back as drawn.
func TestConcurrentNext(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
	}{
		{"direct, per-call key", `@<unit>-@<seq, width=6, key=unit>@<checksum, algo=luhn>`},
		{"ordered, per-call key", `@<unit>-@<seq, width=6, key=unit>-@<parity>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, _ := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, customExprs()))
			if err != nil {
				t.Fatal(err)
			}
			const workers, each = 8, 200
			out := make([][]string, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					vars := map[string]string{"unit": string(rune('A' + w%3))}
					for range each {
						s, err := pl.Next(context.Background(), time.Time{}, vars)
						if err != nil {
							t.Error(err)
							return
						}
						out[w] = append(out[w], s)
					}
				}()
			}
			wg.Wait()
			seen := map[string]bool{}
			for w, ns := range out {
				for _, s := range ns {
					if seen[s] {
						t.Fatalf("%q printed twice", s)
					}
					seen[s] = true
					r, err := pl.Parse(s)
					if err != nil {
						t.Fatalf("Parse(%q): %v", s, err)
					}
					if want := "@<unit>-@<seq, key=unit>|unit=" + string(rune('A'+w%3)); !strings.HasPrefix(r.Key, "@<unit>-@<seq") || !strings.HasSuffix(r.Key, want[strings.LastIndex(want, "|"):]) {
						t.Errorf("Parse(%q).Key = %q", s, r.Key)
					}
				}
			}
			if len(seen) != workers*each {
				t.Errorf("%d numbers, want %d", len(seen), workers*each)
			}
		})
	}
}

// TestVarErrors: a missing or bad variable is an error before anything is
// drawn.
func TestVarErrors(t *testing.T) {
	const tpl = `@<unit, chars=a-z, maxlen=3>-@<area>-@<seq, key=unit>`
	tests := []struct {
		name   string
		vars   map[string]string
		target error
		want   string
	}{
		{"missing", map[string]string{"area": "N"}, ErrVarMissing, `sn: unit at offset 0: variable missing: "unit" was not given`},
		{"empty", map[string]string{"unit": "", "area": "N"}, ErrVarMissing, `sn: unit at offset 0: variable missing: "unit" was not given`},
		{"over maxlen", map[string]string{"unit": "abcd", "area": "N"}, ErrVarInvalid, `sn: unit at offset 0: variable invalid: "unit" is 4 characters long, more than maxlen=3`},
		{"outside chars", map[string]string{"unit": "a1", "area": "N"}, ErrVarInvalid, `sn: unit at offset 0: variable invalid: "unit"="a1" has '1', outside chars=a-z`},
		{"the template's text", map[string]string{"unit": "a", "area": "N-1"}, ErrVarInvalid,
			`sn: area at offset 29: variable invalid: "area"="N-1" has '-', which the template prints as literal text (give the variable chars= to choose its characters)`},
		{"not UTF-8", map[string]string{"unit": "a", "area": "\xff"}, ErrVarInvalid, `sn: area at offset 29: variable invalid: "area"="\xff" is not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, log := recorders()
			pl, err := Compile(tpl, testConfig(seqs, nil))
			if err != nil {
				t.Fatal(err)
			}
			_, err = pl.Next(context.Background(), time.Time{}, tt.vars)
			checkErr(t, "Next", err, tt.target, tt.want)
			_, err = pl.NextN(context.Background(), 2, time.Time{}, tt.vars)
			checkErr(t, "NextN", err, tt.target, tt.want)
			if d := log.all(); len(d) != 0 {
				t.Errorf("drew %v", d)
			}
		})
	}
}

func TestAppendNext(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
		want string
	}{
		{"direct", `QJ@<seq, width=6>`, "x:QJ000041"},
		{"ordered", `QJ@<seq, width=3>@<parity>`, "x:QJ041O"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, _ := recorders()
			pl, err := Compile(tt.tpl, testConfig(seqs, customExprs()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := pl.AppendNext(context.Background(), []byte("x:"), time.Time{}, nil)
			if err != nil || string(got) != tt.want {
				t.Errorf("AppendNext = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

// CheckSet compares only the pairs whose literal prefixes nest, whose
// literal suffixes nest, and whose first characters can meet: 10,000
// templates with distinct literal text give no pair to search, nested
// text does, text that ends apart does not, a date of fixed width meets
// only text of its shape, a variable first meets what its characters
// can start, and the colliding pair
// among them is refused whatever the number of others.
func TestCheckSetCandidates(t *testing.T) {
	seqs, _ := recorders()
	cfg := testConfig(seqs, nil)
	compile := func(tpl string) *Plan {
		pl, err := Compile(tpl, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	var ms []Member
	for i := range 10_000 {
		ms = append(ms, Member{fmt.Sprintf("t%d", i), compile(fmt.Sprintf("T%d-@<seq, width=8>", i)), "s"})
	}
	if got := candidates(ms); len(got) != 0 {
		t.Errorf("10,000 templates of distinct literal text: %d pairs to search, first %v; want none", len(got), got[0])
	}
	ms = append(ms,
		Member{"dated", compile(`@<date, format=yyyyMMdd>-@<seq, width=8>`), "s"},
		Member{"nested", compile(`T1-1@<seq, width=7>`), "s"},
		Member{"suffix Y", compile(`T5-@<seq, width=8>Y`), "s"},
		Member{"suffix Z", compile(`T5-@<seq, width=8>Z`), "s"},
		Member{"a date as text", compile(`20240101-@<seq, width=8>`), "s"},
		Member{"a variable first", compile(`@<memo, chars=0-9>/@<seq, width=8>`), "s"},
	)
	got := candidates(ms)
	want := map[[2]int]bool{
		{1, 10_001}:      true, // T1- and T1-1
		{5, 10_002}:      true, // T5- and T5-...Y: the empty suffix nests in any
		{5, 10_003}:      true, // T5- and T5-...Z; but Y and Z never meet
		{10_000, 10_004}: true, // eight digits, then "-": the date and the text can meet
	}
	// A variable of digits, first, meets what starts with a digit: no
	// literal prefix, and a head of one position.
	want[[2]int{10_000, 10_005}] = true
	want[[2]int{10_004, 10_005}] = true
	n := 0
	for _, p := range got {
		if !want[p] {
			t.Errorf("pair %v (%s, %s) searched", p, ms[p[0]].Name, ms[p[1]].Name)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("%d pairs searched, want %d", n, len(want))
	}
	err := CheckSet(ms)
	var se *SetError
	if !errors.As(err, &se) || se.A != "t1" || se.B != "nested" {
		t.Errorf("CheckSet of 10,006 templates = %v; want t1 and nested refused", err)
	}
}
