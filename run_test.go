package sn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

func TestOverflow(t *testing.T) {
	g := mustNew(t, `@<seq, width=1>`)
	for i := 1; i <= 9; i++ {
		next(t, g, nil)
	}
	_, err := g.Next(ctx)
	if !errors.Is(err, sn.ErrOverflow) {
		t.Fatalf("10th number: %v, want ErrOverflow", err)
	}
	want := `sn: seq at offset 0: number does not fit its width: 10 has more than 1 digits (use overflow=grow to allow it)`
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	grow := mustNew(t, `@<seq, width=1, overflow=grow>`)
	var got []string
	for i := 0; i < 11; i++ {
		got = append(got, next(t, grow, nil))
	}
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}, got); diff != "" {
		t.Error(diff)
	}
}

func TestVariables(t *testing.T) {
	g := mustNew(t, `@<area, maxlen=3>-@<unit, chars=0-9>-@<seq, width=2, key=unit>`)
	tests := []struct {
		name string
		vars sn.Vars
		want string // a number or an error
		is   error
	}{
		{"ok", sn.Vars{"area": "010", "unit": "6541"}, "010-6541-01", nil},
		{"missing", sn.Vars{"unit": "6541"}, `sn: area at offset 0: variable missing: "area" was not given`, sn.ErrVarMissing},
		{"empty", sn.Vars{"area": "", "unit": "6541"}, `sn: area at offset 0: variable missing: "area" was not given`, sn.ErrVarMissing},
		{"too long", sn.Vars{"area": "0101", "unit": "6541"}, `sn: area at offset 0: variable invalid: "area" is 4 characters long, more than maxlen=3`, sn.ErrVarInvalid},
		{"outside chars", sn.Vars{"area": "010", "unit": "65x"}, `sn: unit at offset 18: variable invalid: "unit"="65x" has 'x', outside chars=0-9`, sn.ErrVarInvalid},
		{"separator in a value", sn.Vars{"area": "0-1", "unit": "6541"}, `sn: area at offset 0: variable invalid: "area"="0-1" has '-', which the template prints as literal text (give the variable chars= to choose its characters)`, sn.ErrVarInvalid},
		{"other unit", sn.Vars{"area": "010", "unit": "6542"}, "010-6542-01", nil},
		{"first unit again", sn.Vars{"area": "011", "unit": "6541"}, "011-6541-02", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := first(g.Issue(ctx, sn.Request{Vars: tt.vars}))
			if tt.is == nil {
				if err != nil || s != tt.want {
					t.Fatalf("NextWith = %q, %v; want %q", s, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.is) || err.Error() != tt.want {
				t.Fatalf("NextWith error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// Per-call values are printed verbatim and never parsed as a template.
func TestVariablesAreVerbatim(t *testing.T) {
	g := mustNew(t, `@<note>/@<seq>`)
	s := next(t, g, sn.Vars{"note": `@<seq>@@"\`})
	if s != `@<seq>@@"\/1` {
		t.Errorf("Next = %q", s)
	}
}

// The counter key: ownerKey when set, else the canonical template; key=
// and reset= add to it. Two templates with different owner keys never
// share a counter; the same template (or owner key) always does.
func TestCounterKeys(t *testing.T) {
	mem := sequence.NewMemory()
	opt := sn.WithSequence("seq", mem)
	a := sn.MustNew(`@<ownerKey, value=A>@<seq>`, opt)
	a2 := sn.MustNew(`@<ownerKey,value=A>-@<seq>`, opt) // another template, same owner key
	b := sn.MustNew(`@<ownerKey, value=B>@<seq>`, opt)
	plain := sn.MustNew(`X@<seq>`, opt)
	plain2 := sn.MustNew(`X@< seq >`, opt) // same canonical text
	got := []string{next(t, a, nil), next(t, a2, nil), next(t, b, nil), next(t, plain, nil), next(t, plain2, nil)}
	want := []string{"A1", "A-2", "B1", "X1", "X2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A per-call ownerKey is the key only when the template prints it.
	c := sn.MustNew(`C@<seq>`, opt)
	if s := next(t, c, sn.Vars{"ownerKey": "A"}); s != "C1" {
		t.Errorf("unprinted ownerKey changed the counter: %q", s)
	}
	d := sn.MustNew(`@<ownerKey>:@<seq>`, opt)
	if s := next(t, d, sn.Vars{"ownerKey": "A"}); s != "A:3" {
		t.Errorf("printed per-call ownerKey: %q, want A:3", s)
	}
	// Key parts are escaped, so crafted values cannot collide.
	e := sn.MustNew(`@<k>/@<seq, key=k>`, opt)
	first := next(t, e, sn.Vars{"k": `a|b`})
	second := next(t, e, sn.Vars{"k": `a\|b`})
	if first != `a|b/1` || second != `a\|b/1` {
		t.Errorf("escaped keys: %q %q", first, second)
	}
}

type panicky struct{ when string }

func (p panicky) Append(dst []byte, c *expression.Context) ([]byte, error) {
	if p.when == "append" {
		panic("expression exploded")
	}
	return append(dst, 'x'), nil
}
func (panicky) Order() expression.Order { return expression.Normal }
func (panicky) MaxLen() int             { return 1 }

type panicGen struct{}

func (panicGen) Next(context.Context, string) (int64, error) { panic("sequence exploded") }

func TestPanicsBecomeErrors(t *testing.T) {
	g := sn.MustNew(`A-@<boom>-@<seq>`, sn.WithSequence("seq", sequence.NewMemory()),
		withExpression("boom", func(expression.Args) (expression.Expression, error) { return panicky{"append"}, nil }))
	_, err := g.Next(ctx)
	if !errors.Is(err, sn.ErrPanic) || err.Error() != "sn: boom at offset 2: panic: expression exploded" {
		t.Errorf("expression panic: %v", err)
	}
	g = sn.MustNew(`A-@<seq>`, sn.WithSequence("seq", panicGen{}))
	_, err = g.Next(ctx)
	if !errors.Is(err, sn.ErrPanic) || err.Error() != "sn: seq at offset 2: panic: sequence exploded" {
		t.Errorf("sequence panic: %v", err)
	}
	// The generator keeps working after a panic.
	g = sn.MustNew(`@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
	if s := next(t, g, nil); s != "1" {
		t.Errorf("after panic: %q", s)
	}
}

// nextOnly hides every optional capability of a Gen.
type nextOnly struct{ g sequence.Gen }

func (n nextOnly) Next(ctx context.Context, key string) (int64, error) { return n.g.Next(ctx, key) }

type errGen struct{ err error }

func (e errGen) Next(context.Context, string) (int64, error) { return 0, e.err }

func TestSequenceErrors(t *testing.T) {
	cause := fmt.Errorf("%w: connection refused", sequence.ErrUnavailable)
	g := sn.MustNew(`X@<seq>`, sn.WithSequence("seq", errGen{cause}))
	_, err := g.Next(ctx)
	if !errors.Is(err, sequence.ErrUnavailable) || err.Error() != "sn: seq at offset 1: sequence: unavailable: connection refused" {
		t.Errorf("Next: %v", err)
	}
	// Zero and negative numbers are errors on every path: the bound handle
	// of a fixed key, a key per call, and a batch.
	for _, v := range []int64{0, -5} {
		want := fmt.Sprintf("sn: seq at offset 1: sequence returned a number that is not positive: %d", v)
		bad := badGen{v}
		fixed := sn.MustNew(`X@<seq>`, sn.WithSequence("seq", bad))
		perUnit := sn.MustNew(`X@<seq, key=unit>-@<unit>`, sn.WithSequence("seq", bad))
		calls := map[string]func() (any, error){
			"bound":    func() (any, error) { return fixed.Next(ctx) },
			"per call": func() (any, error) { return first(perUnit.Issue(ctx, sn.Request{Vars: sn.Vars{"unit": "7"}})) },
			"batch":    func() (any, error) { return fixed.Issue(ctx, sn.Request{N: 3}) },
			"append":   func() (any, error) { var b sn.Batch; return b.Strings(), fixed.Append(ctx, &b, sn.Request{}) },
		}
		for name, call := range calls {
			got, err := call()
			if !errors.Is(err, sn.ErrSequence) || err.Error() != want {
				t.Errorf("%s, sequence returning %d: %v, want %s", name, v, err, want)
			}
			if s := fmt.Sprint(got); s != "" && s != "[]" {
				t.Errorf("%s, sequence returning %d: printed %q", name, v, s)
			}
		}
	}
}

// badGen returns n however it is asked: Next, a bound handle, a batch.
type badGen struct{ n int64 }

func (b badGen) Next(context.Context, string) (int64, error) { return b.n, nil }
func (b badGen) Bind(string) sequence.Handle                 { return badHandle(b.n) }
func (b badGen) NextN(_ context.Context, _ string, dst []int64, n int) ([]int64, error) {
	for range n {
		dst = append(dst, b.n)
	}
	return dst, nil
}

type badHandle int64

func (h badHandle) Next(context.Context) (int64, error) { return int64(h), nil }

func TestCancelledContext(t *testing.T) {
	g := mustNew(t, `X@<seq>`)
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Next(c); !errors.Is(err, context.Canceled) {
		t.Errorf("Next: %v", err)
	}
	if _, err := g.Issue(c, sn.Request{N: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("NextN: %v", err)
	}
	// Nothing was consumed.
	if s := next(t, g, nil); s != "X1" {
		t.Errorf("after cancelled calls: %q", s)
	}
}

func TestConcurrentNext(t *testing.T) {
	g := mustNew(t, `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`)
	const workers, each = 8, 2000
	out := make(chan string, workers*each)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				s, err := g.Next(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				out <- s
			}
		}()
	}
	wg.Wait()
	close(out)
	seen := map[string]bool{}
	for s := range out {
		if seen[s] {
			t.Fatalf("repeated number %s", s)
		}
		seen[s] = true
		if err := g.Validate(s); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != workers*each {
		t.Errorf("got %d numbers, want %d", len(seen), workers*each)
	}
}

// countingBatcher records how numbers were asked for.
type countingBatcher struct {
	*sequence.Memory
	mu           sync.Mutex
	next, batchs int
}

func (c *countingBatcher) Next(ctx context.Context, key string) (int64, error) {
	c.mu.Lock()
	c.next++
	c.mu.Unlock()
	return c.Memory.Next(ctx, key)
}

func (c *countingBatcher) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	c.mu.Lock()
	c.batchs++
	c.mu.Unlock()
	return c.Memory.NextN(ctx, key, dst, n)
}

func TestNextN(t *testing.T) {
	cb := &countingBatcher{Memory: sequence.NewMemory()}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	g := sn.MustNew(`@<date, format=yyMMdd, window=2000>-@<seq, width=3, reset=day>`, sn.WithSequence("seq", cb), sn.WithClock(func() time.Time { return at }))
	got, err := g.Issue(ctx, sn.Request{N: 4})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"240101-001", "240101-002", "240101-003", "240101-004"}, got); diff != "" {
		t.Error(diff)
	}
	if cb.batchs != 1 || cb.next != 0 {
		t.Errorf("NextN asked the sequence %d times in batch and %d one by one, want 1 and 0", cb.batchs, cb.next)
	}
	if s, _ := g.Next(ctx); s != "240101-005" {
		t.Errorf("Next after NextN = %q", s)
	}
	if got, err := g.Issue(ctx, sn.Request{N: 0}); err != nil || len(got) != 1 {
		t.Errorf("Issue of N 0 = %v, %v; want one number", got, err)
	}
	if _, err := g.Issue(ctx, sn.Request{N: -1}); err == nil {
		t.Error("NextN(-1): no error")
	}
	// A sequence without batches is asked one number at a time.
	plain := sn.MustNew(`@<seq>`, sn.WithSequence("seq", nextOnly{sequence.NewMemory()}))
	if got, err := plain.Issue(ctx, sn.Request{N: 2}); err != nil || len(got) != 2 {
		t.Errorf("NextN without Batcher = %v, %v", got, err)
	}
}

func TestPreviewConsumesNothing(t *testing.T) {
	mem := sequence.NewMemory()
	at := time.Date(2017, 3, 4, 0, 0, 0, 0, time.UTC)
	g := sn.MustNew(`@<area>-@<date, format=yyyyMMdd>@<seq, width=5, reset=day>`, sn.WithSequence("seq", mem))
	got, err := g.Preview(ctx, sn.Request{N: 3, At: at})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"{area}-2017030400001", "{area}-2017030400002", "{area}-2017030400003"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	s, err := first(g.Issue(ctx, sn.Request{At: at, Vars: sn.Vars{"area": "BJ"}}))
	if err != nil || s != "BJ-2017030400001" {
		t.Errorf("first real number after Preview = %q, %v", s, err)
	}
}

func TestPreviewVariables(t *testing.T) {
	g := mustNew(t, `@<area, maxlen=3>-@<unit, chars=0-9>-@<seq, width=2, key=unit>`)
	got, err := g.Preview(ctx, sn.Request{N: 2, Vars: sn.Vars{"area": "BJ"}})
	if err != nil || !cmp.Equal(got, []string{"BJ-{unit}-01", "BJ-{unit}-02"}) {
		t.Errorf("Preview = %q, %v", got, err)
	}
	if _, err := g.Preview(ctx, sn.Request{Vars: sn.Vars{"area": "TOOLONG"}}); !errors.Is(err, sn.ErrVarInvalid) {
		t.Errorf("Preview with a bad value: %v, want ErrVarInvalid", err)
	}
	if _, err := g.Preview(ctx, sn.Request{N: -1}); err == nil {
		t.Error("Preview(-1): no error")
	}
	if got, err := g.Preview(ctx, sn.Request{}); err != nil || len(got) != 1 {
		t.Errorf("Preview of the zero Request = %v, %v; want one number", got, err)
	}
}

func TestAppendAllocatesNothing(t *testing.T) {
	g := mustNew(t, `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`)
	var b sn.Batch
	allocs := testing.AllocsPerRun(1000, func() {
		b.Reset()
		if err := g.Append(ctx, &b, sn.Request{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Append allocates %v times per call, want 0", allocs)
	}
}

// Next allocates only the returned string; Issue of one number with
// variables, the string and the slice.
func TestNextAllocs(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		tpl  string
		vars sn.Vars
	}{
		{`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, nil},
		{`@<date, format=yyyyMMdd>@<seq, width=5, reset=day>`, nil},
		{`@<area>-@<unit>-@<seq, width=5, key=unit>`, sn.Vars{"area": "010", "unit": "6541"}},
	}
	for _, tt := range tests {
		t.Run(tt.tpl, func(t *testing.T) {
			g := mustNew(t, tt.tpl, sn.WithClock(func() time.Time { return at }))
			if tt.vars == nil {
				allocs := testing.AllocsPerRun(1000, func() {
					if _, err := g.Next(ctx); err != nil {
						t.Fatal(err)
					}
				})
				if allocs != 1 {
					t.Errorf("Next allocates %v times per call, want 1 (the returned string)", allocs)
				}
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := g.Issue(ctx, sn.Request{Vars: tt.vars}); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 2 {
				t.Errorf("Issue of one number allocates %v times per call, want 2 (the string and the slice)", allocs)
			}
		})
	}
}

// NextN(100) allocates the strings' one buffer and the slice of them, over
// the memory sequence and over a Segment, for a template of the simple
// form and for one with a date and a variable.
func TestNextNAllocs(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: 1 << 20}))
	t.Cleanup(func() { seg.Close() })
	for _, tt := range []struct {
		tpl  string
		seq  sequence.Gen
		vars sn.Vars
	}{
		{`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sequence.NewMemory(), nil},
		{`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, seg, nil},
		// width=9: a block is at most 1/64 of the width (15 million
		// numbers here), so no fetch falls in the measured calls.
		{`@<date, format=yyyyMMdd>@<unit>@<seq, width=9, reset=day>`, seg, sn.Vars{"unit": "6541"}},
	} {
		t.Run(fmt.Sprintf("%s/%T", tt.tpl, tt.seq), func(t *testing.T) {
			g, err := sn.New(tt.tpl, sn.WithClock(func() time.Time { return at }), sn.WithSequence("seq", tt.seq))
			if err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(100, func() {
				out, err := g.Issue(ctx, sn.Request{N: 100, Vars: tt.vars})
				if err != nil || len(out) != 100 {
					t.Fatal(len(out), err)
				}
			})
			if allocs > 2 {
				t.Errorf("NextN(100) allocates %v times per batch, want at most 2", allocs)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	r := sn.NewRegistry()
	if diff := cmp.Diff([]string{"checksum", "date", "random"}, r.Expressions()); diff != "" {
		t.Error(diff)
	}
	mem := sequence.NewMemory()
	r.RegisterExpression("shout", func(a expression.Args) (expression.Expression, error) {
		return bang{}, a.Check()
	})
	g, err := sn.New(`T@<ticket, width=3>@<shout>`, sn.WithRegistry(r), sn.WithSequence("ticket", mem))
	if err != nil {
		t.Fatal(err)
	}
	if s := next(t, g, nil); s != "T001!" {
		t.Errorf("Next = %q", s)
	}
	// The default registry does not know "ticket": a part with a
	// sequence's arguments says so.
	if _, err := sn.New(`T@<ticket, width=3>`); err == nil || !strings.Contains(err.Error(), `no sequence "ticket": forgotten sn.WithSequence("ticket", ...)?`) {
		t.Errorf("default registry: %v", err)
	}
	// Nor any sequence: "seq" is given by name too.
	if _, err := sn.New(`T@<seq>`); err == nil || !strings.Contains(err.Error(), `no sequence "seq": forgotten sn.WithSequence("seq", ...)?`) {
		t.Errorf("default registry: %v", err)
	}
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("bad name", func() { r.RegisterExpression("9x", builtin.NewDate) })
	mustPanic("expression twice", func() { r.RegisterExpression("shout", builtin.NewDate) })
	mustPanic("over a built-in", func() { r.RegisterExpression("date", builtin.NewDate) })
	mustPanic("nil factory", func() { r.RegisterExpression("y", nil) })
}

// bang prints "!".
type bang struct{}

func (bang) Append(dst []byte, _ *expression.Context) ([]byte, error) { return append(dst, '!'), nil }
func (bang) Order() expression.Order                                  { return expression.Normal }
func (bang) MaxLen() int                                              { return 1 }
func (bang) Pattern() string                                          { return "!" }

func TestFloor(t *testing.T) {
	mem := sequence.NewMemory()
	g := sn.MustNew(`@<ownerKey, value=PO>@<seq, width=7>`, sn.WithSequence("seq", mem))
	if err := g.Floor(ctx, 500000); err != nil {
		t.Fatal(err)
	}
	if s := next(t, g, nil); s != "PO0500001" {
		t.Errorf("after Floor(500000): %q", s)
	}
	if err := g.Floor(ctx, 10); err != nil { // never lowers
		t.Fatal(err)
	}
	if s := next(t, g, nil); s != "PO0500002" {
		t.Errorf("after a lower floor: %q", s)
	}
	for _, tpl := range []string{
		`@<date>@<seq, reset=day>`,
		`@<u>-@<seq, key=u>`,
		`@<ownerKey>-@<seq>`,
	} {
		err := sn.MustNew(tpl, sn.WithSequence("seq", mem)).Floor(ctx, 5)
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: Floor = %v, want ErrUnsupported", tpl, err)
		}
	}
	err := sn.MustNew(`X@<seq>`, sn.WithSequence("seq", errGen{})).Floor(ctx, 5)
	if !errors.Is(err, errors.ErrUnsupported) || err.Error() != "sn: Floor: seq at offset 1: unsupported operation: sn_test.errGen cannot raise a floor" {
		t.Errorf("Floor on a Gen without Floorer: %v", err)
	}
}

// FloorParsed continues series whose key varies per call from numbers
// printed elsewhere.
func TestFloorParsed(t *testing.T) {
	mem := sequence.NewMemory()
	g := sn.MustNew(`@<unit, chars=0-9>-@<date, format=yyyyMMdd>-@<seq, width=4, key=unit, reset=day>`, sn.WithSequence("seq", mem))
	old := []string{"7-20170304-0041", "7-20170304-0007", "8-20170304-0100", "7-20170305-0003"}
	var ps []sn.Parsed
	for _, s := range old {
		p, err := g.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if err := g.FloorParsed(ctx, ps...); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2017, 3, 4, 9, 0, 0, 0, time.UTC)
	for unit, want := range map[string]string{"7": "7-20170304-0042", "8": "8-20170304-0101", "9": "9-20170304-0001"} {
		if s, err := first(g.Issue(ctx, sn.Request{At: at, Vars: sn.Vars{"unit": unit}})); err != nil || s != want {
			t.Errorf("unit %s: %q, %v; want %q", unit, s, err, want)
		}
	}
	// Never lowers.
	if err := g.FloorParsed(ctx, ps[1]); err != nil {
		t.Fatal(err)
	}
	if s, _ := first(g.Issue(ctx, sn.Request{At: at, Vars: sn.Vars{"unit": "7"}})); s != "7-20170304-0043" {
		t.Errorf("after a lower floor: %q", s)
	}
	// A sequence that cannot take a floor changes nothing.
	h := sn.MustNew(`@<unit, chars=0-9>-@<seq, key=unit>`, sn.WithSequence("seq", nextOnly{mem}))
	p, _ := h.Parse("7-5")
	if err := h.FloorParsed(ctx, p); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("FloorParsed without Floorer: %v", err)
	}
}

// NextN's strings share one buffer; numbers longer than its first estimate
// make it move, and the strings made before keep their text.
func TestNextNSharedBuffer(t *testing.T) {
	g := mustNew(t, `@<note, maxlen=256>-@<seq, width=3>`)
	long := strings.Repeat("x", 250)
	out, err := g.Issue(ctx, sn.Request{N: 500, Vars: sn.Vars{"note": long}})
	if err != nil || len(out) != 500 {
		t.Fatal(len(out), err)
	}
	for i, s := range out {
		if want := fmt.Sprintf("%s-%03d", long, i+1); s != want {
			t.Fatalf("number %d = %q, want %q", i, s, want)
		}
	}
}

// When a reset= counter's period turns, its past period's key is released
// from a Segment; a number drawn for the past period later (an instant in
// the past) comes from the store, above every number issued: no repeat.
func TestPastPeriodReleased(t *testing.T) {
	now := time.Date(2026, 11, 23, 23, 59, 0, 0, time.UTC)
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: 100, Idle: -1}))
	t.Cleanup(func() { seg.Close() })
	g, err := sn.New(`@<date, format=yyyyMMdd>-@<seq, width=4, reset=day>`, sn.WithSequence("seq", seg), sn.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	issue := func(at time.Time) string {
		t.Helper()
		s, err := first(g.Issue(ctx, sn.Request{At: at}))
		if err != nil {
			t.Fatal(err)
		}
		if seen[s] {
			t.Fatalf("%s issued twice", s)
		}
		seen[s] = true
		return s
	}
	issue(time.Time{})
	issue(time.Time{})
	if st := seg.Stats(); st.Keys != 1 || st.Released != 0 {
		t.Fatalf("on the first day: %+v", st)
	}
	now = now.Add(2 * time.Minute) // the next day
	if got := issue(time.Time{}); got != "20261124-0001" {
		t.Errorf("first number of the next day: %s", got)
	}
	if st := seg.Stats(); st.Keys != 1 || st.Released != 1 {
		t.Errorf("after the day turned: %+v; want the past day's key released", st)
	}
	// A late document of the past day: a new block from the store.
	if got := issue(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)); got <= "20261123-0002" {
		t.Errorf("a number of the past day after its release: %s, want above 20261123-0002", got)
	}
}

// sn.MaxN is a constant of its own, so that go doc shows its value; the
// engine's limit is the same.
func TestMaxN(t *testing.T) {
	if sn.MaxN != engine.MaxN {
		t.Errorf("sn.MaxN %d, engine.MaxN %d", sn.MaxN, engine.MaxN)
	}
}
