package sn_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

var ctx = context.Background()

// fixedClock returns a clock that reads t and can be moved.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func mustNew(t *testing.T, tpl string, opts ...sn.Option) *sn.Generator {
	t.Helper()
	g, err := sn.New(tpl, append([]sn.Option{sn.WithSequence("seq", sequence.NewMemory())}, opts...)...)
	if err != nil {
		t.Fatalf("New(%q): %v", tpl, err)
	}
	return g
}

func next(t *testing.T, g *sn.Generator, vars sn.Vars) string {
	t.Helper()
	s, err := first(g.Issue(ctx, sn.Request{Vars: vars}))
	if err != nil {
		t.Fatalf("NextWith(%v): %v", vars, err)
	}
	return s
}

// The seed articles' numbers must come out exactly.
func TestSeedExamples(t *testing.T) {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	tests := []struct {
		name string
		tpl  string
		at   []time.Time // one call per entry (zero: the clock)
		vars []sn.Vars
		want []string
	}{
		{
			name: "jd owner key and luhn",
			tpl:  `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
			at:   []time.Time{{}, {}},
			want: []string{"SN-00000001-8", "SN-00000002-6"},
		},
		{
			name: "daily reset in Shanghai",
			tpl:  `@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
			at: []time.Time{
				time.Date(2017, 3, 4, 9, 0, 0, 0, shanghai),
				time.Date(2017, 3, 4, 23, 59, 59, 0, shanghai),
				time.Date(2017, 3, 5, 0, 0, 0, 0, shanghai),
			},
			want: []string{"2017030400001", "2017030400002", "2017030500001"},
		},
		{
			name: "counter per unit",
			tpl:  `@<area>-@<unit>-@<seq, width=5, key=unit>`,
			at:   []time.Time{{}, {}, {}},
			vars: []sn.Vars{{"area": "010", "unit": "6541"}, {"area": "010", "unit": "6542"}, {"area": "010", "unit": "6541"}},
			want: []string{"010-6541-00001", "010-6542-00001", "010-6541-00002"},
		},
		{
			name: "static prefix",
			tpl:  `QJ@<seq, width=6>`,
			at:   []time.Time{{}},
			want: []string{"QJ000001"},
		},
		{
			name: "UPU S10",
			tpl:  `RR@<seq, width=8>@<checksum, algo=s10>CN`,
			at:   []time.Time{{}},
			want: []string{"RR000000014CN"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, tt.tpl)
			var got []string
			for i, at := range tt.at {
				var vars sn.Vars
				if tt.vars != nil {
					vars = tt.vars[i]
				}
				s, err := first(g.Issue(ctx, sn.Request{At: at, Vars: vars}))
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if err := g.Validate(s); err != nil {
					t.Errorf("Validate(%q): %v", s, err)
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("numbers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		tpl    string
		opts   []sn.Option
		offset int
		msg    string // the first line of the error
	}{
		{"no sequence given", `SN-@<seq, width=8>`, nil, 5, `sn: template: offset 5: no sequence "seq": forgotten sn.WithSequence("seq", ...)? Every sequence is given by name: sequence.NewMemory() in tests, a durable store (boltseq, sqlseq, redisseq) for real numbers (to print a per-call variable named seq, write @<seq, var>)`},
		{"no sequence given, another name", `SN-@<order, width=8>`, nil, 5, `sn: template: offset 5: no sequence "order": forgotten sn.WithSequence("order", ...)? Every sequence is given by name: sequence.NewMemory() in tests, a durable store (boltseq, sqlseq, redisseq) for real numbers (to print a per-call variable named order, write @<order, var>)`},
		{"syntax", `SN-@<seq`, nil, 8, `sn: template: offset 8: unterminated expression: missing ">"`},
		{"empty", ``, nil, 0, `sn: template: offset 0: empty template`},
		{"no sequence", `SN-@<date>`, nil, 0, `sn: template: offset 0: the template has no sequence part (such as @<seq>), so every number would be the same`},
		{"unknown argument", `@<seq, widht=8>`, nil, 7, `sn: template: offset 7: seq: unknown argument "widht": did you mean width?`},
		{"unknown argument, no guess", `@<seq, size=8>`, nil, 7, `sn: template: offset 7: seq: unknown argument "size" (known: alphabet, key, obfuscate, overflow, radix, reset, width)`},
		{"typo of a name", `@<dte>-@<seq>`, nil, 2, `sn: template: offset 2: unknown name "dte": did you mean date? (to print a per-call variable named dte, write @<dte, var>)`},
		{"typo of ownerKey", `@<ownerkey, value=SN>-@<seq>`, nil, 2, `sn: template: offset 2: unknown name "ownerkey": did you mean ownerKey? (to print a per-call variable named ownerkey, write @<ownerkey, var>)`},
		{"setter and variable", `@<unit, value=1>-@<unit>-@<seq>`, nil, 17, `sn: template: offset 17: unit is set at offset 0 and cannot be set or given again`},
		{"empty ownerKey", `@<ownerKey, value="">-@<seq>`, nil, 12, `sn: template: offset 12: ownerKey: ownerKey needs a value: it names the counter`},
		{"maxlen too large", `@<unit, maxlen=257>-@<seq>`, nil, 8, `sn: template: offset 8: unit: maxlen="257": want a whole number from 1 to 256`},
		{"window without yy", `@<date, format=yyyy, window=2000>@<seq>`, nil, 21, `sn: template: offset 21: date: window= fixes the century of a two-digit year (yy, YY, ff, FF), and format="yyyy" has none`},
		{"yy reset without window", `INV-@<date, format=yy>-@<seq, width=4, reset=year>`, nil, 4, `sn: template: offset 4: ambiguous: "INV-17-0001" is printed by {at 2017-03-04T12:00:00Z, seq=1 from counter "INV-@<date>-@<seq, reset=year>|2017"} and by {at 2117-03-04T12:00:00Z, seq=1 from counter "INV-@<date>-@<seq, reset=year>|2117"}; seq: reset=year is read from @<date, format=yy>, whose two-digit year prints the same digits for 2017 and 2117; add window=2000 to it (years 2000-2099) or print the year in four digits`},
		{"bad width", `@<seq, width=0>`, nil, 7, `sn: template: offset 7: seq: width="0": want a whole number from 1 to 19`},
		{"bad overflow", `@<seq, width=3, overflow=wrap>`, nil, 16, `sn: template: offset 16: seq: overflow="wrap": want one of error, grow`},
		{"overflow without width", `@<seq, overflow=grow>`, nil, 7, `sn: template: offset 7: seq: overflow= needs width=`},
		{"bare key", `@<u>@<seq, key>`, nil, 11, `sn: template: offset 11: seq: key= needs the name of a variable, as in key=unit`},
		{"bad reset", `@<date>@<seq, reset=weekly>`, nil, 14, `sn: template: offset 14: seq: reset="weekly": want one of never, year, fiscal-year, quarter, month, week, day, hour, minute, second`},
		{"reset without date", `@<seq, reset=day>`, nil, 7, `sn: template: offset 7: seq: reset=day needs a date that tells days apart (such as @<date, format=yyyyMMdd> or @<date, format=yyyyDDD>); otherwise numbers would repeat after each reset`},
		{"reset day with month date", `@<date, format=yyyyMM>@<seq, reset=day>`, nil, 29, `sn: template: offset 29: seq: reset=day needs a date that tells days apart (such as @<date, format=yyyyMMdd> or @<date, format=yyyyDDD>); otherwise numbers would repeat after each reset`},
		{"reset day with time only", `@<date, format=HHmmss>@<seq, reset=day>`, nil, 29, `sn: template: offset 29: seq: reset=day needs a date that tells days apart (such as @<date, format=yyyyMMdd> or @<date, format=yyyyDDD>); otherwise numbers would repeat after each reset`},
		{"key var not printed", `@<seq, key=unit>`, nil, 7, `sn: template: offset 7: seq: key=unit needs @<unit> printed in the template; otherwise numbers of different units would print alike`},
		{"key var without separator", `@<area>@<unit>-@<seq, key=unit>`, nil, 0, `sn: template: offset 0: ambiguous: "000-1" is printed by {area="00", unit="0", seq=1 from counter "@<area>@<unit>-@<seq, key=unit>|unit=0"} and by {area="0", unit="00", seq=1 from counter "@<area>@<unit>-@<seq, key=unit>|unit=00"}; where @<area> ends and @<unit> begins cannot be told: put literal text that @<area> cannot print after it, or bound it (chars=, maxlen=, width=)`},
		{"adjacent numbers", `@<area>@<seq>`, nil, 0, `sn: template: offset 0: ambiguous: "011" is printed by {area="01", seq=1 from counter "@<area>@<seq>"} and by {area="0", seq=11 from counter "@<area>@<seq>"}; where @<area> ends and @<seq> begins cannot be told: put literal text that @<area> cannot print after it, or bound it (chars=, maxlen=, width=)`},
		{"unknown algorithm", `@<seq>@<checksum, algo=lunh>`, nil, 18, `sn: template: offset 18: checksum: algo="lunh": unknown algorithm (one of damm, gs1, jd, luhn, mod11-10, mod11-2, mod37-2, mod97-10, s10, verhoeff)`},
		{"checksum without algo", `@<seq>@<checksum>`, nil, 8, `sn: template: offset 8: checksum: checksum needs algo=NAME (one of damm, gs1, jd, luhn, mod11-10, mod11-2, mod37-2, mod97-10, s10, verhoeff)`},
		{"s10 needs eight digits", `@<seq, width=6>@<checksum, algo=s10>`, nil, 27, `sn: template: offset 27: checksum: s10: payload has 6 characters, want 8 (over=seq, a 6-digit sequence)`},
		{"s10 cannot grow", `@<seq, width=8, overflow=grow>@<checksum, algo=s10>`, nil, 42, `sn: template: offset 42: checksum: s10: payload has 19 characters, want 8 (over=seq, a 19-digit sequence)`},
		{"luhn over letters", `SN-@<seq>@<checksum, algo=luhn, over=all>`, nil, 21, `sn: template: offset 21: checksum: luhn: 'S' at index 0 is not a digit (over=all, the template's text)`},
		{"luhn over a checksum's letters", `@<seq>@<checksum, algo=mod37-2>@<checksum, algo=luhn, over=all>`, nil, 43, `sn: template: offset 43: luhn cannot take '*', which @<checksum, algo=mod37-2> prints (over=all: every character before the checksum is checked; give @<checksum, algo=mod37-2> characters the algorithm takes, or use over=seq)`},
		{"luhn over random hex", `@<random, width=1, alphabet=0-9A-F>@<seq>@<checksum, algo=luhn, over=all>`, nil, 53, `sn: template: offset 53: luhn cannot take 'A', which @<random, width=1, alphabet=0-9A-F> prints (over=all: every character before the checksum is checked; give @<random, width=1, alphabet=0-9A-F> characters the algorithm takes, or use over=seq)`},
		{"luhn over a variable's chars=", `@<seq, width=3>@<area, chars=0-9A-Z, maxlen=1>@<checksum, algo=luhn, over=all>`, nil, 58, `sn: template: offset 58: luhn cannot take 'A', which @<area, chars=0-9A-Z, maxlen=1> prints (over=all: every character before the checksum is checked; give @<area, chars=0-9A-Z, maxlen=1> characters the algorithm takes, or use over=seq)`},
		{"s10 over text of varying length", `@<seq>@<checksum, algo=s10, over=all>`, nil, 18, `sn: template: offset 18: s10 takes a payload of one length only, and @<seq> prints text of varying length (over=all: give it a fixed width, or use over=seq)`},
		{"s10 over a variable of varying length", `@<v, maxlen=2>@<seq, width=6>@<checksum, algo=s10, over=all>`, nil, 41, `sn: template: offset 41: s10 takes a payload of one length only, and @<v, maxlen=2> prints text of varying length (over=all: give it a fixed width, or use over=seq)`},
		{"s10 over text of another length", `@<seq, width=6>@<checksum, algo=s10, over=all>`, nil, 27, `sn: template: offset 27: checksum: s10: payload has 6 characters, want 8 (over=all, the template's text)`},
		{"luhn over an expression without a Pattern", `@<cx>@<seq, width=3>@<checksum, algo=luhn, over=all>`, []sn.Option{withExpression("cx", func(expression.Args) (expression.Expression, error) {
			return bare("7"), nil
		})}, 32, `sn: template: offset 32: luhn cannot take every character, and @<cx> gives no Pattern, so it may print any (over=all: give its expression a Pattern of characters the algorithm takes, or use over=seq)`},
		{"luhn over a hex sequence", `@<seq, radix=16>@<checksum, algo=luhn>`, nil, 28, `sn: template: offset 28: checksum: luhn: 'A' at index 0 is not a digit (over=seq, a 1-digit sequence)`},
		{"bad over", `@<seq>@<checksum, algo=luhn, over=some>`, nil, 29, `sn: template: offset 29: checksum: over="some": want one of seq, all`},
		{"unknown tz", `@<date, tz=Mars/Olympus>@<seq>`, nil, 8, `sn: template: offset 8: date: tz="Mars/Olympus": unknown time zone (use an IANA name such as Asia/Shanghai, or UTC)`},
		{"bad date format", `@<date, format=YYYYMMDD>@<seq>`, nil, 8, `sn: template: offset 8: date: format="YYYYMMDD": unknown field "DD" (use yyyy, yy, Q, MM, dd, DDD, YYYY, ww, ffff, ff, FFFF, FF, HH, mm, ss; quote other letters: 'T'); did you mean format=yyyyMMdd?`},
		{"random without width", `@<seq>@<random>`, nil, 8, `sn: template: offset 8: random: random needs width=N`},
		{"random bad alphabet", `@<seq>@<random, width=3, alphabet=Z-A>`, nil, 25, `sn: template: offset 25: random: alphabet="Z-A": want 2 to 256 distinct ASCII characters, ranges such as A-Z allowed`},
		{"variable unknown argument", `@<unit, max=3>@<seq>`, nil, 8, `sn: template: offset 8: unit: unknown argument "max" (known: chars, maxlen, var)`},
		{"variable bad chars", `@<unit, chars="a[">@<seq>`, nil, 8, `sn: template: offset 8: unit: chars="a[": want the inside of a character class, such as 0-9A-Z`},
		{"setter extra argument", `@<ownerKey, value=SN, maxlen=2>@<seq>`, nil, 22, `sn: template: offset 22: ownerKey: unknown argument "maxlen" (known: value, var)`},
		{"factory error", `@<seq>@<fancy, mode=x>`, []sn.Option{withExpression("fancy", func(a expression.Args) (expression.Expression, error) {
			return nil, expression.Errorf("mode", "mode=%q is not supported", a["mode"])
		})}, 15, `sn: template: offset 15: fancy: mode="x" is not supported`},
		{"factory panic", `@<seq>@<fancy>`, []sn.Option{withExpression("fancy", func(expression.Args) (expression.Expression, error) {
			panic("boom")
		})}, 8, `sn: template: offset 8: fancy: panic in factory: boom`},
		{"factory nil", `@<seq>@<fancy>`, []sn.Option{withExpression("fancy", func(expression.Args) (expression.Expression, error) {
			return nil, nil
		})}, 8, `sn: template: offset 8: fancy: factory returned a nil expression`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if !strings.HasPrefix(tt.name, "no sequence given") {
				opts = append(opts, mem())
			}
			_, err := sn.New(tt.tpl, opts...)
			if err == nil {
				t.Fatalf("New(%q) = nil error, want %q", tt.tpl, tt.msg)
			}
			if !errors.Is(err, sn.ErrTemplate) {
				t.Errorf("errors.Is(err, ErrTemplate) = false for %v", err)
			}
			var pe *parser.Error
			if !errors.As(err, &pe) {
				t.Fatalf("errors.As(*parser.Error) = false for %v", err)
			}
			if pe.Offset != tt.offset {
				t.Errorf("Offset = %d, want %d", pe.Offset, tt.offset)
			}
			first, excerpt, _ := strings.Cut(err.Error(), "\n")
			if first != tt.msg {
				t.Errorf("error:\n got %s\nwant %s", first, tt.msg)
			}
			if want := pe.Excerpt(); excerpt != want {
				t.Errorf("excerpt:\n%s\nwant\n%s", excerpt, want)
			}
		})
	}
}

func TestNewOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opts []sn.Option
		want string
	}{
		{"nil sequence", []sn.Option{sn.WithSequence("seq", nil)}, `sn: WithSequence("seq"): nil sequence`},
		{"nil clock", []sn.Option{sn.WithClock(nil)}, `sn: WithClock(nil)`},
		{"nil registry", []sn.Option{sn.WithRegistry(nil)}, `sn: WithRegistry(nil)`},
		{"sequence twice", []sn.Option{sn.WithSequence("seq", sequence.NewMemory()), sn.WithSequence("seq", sequence.NewMemory())}, `sn: WithSequence("seq") given twice`},
		{"sequence named like expression", []sn.Option{sn.WithSequence("date", sequence.NewMemory())}, `sn: bad template: WithSequence("date"): the registry has an expression of that name`},
		{"both kinds", []sn.Option{sn.WithSequence("x", sequence.NewMemory()), withExpression("x", builtin.NewDate)}, `sn: bad template: WithSequence("x"): the registry has an expression of that name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sn.New(`@<seq>`, tt.opts...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("New: %v, want %s", err, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{`@<ownerKey,value=SN>-@< seq , width = 8 >`, `@<ownerKey, value=SN>-@<seq, width=8>`},
		{`a@b@@c@<seq>`, `a@@b@@c@<seq>`},
		{`@<seq, width="8">`, `@<seq, width=8>`},
		{`@<x, value="a b">@<seq>`, `@<x, value="a b">@<seq>`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := mustNew(t, tt.in).String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A missing or bad variable is a *VarError naming it.
func TestVarError(t *testing.T) {
	g := sn.MustNew(`@<customer, chars=A-Z>-@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
	for _, tc := range []struct {
		vars sn.Vars
		want error
	}{{nil, sn.ErrVarMissing}, {sn.Vars{"customer": "ab"}, sn.ErrVarInvalid}} {
		_, err := first(g.Issue(t.Context(), sn.Request{Vars: tc.vars}))
		var ve *sn.VarError
		if !errors.As(err, &ve) || ve.Name != "customer" || !errors.Is(err, tc.want) {
			t.Errorf("vars %v: %v (%#v); want a *VarError for customer wrapping %v", tc.vars, err, ve, tc.want)
		}
	}
}

// A variable without chars= under a checksum over=all that cannot take
// every character is checked per call, before any number is drawn: a value
// the checksum cannot take is ErrVarInvalid and costs no number. A
// checksum that takes every character the variable may hold checks nothing.
func TestVarOverAll(t *testing.T) {
	g := sn.MustNew(`@<seq, width=2>@<area, maxlen=1>@<checksum, algo=luhn, over=all>`, mem())
	for range 5 {
		_, err := first(g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"area": "A"}}))
		var ve *sn.VarError
		if !errors.As(err, &ve) || ve.Name != "area" || !errors.Is(err, sn.ErrVarInvalid) {
			t.Fatalf("area=A: %v; want a *VarError for area wrapping ErrVarInvalid", err)
		}
		if want := `"area"="A" has 'A', which the checksum luhn cannot take`; !strings.Contains(err.Error(), want) {
			t.Fatalf("area=A: %v; want it to say %s", err, want)
		}
	}
	got, err := first(g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"area": "7"}}))
	if want := "017" + luhn(t, "017"); err != nil || got != want {
		t.Fatalf("area=7 after five refusals: %q, %v; want %q (the refused calls drew nothing)", got, err, want)
	}
	// The per-call check of an ASCII value allocates nothing: the
	// template with chars=0-9, which needs no check, allocates as much.
	ctl := sn.MustNew(`@<seq, width=9>@<area, chars=0-9, maxlen=1>@<checksum, algo=luhn, over=all>`, mem())
	checked := sn.MustNew(`@<seq, width=9>@<area, maxlen=1>@<checksum, algo=luhn, over=all>`, mem())
	r := sn.Request{Vars: sn.Vars{"area": "7"}}
	var b sn.Batch
	allocs := func(g *sn.Generator) float64 {
		return testing.AllocsPerRun(200, func() {
			b.Reset()
			if err := g.Append(t.Context(), &b, r); err != nil {
				t.Fatal(err)
			}
		})
	}
	if a, c := allocs(checked), allocs(ctl); a > c {
		t.Errorf("a checked call allocates %v, the control %v", a, c)
	}
	// mod37-2 takes 0-9 and A-Z: a letter passes. luhn does not take the
	// dash that chars= allows, and that is refused at New.
	g = sn.MustNew(`@<seq, width=3>@<area, chars=0-9A-Z>@<checksum, algo=mod37-2, over=all>`, mem())
	if _, err := first(g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"area": "B7"}})); err != nil {
		t.Fatalf("area=B7 under mod37-2: %v", err)
	}
	// s10 fixes its payload's length: over text of that one length, and
	// of digits, it is taken.
	g = sn.MustNew(`@<v, chars=0-9, maxlen=1>@<seq, width=7>@<checksum, algo=s10, over=all>`, mem())
	if got, err := first(g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"v": "4"}})); err != nil || len(got) != 9 {
		t.Fatalf("s10 over eight digits: %q, %v", got, err)
	}
	if _, err := sn.New(`@<seq, width=3>@<area, chars=0-9->@<checksum, algo=luhn, over=all>`, mem()); err == nil || !strings.Contains(err.Error(), "luhn cannot take '-'") {
		t.Fatalf("luhn over chars=0-9-: %v; want it refused at New for '-'", err)
	}
}

// luhn returns payload's Luhn check digit.
func luhn(t *testing.T, payload string) string {
	t.Helper()
	a, err := checksum.Lookup("luhn")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Compute(payload)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bare is an expression that prints itself and gives no Pattern.
type bare string

func (b bare) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return append(dst, b...), nil
}
func (bare) Order() expression.Order { return expression.Before }
func (b bare) MaxLen() int           { return len(b) }

// mem gives a template the sequence "seq" in memory, of its own.
func mem() sn.Option { return sn.WithSequence("seq", sequence.NewMemory()) }

// first returns the number of a call of Issue for one number.
func first(nums []string, err error) (string, error) {
	if len(nums) == 0 {
		return "", err
	}
	return nums[0], err
}

// withExpression gives the Generator a registry of the built-ins and f as
// name.
func withExpression(name string, f expression.Factory) sn.Option {
	r := sn.NewRegistry()
	r.RegisterExpression(name, f)
	return sn.WithRegistry(r)
}
