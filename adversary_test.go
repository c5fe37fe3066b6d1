package sn_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
)

// advGen is a sequence.Gen that records the keys it is asked for and
// returns the numbers it is told to, in order (then counts up per key).
type advGen struct {
	mu     sync.Mutex
	script []int64
	count  map[string]int64
	keys   []string
}

func (g *advGen) Next(_ context.Context, key string) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.keys = append(g.keys, key)
	if len(g.script) > 0 {
		n := g.script[0]
		g.script = g.script[1:]
		return n, nil
	}
	if g.count == nil {
		g.count = map[string]int64{}
	}
	g.count[key]++
	return g.count[key], nil
}

func (g *advGen) last() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.keys[len(g.keys)-1]
}

// Found by an adversarial review, now fixed: a date printed on a day whose midnight does not exist in the
// part's time zone (DST starts at 00:00) is refused by Parse and Validate.
func TestAdversaryParseDSTMidnightGap(t *testing.T) {
	g := &advGen{}
	gen, err := sn.New(`@<date, format=yyyyMMdd, tz=America/Sao_Paulo>-@<seq, width=4, reset=day>`, sn.WithSequence("seq", g))
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	at := time.Date(2018, 11, 4, 12, 0, 0, 0, loc)
	n, err := first(gen.Issue(context.Background(), sn.Request{At: at}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NextAt(%v) = %q from counter %q", at, n, g.last())
	p, err := gen.Parse(n)
	if err != nil {
		t.Errorf("Parse(%q) of a number Next printed: %v", n, err)
	} else if p.Key != g.last() || p.Seq != 1 {
		t.Errorf("Parse(%q) = key %q seq %d, want %q 1", n, p.Key, p.Seq, g.last())
	}
}

// advExpr is a custom expression whose Append is given.
type advExpr struct {
	pat    string
	max    int
	order  expression.Order
	append func(dst []byte, c *expression.Context) ([]byte, error)
}

func (e *advExpr) Append(dst []byte, c *expression.Context) ([]byte, error) { return e.append(dst, c) }
func (e *advExpr) Order() expression.Order                                  { return e.order }
func (e *advExpr) MaxLen() int                                              { return e.max }
func (e *advExpr) Pattern() string                                          { return e.pat }

func advFactory(e *advExpr) expression.Factory {
	return func(expression.Args) (expression.Expression, error) { return e, nil }
}

// Found by an adversarial review, now fixed: Next checks that a custom part's own text matches its Pattern,
// but not that Append left the text before it alone. A part that edits
// dst in place (here: it normalises the sequence's first digit, which it
// sees in dst) makes two numbers of one counter print one string.
func TestAdversaryCustomRewritesPrefix(t *testing.T) {
	g := &advGen{script: []int64{1, 11}}
	tag := &advExpr{pat: `Z`, max: 1, order: expression.After, append: func(dst []byte, c *expression.Context) ([]byte, error) {
		dst[1] = '0' // a bug: writes into text printed by another part
		return append(dst, 'Z'), nil
	}}
	gen, err := sn.New(`A@<seq, width=2>@<tag>`, sn.WithSequence("seq", g), withExpression("tag", advFactory(tag)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, errA := gen.Next(ctx)
	ka := g.last()
	b, errB := gen.Next(ctx)
	kb := g.last()
	t.Logf("seq=1 from %q -> %q (%v); seq=11 from %q -> %q (%v)", ka, a, errA, kb, b, errB)
	if errA == nil && errB == nil && a == b {
		t.Errorf("one string %q for (%q, 1) and (%q, 11)", a, ka, kb)
	}
}

// advAlgo is a user's check-digit algorithm with a bug: a check value of
// 10 prints as "10" although Len and Pattern promise one digit.
type advAlgo struct{}

func (advAlgo) Name() string { return "digitsum11" }
func (advAlgo) Compute(p string) (string, error) {
	if p == "" {
		return "", checksum.ErrEmpty
	}
	s := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return "", checksum.ErrAlphabet
		}
		s += int(c - '0')
	}
	return strconvItoa(s % 11), nil
}
func (a advAlgo) Validate(s string) bool { return len(s) > 1 }
func (advAlgo) Len() int                 { return 1 }
func (advAlgo) Pattern() string          { return "[0-9]" }

func strconvItoa(n int) string {
	if n >= 10 {
		return string(rune('0'+n/10)) + string(rune('0'+n%10))
	}
	return string(rune('0' + n))
}

// Found by an adversarial review, now fixed: an builtin.Checksum over a user's checksum.Algorithm is
// treated as the built-in checksum: its output is never checked against
// Algo.Pattern() (a custom part's is), so an algorithm that breaks its
// Pattern makes the proof wrong.
func TestAdversaryUserAlgorithmUnchecked(t *testing.T) {
	g := &advGen{script: []int64{55, 551}}
	f := func(args expression.Args) (expression.Expression, error) {
		return &builtin.Checksum{Algo: advAlgo{}}, nil
	}
	gen, err := sn.New(`N@<seq>@<check>`, sn.WithSequence("seq", g), withExpression("check", f))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, errA := gen.Next(ctx)
	ka := g.last()
	b, errB := gen.Next(ctx)
	kb := g.last()
	t.Logf("seq=55 from %q -> %q (%v); seq=551 from %q -> %q (%v)", ka, a, errA, kb, b, errB)
	if errA == nil && errB == nil && a == b {
		t.Errorf("one string %q for (%q, 55) and (%q, 551)", a, ka, kb)
	}
}

// Found by an adversarial review, now fixed: Parse gives up after 64 splits that read wrongly (splitLimit),
// so a number Next printed can fail Parse and Validate when unmarked parts
// float: here each "0230" in ref could be the date (February 30, which
// Date.Read refuses) before the real one.
func TestAdversaryParseSplitLimit(t *testing.T) {
	g := &advGen{}
	gen, err := sn.New(`@<ref, chars=0-9>@<date, format=MMdd>@<memo, chars=0-9>-@<seq>`, sn.WithSequence("seq", g))
	if err != nil {
		t.Fatal(err)
	}
	vars := sn.Vars{"ref": strings.Repeat("0230", 64), "memo": "1"} // 256 bytes, the most a variable takes: 65 places for the date
	at := time.Date(2017, 3, 4, 12, 0, 0, 0, time.UTC)
	n, err := first(gen.Issue(context.Background(), sn.Request{At: at, Vars: vars}))
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.Validate(n); err != nil {
		t.Errorf("Validate of a number Next printed (ref=\"0230\"x64, memo=1, 2017-03-04, key %q, seq 1): %v", g.last(), err)
	}
}

// Finding (robustness): Validate/Parse take time quadratic in the input
// when two unbounded parts meet, so one long bogus string (a form field,
// `sn check` on stdin) ties up a CPU for seconds.
func TestAdversaryValidateQuadratic(t *testing.T) {
	gen, err := sn.New(`@<a, chars=a-z>@<b, chars=a-z>-@<seq>`, sn.WithSequence("seq", &advGen{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2_000, 8_000} {
		s := strings.Repeat("a", n) + "!"
		start := time.Now()
		err := gen.Validate(s)
		el := time.Since(start)
		t.Logf("Validate of %d bytes: %v (%v)", len(s), el, err != nil)
		if n == 8_000 && el > time.Second {
			t.Errorf("Validate of a %d-byte string took %v", len(s), el)
		}
	}
}

// Found by an adversarial review, now fixed: CheckSet accepts two templates on one store that print one
// string from two counters. Both have the key base "SN" (a fixed ownerKey)
// and the same marked parts, so CheckSet compares only where their
// sequences are read; but key=region names a setter, whose value is part
// of the counter key and is in neither the base nor the signature.
func TestAdversaryCheckSetSetterKey(t *testing.T) {
	ga, gb := &advGen{}, &advGen{}
	a, err := sn.New(`@<ownerKey, value=SN>@<region, value=EU>-@<seq, key=region>`, sn.WithSequence("seq", ga))
	if err != nil {
		t.Fatal(err)
	}
	b, err := sn.New(`@<ownerKey, value=SN>E@<region, value=U>-@<seq, key=region>`, sn.WithSequence("seq", gb))
	if err != nil {
		t.Fatal(err)
	}
	setErr := sn.CheckSet([]sn.Member{{Name: "a", Gen: a, Store: "db"}, {Name: "b", Gen: b, Store: "db"}})
	ctx := context.Background()
	na, _ := a.Next(ctx)
	nb, _ := b.Next(ctx)
	t.Logf("a: %q from (%q, 1); b: %q from (%q, 1); CheckSet: %v", na, ga.last(), nb, gb.last(), setErr)
	if setErr == nil && na == nb && ga.last() != gb.last() {
		t.Errorf("CheckSet accepted a and b on one store, and both print %q: a from counter %q, b from counter %q", na, ga.last(), gb.last())
	}

	// The same with per-call ownerKeys: the base is the ownerKey, and the
	// setters' values again decide the key unseen.
	ga, gb = &advGen{}, &advGen{}
	a, _ = sn.New(`@<ownerKey>-@<note>@<region, value=EU>-@<seq, key=region>`, sn.WithSequence("seq", ga))
	b, _ = sn.New(`@<ownerKey>-@<note>@<region, value=U>-@<seq, key=region>`, sn.WithSequence("seq", gb))
	setErr = sn.CheckSet([]sn.Member{{Name: "a", Gen: a, Store: "db"}, {Name: "b", Gen: b, Store: "db"}})
	na, _ = first(a.Issue(ctx, sn.Request{Vars: sn.Vars{"ownerKey": "K", "note": "X"}}))
	nb, _ = first(b.Issue(ctx, sn.Request{Vars: sn.Vars{"ownerKey": "K", "note": "XE"}}))
	t.Logf("a: %q from (%q, 1); b: %q from (%q, 1); CheckSet: %v", na, ga.last(), nb, gb.last(), setErr)
	if setErr == nil && na == nb && ga.last() != gb.last() {
		t.Errorf("CheckSet accepted a and b on one store, and both print %q: a from counter %q, b from counter %q", na, ga.last(), gb.last())
	}
}

// Finding (false refusal): New probes an over=all checksum with sample
// text that leaves variables and random parts out, so a check digit over
// a digits-only variable is refused as "empty payload".
func TestAdversaryOverAllAfterVariableRefused(t *testing.T) {
	for _, tpl := range []string{
		`@<acct, chars=0-9, maxlen=10>@<checksum, algo=luhn, over=all>-@<seq>`,
		`@<random, width=6>@<checksum, algo=luhn, over=all>-@<seq>`,
	} {
		g, err := sn.New(tpl, sn.WithSequence("seq", &advGen{}))
		if err != nil {
			t.Errorf("New(%q): %v", tpl, err)
			continue
		}
		n, err := first(g.Issue(context.Background(), sn.Request{Vars: sn.Vars{"acct": "7992739871"}}))
		t.Logf("%s -> %q %v", tpl, n, err)
	}
}

// Finding (robustness): a panic in a built-in part's Append is not turned
// into an error. builtin.Random's fields are exported, and a factory
// returning &builtin.Random{Width: 100} (NewRandom allows 64) compiles,
// then panics out of Next. (&builtin.Date{Format: "yyyy"}, whose Loc is
// nil, does the same.)
func TestAdversaryBuiltinPanicEscapesNext(t *testing.T) {
	// Built-in part types with broken exported fields are refused at New,
	// so that Next cannot panic on them.
	cases := map[string]expression.Expression{
		"random too wide":   &builtin.Random{Width: 100, Alphabet: "01"},
		"random one char":   &builtin.Random{Width: 3, Alphabet: "0"},
		"date without zone": &builtin.Date{Format: "yyyy"},
		"checksum no algo":  &builtin.Checksum{},
	}
	for name, e := range cases {
		f := func(expression.Args) (expression.Expression, error) { return e, nil }
		_, err := sn.New(`@<salt>-@<seq>`, withExpression("salt", f), sn.WithSequence("seq", &advGen{}))
		if err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}
