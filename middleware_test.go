package sn_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// downGen fails while down is set, and counts its calls. It has only
// Next, so that the engine cannot go around it with a Handle or a batch.
type downGen struct {
	m     *sequence.Memory
	down  atomic.Bool
	fails atomic.Int64 // fail this many more calls, then work
	calls atomic.Int64
}

var errDown = fmt.Errorf("%w: test store down", sequence.ErrUnavailable)

func newDownGen() *downGen { return &downGen{m: sequence.NewMemory()} }

func (g *downGen) Next(ctx context.Context, key string) (int64, error) {
	g.calls.Add(1)
	if g.down.Load() || g.fails.Add(-1) >= 0 {
		return 0, errDown
	}
	return g.m.Next(ctx, key)
}

// counting is a middleware that adds the numbers of calls that succeeded
// to *n, as a metric would.
func counting(n *int64) sn.Middleware {
	return func(g *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			from := b.Len()
			err := next(ctx, b, r)
			if err == nil {
				atomic.AddInt64(n, int64(b.Len()-from))
			}
			return err
		}, nil
	}
}

// logged is a middleware that records, in *log, each call it sees and
// how it ended, under its name.
func logged(name string, mu *sync.Mutex, log *[]string) sn.Middleware {
	return func(g *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		add := func(s string) { mu.Lock(); *log = append(*log, s); mu.Unlock() }
		add(fmt.Sprintf("%s wraps %s (%s), sequences %d", name, g.String(), g.Name(), len(g.Sequences())))
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			add(fmt.Sprintf("%s before n=%d", name, r.N))
			from := b.Len()
			err := next(ctx, b, r)
			var got []string
			for i := from; i < b.Len(); i++ {
				got = append(got, string(b.Bytes(i)))
			}
			add(fmt.Sprintf("%s after %v %v", name, got, err))
			return err
		}, nil
	}
}

// The middlewares wrap in their order, the first outermost, around Next,
// Issue and Append, and see the numbers issued; Preview passes none.
func TestMiddlewareOrder(t *testing.T) {
	var mu sync.Mutex
	var log []string
	g := sn.MustNew(`T-@<seq, width=4>`, sn.WithSequence("seq", sequence.NewMemory()), sn.WithName("orders"),
		sn.WithMiddleware(logged("a", &mu, &log)), sn.WithMiddleware(logged("b", &mu, &log)))
	ctx := context.Background()
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	var bt sn.Batch
	if err := g.Append(ctx, &bt, sn.Request{}); err != nil || bt.Len() != 1 || string(bt.Bytes(0)) != "T-0002" {
		t.Fatalf("Append = %q, %v", bt.Strings(), err)
	}
	if _, err := g.Issue(ctx, sn.Request{N: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Preview(ctx, sn.Request{N: 2}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"b wraps T-@<seq, width=4> (orders), sequences 1", "a wraps T-@<seq, width=4> (orders), sequences 1",
		"a before n=0", "b before n=0", "b after [T-0001] <nil>", "a after [T-0001] <nil>",
		"a before n=0", "b before n=0", "b after [T-0002] <nil>", "a after [T-0002] <nil>",
		"a before n=2", "b before n=2", "b after [T-0003 T-0004] <nil>", "a after [T-0003 T-0004] <nil>",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("middleware ran as\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

// A middleware can refuse a call: nothing is drawn. Errors that issuing
// again cannot cure are not retried.
func TestMiddlewareRefuses(t *testing.T) {
	m := sequence.NewMemory()
	refuse := errors.New("quota exceeded")
	quota := func(g *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			if r.Vars["customer"] == "blocked" {
				return refuse
			}
			return next(ctx, b, r)
		}, nil
	}
	var calls atomic.Int64
	count := func(g *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error { calls.Add(1); return next(ctx, b, r) }, nil
	}
	g := sn.MustNew(`T-@<seq>-@<customer>`, sn.WithSequence("seq", m), sn.WithMiddleware(sn.Retry(time.Second), quota, count))
	ctx := context.Background()
	if _, err := g.Issue(ctx, sn.Request{Vars: sn.Vars{"customer": "blocked"}}); !errors.Is(err, refuse) {
		t.Fatalf("a refused call: %v", err)
	}
	if s, err := first(g.Issue(ctx, sn.Request{Vars: sn.Vars{"customer": "ok"}})); err != nil || s != "T-1-ok" {
		t.Errorf("after a refused call: %q, %v; want T-1-ok (nothing drawn by the refused call)", s, err)
	}
	calls.Store(0)
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		r    sn.Request
		want error
	}{
		{ctx, sn.Request{}, sn.ErrVarMissing},
		{ctx, sn.Request{Vars: sn.Vars{"customer": "x\x00"}}, sn.ErrVarInvalid},
		{ctx, sn.Request{N: -1, Vars: sn.Vars{"customer": "ok"}}, sn.ErrTooMany},
		{done, sn.Request{Vars: sn.Vars{"customer": "ok"}}, context.Canceled},
	} {
		if _, err := g.Issue(c.ctx, c.r); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.r, err, c.want)
		}
	}
	// Each reaches the store's side once: the count, refused before it
	// draws, as a call that fails.
	if n := calls.Load(); n != 4 {
		t.Errorf("%d calls reached the store's side for 4 errors a retry cannot cure; want 4, each once", n)
	}
}

// A middleware that issues other than what was asked for, or a failed
// retry or fallback, hands back no number; a bad count is refused, and
// draws nothing.
func TestMiddlewareResults(t *testing.T) {
	ctx := context.Background()
	silent := func(*sn.Generator, sn.IssueFunc) (sn.IssueFunc, error) {
		return func(context.Context, *sn.Batch, sn.Request) error { return nil }, nil
	}
	twice := func(_ *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			if err := next(ctx, b, r); err != nil {
				return err
			}
			return next(ctx, b, r)
		}, nil
	}
	for name, mw := range map[string]sn.Middleware{"none": silent, "twice": twice} {
		g := sn.MustNew(`T-@<seq>`, mem(), sn.WithMiddleware(mw))
		var bt sn.Batch
		if err := g.Append(ctx, &bt, sn.Request{N: 3}); err == nil || !strings.Contains(err.Error(), "for a request of 3") || bt.Len() != 0 {
			t.Errorf("a middleware issuing %s: %v, %d numbers", name, err, bt.Len())
		}
		if _, err := g.Next(ctx); err == nil {
			t.Errorf("Next through a middleware issuing %s: no error", name)
		}
		for _, n := range []int{-1, sn.MaxN + 1, 1 << 62} {
			if _, err := g.Issue(ctx, sn.Request{N: n}); !errors.Is(err, sn.ErrTooMany) {
				t.Errorf("N %d through a middleware issuing %s: %v, want ErrTooMany", n, name, err)
			}
		}
	}

	// A store that fails every third call: the attempts of a retry and of
	// a fallback that failed return nothing.
	third := &everyThird{m: sequence.NewMemory()}
	retry := sn.MustNew(`A-@<seq, width=6>`, sn.WithSequence("seq", third), sn.WithMiddleware(sn.Retry(5*time.Millisecond)))
	if got, err := retry.Issue(ctx, sn.Request{N: 4}); err == nil || len(got) != 0 {
		t.Errorf("Retry past its bound: %q, %v; want no number and the error", got, err)
	}
	d := newDownGen()
	d.down.Store(true)
	fb := sn.MustNew(`B-@<seq, width=6>`, sn.WithSequence("seq", third))
	both := sn.MustNew(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Fallback(fb)))
	third.calls.Store(0)
	if got, err := both.Issue(ctx, sn.Request{N: 4}); err == nil || len(got) != 0 {
		t.Errorf("a fallback failing part-way: %q, %v; want no number and the error", got, err)
	}
}

// everyThird is a store whose every third call fails: each attempt at a
// batch of 4 fails part-way. It has only Next, so that a batch calls it
// per number.
type everyThird struct {
	m     *sequence.Memory
	calls atomic.Int64
}

func (g *everyThird) Next(ctx context.Context, key string) (int64, error) {
	if g.calls.Add(1)%3 == 0 {
		return 0, errDown
	}
	return g.m.Next(ctx, key)
}

// A fallback's own fallbacks are proven against the Generator: A over a
// fallback B that falls back to another A is refused.
func TestFallbackOfAFallback(t *testing.T) {
	other := sn.MustNew(`A-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	fb, err := sn.New(`B-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()), sn.WithMiddleware(sn.Fallback(other)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", newDownGen()), sn.WithMiddleware(sn.Fallback(fb)))
	var amb *sn.AmbiguityError
	if !errors.Is(err, sn.ErrAmbiguous) || !errors.As(err, &amb) || !strings.Contains(err.Error(), "fallback's fallback") {
		t.Errorf("a fallback of a fallback printing the Generator's numbers: %v; want an AmbiguityError naming it", err)
	}
	ok := sn.MustNew(`C-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	fb2 := sn.MustNew(`B-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()), sn.WithMiddleware(sn.Fallback(ok)))
	if _, err := sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", newDownGen()), sn.WithMiddleware(sn.Fallback(fb2))); err != nil {
		t.Errorf("three prefixes A, B, C: %v", err)
	}
}

// Retry draws again until the store works, within its bound.
func TestRetry(t *testing.T) {
	d := newDownGen()
	d.fails.Store(3)
	g := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Retry(10*time.Second)))
	ctx := context.Background()
	s, err := g.Next(ctx)
	if err != nil || s != "T-1" || d.calls.Load() != 4 {
		t.Fatalf("Next through 3 failures = %q, %v, %d draws; want T-1 at the 4th", s, err, d.calls.Load())
	}
	d.down.Store(true)
	calls := d.calls.Load()
	g2 := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Retry(20*time.Millisecond)))
	if _, err := g2.Next(ctx); !errors.Is(err, errDown) {
		t.Errorf("a store down past the bound: %v; want its error", err)
	}
	if d.calls.Load()-calls < 2 {
		t.Errorf("Retry(20ms) drew %d times; want more than once", d.calls.Load()-calls)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := g.Next(short); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errDown) {
		t.Errorf("retrying until the context ends: %v; want the store's error and the context's", err)
	}
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithMiddleware(sn.Retry(0))); err == nil || !strings.Contains(err.Error(), "Retry(0s)") {
		t.Errorf("Retry(0): %v", err)
	}
	// A counter past its width is not retried: each attempt would burn a
	// number and fail alike. A fallback takes over from it.
	m := sequence.NewMemory()
	full := sn.MustNew(`W@<seq, width=1>`, sn.WithSequence("seq", m), sn.WithMiddleware(sn.Retry(time.Second)))
	for range 9 {
		full.Next(ctx)
	}
	start := time.Now()
	if _, err := full.Next(ctx); !errors.Is(err, sn.ErrOverflow) || time.Since(start) > 100*time.Millisecond {
		t.Errorf("Retry of an overflow: %v after %v; want ErrOverflow at once", err, time.Since(start))
	}
	if n, _ := m.Next(ctx, "W@<seq>"); n != 11 {
		t.Errorf("the counter is at %d after one overflowing call; want 11 (one number burnt, not one per retry)", n-1)
	}
	next := sn.MustNew(`X@<seq, width=2>`, mem())
	over := sn.MustNew(`W@<seq, width=1>`, sn.WithSequence("seq", &sequence.Memory{Start: 10}), sn.WithMiddleware(sn.Fallback(next)))
	if s, err := over.Next(ctx); s != "X01" || err != nil {
		t.Errorf("Fallback of a series past its width: %q, %v; want X01", s, err)
	}
}

// Fallback issues from the fallback Generator; a fallback that could print
// the primary's numbers is refused at New.
func TestFallback(t *testing.T) {
	ctx := context.Background()
	d := newDownGen()
	fb := sn.MustNew(`B-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	g, err := sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Fallback(fb)))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Next(ctx); s != "A-000001" {
		t.Errorf("store up: %q", s)
	}
	d.down.Store(true)
	if s, err := g.Next(ctx); s != "B-000001" || err != nil {
		t.Errorf("store down: %q, %v; want B-000001 from the fallback", s, err)
	}
	got, err := g.Issue(ctx, sn.Request{N: 2})
	if err != nil || strings.Join(got, ",") != "B-000002,B-000003" {
		t.Errorf("a batch with the store down: %v, %v", got, err)
	}
	// Retry first, then fall back: the fallback's turn comes after the bound.
	d.fails.Store(0)
	rf := sn.MustNew(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Fallback(fb), sn.Retry(20*time.Millisecond)))
	calls := d.calls.Load()
	if s, err := rf.Next(ctx); s != "B-000004" || err != nil || d.calls.Load()-calls < 2 {
		t.Errorf("retry then fall back: %q, %v after %d draws", s, err, d.calls.Load()-calls)
	}
	// Both down: the fallback's error, with the Generator's.
	down2 := newDownGen()
	down2.down.Store(true)
	fbDown := sn.MustNew(`B-@<seq, width=6>`, sn.WithSequence("seq", down2))
	both := sn.MustNew(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Fallback(fbDown)))
	if _, err := both.Next(ctx); !errors.Is(err, errDown) || !strings.Contains(err.Error(), "fallback failed too") {
		t.Errorf("both down: %v", err)
	}

	same := sn.MustNew(`A-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	_, err = sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Fallback(same)))
	var amb *sn.AmbiguityError
	if !errors.Is(err, sn.ErrAmbiguous) || !errors.As(err, &amb) {
		t.Errorf("a fallback printing the same numbers: %v; want an AmbiguityError", err)
	}
	loose := sn.MustNew(`A-@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
	if _, err := sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Fallback(loose))); !errors.Is(err, sn.ErrAmbiguous) {
		t.Errorf("a fallback whose numbers overlap (A-@<seq> against A-@<seq, width=6>): %v; want ErrAmbiguous", err)
	}
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithMiddleware(sn.Fallback(nil))); err == nil {
		t.Error("Fallback(nil) accepted")
	}
}

// A panic in a middleware, when New wraps or when a call runs through it,
// is an error wrapping ErrPanic; the numbers the call issued are dropped.
// A nil middleware, or one returning nothing, is refused at New.
func TestMiddlewarePanic(t *testing.T) {
	ctx := context.Background()
	atWrap := func(*sn.Generator, sn.IssueFunc) (sn.IssueFunc, error) { panic("wrap bug") }
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithMiddleware(atWrap)); !errors.Is(err, sn.ErrPanic) || !strings.Contains(err.Error(), "wrap bug") {
		t.Errorf("a panic at New: %v", err)
	}
	afterDraw := func(_ *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			if err := next(ctx, b, r); err != nil {
				return err
			}
			panic("after bug")
		}, nil
	}
	m := sequence.NewMemory()
	g := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", m), sn.WithMiddleware(afterDraw))
	var bt sn.Batch
	if err := g.Append(ctx, &bt, sn.Request{N: 3}); !errors.Is(err, sn.ErrPanic) || !strings.Contains(err.Error(), "after bug") || bt.Len() != 0 {
		t.Errorf("a panic after the draw: %v, %d numbers kept", err, bt.Len())
	}
	if _, err := g.Next(ctx); !errors.Is(err, sn.ErrPanic) {
		t.Errorf("Next: %v", err)
	}
	if s, _ := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", m)).Next(ctx); s != "T-5" {
		t.Errorf("the store's next number is %s; want T-5: the numbers of the panicking calls are a gap", s)
	}
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithMiddleware(nil)); err == nil {
		t.Error("a nil middleware accepted")
	}
	none := func(*sn.Generator, sn.IssueFunc) (sn.IssueFunc, error) { return nil, nil }
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithMiddleware(none)); err == nil {
		t.Error("a middleware returning no function accepted")
	}
	refusing := func(*sn.Generator, sn.IssueFunc) (sn.IssueFunc, error) {
		return nil, errors.New("not for this template")
	}
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithMiddleware(refusing)); err == nil || !strings.Contains(err.Error(), "not for this template") {
		t.Errorf("a middleware refusing the Generator: %v", err)
	}
}

// A counting middleware sees every way of issuing and every error that
// ends a call.
func TestMiddlewareSeesEveryCall(t *testing.T) {
	ctx := context.Background()
	down := newDownGen()
	var issued int64
	var errs []error
	errsMW := func(_ *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			err := next(ctx, b, r)
			if err != nil {
				errs = append(errs, err)
			}
			return err
		}, nil
	}
	g := sn.MustNew("A-@<seq, width=6>-@<v, var>", sn.WithSequence("seq", down), sn.WithMiddleware(counting(&issued), errsMW))
	vars := sn.Vars{"v": "x"}
	var bt sn.Batch
	if _, err := g.Issue(ctx, sn.Request{Vars: vars}); err != nil {
		t.Fatal(err)
	}
	if err := g.Append(ctx, &bt, sn.Request{N: 4, Vars: vars}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Issue(ctx, sn.Request{N: 2, Vars: vars}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); !errors.Is(err, sn.ErrVarMissing) {
		t.Fatalf("Next without v: %v, want ErrVarMissing", err)
	}
	down.down.Store(true)
	if _, err := g.Issue(ctx, sn.Request{Vars: vars}); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("with the store down: %v", err)
	}
	if issued != 7 || len(errs) != 2 || !errors.Is(errs[0], sn.ErrVarMissing) || !errors.Is(errs[1], sequence.ErrUnavailable) {
		t.Errorf("the middleware saw %d numbers and errors %v; want 7, ErrVarMissing and ErrUnavailable", issued, errs)
	}
}

// Log records each call: what it issued, or its error.
func TestLog(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	l := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "time" || a.Key == "took" {
			return slog.Attr{}
		}
		return a
	}}))
	d := newDownGen()
	g := sn.MustNew("A-@<seq, width=4>", sn.WithSequence("seq", d), sn.WithName("orders"), sn.WithMiddleware(sn.Log(l)))
	g.Issue(ctx, sn.Request{N: 3})
	d.down.Store(true)
	g.Next(ctx)
	want := `level=INFO msg="sn: issued" template=orders n=3 first=A-0001 last=A-0003
level=WARN msg="sn: issue failed" template=orders n=1 gap=0 err="sn: seq at offset 2: sequence: unavailable: test store down"
`
	if got := out.String(); got != want {
		t.Errorf("logged\n%s\nwant\n%s", got, want)
	}
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithMiddleware(sn.Log(nil))); err == nil {
		t.Error("Log(nil) accepted")
	}
}

// 8 goroutines while the primary store goes down and up at random, the
// fallback on the same memory store and the same key: the prefixes keep
// the two series apart, and no number repeats. The control falls back,
// by a middleware of its own that proves nothing, to a template of the
// same shape on a store of its own: it repeats, so the count can see it.
func TestFallbackNeverRepeats(t *testing.T) {
	shared := sequence.NewMemory()
	d := &downGen{m: shared}
	fb := sn.MustNew(`B-@<seq, width=8>`, sn.WithSequence("seq", shared))
	g := sn.MustNew(`A-@<seq, width=8>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Fallback(fb)))
	repeats, total, fromFallback := issueWhileFlapping(t, g, d, 'B')
	if repeats != 0 || fromFallback == 0 || fromFallback == total {
		t.Errorf("%d repeats in %d numbers, %d from the fallback", repeats, total, fromFallback)
	}
	t.Logf("%d numbers, %d from the fallback, 0 repeats", total, fromFallback)

	d2 := &downGen{m: sequence.NewMemory()}
	twin := sn.MustNew(`A-@<seq, width=8>`, sn.WithSequence("seq", sequence.NewMemory()))
	unproven := func(_ *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			if err := next(ctx, b, r); err == nil || !errors.Is(err, sequence.ErrUnavailable) {
				return err
			}
			return twin.Append(ctx, b, r)
		}, nil
	}
	control := sn.MustNew(`A-@<seq, width=8>`, sn.WithSequence("seq", d2), sn.WithMiddleware(unproven))
	if repeats, total, _ := issueWhileFlapping(t, control, d2, 'A'); repeats == 0 {
		t.Errorf("the control, a fallback printing the primary's numbers, repeated none of %d: the count cannot see a repeat", total)
	} else {
		t.Logf("control: %d repeats in %d numbers", repeats, total)
	}
}

// issueWhileFlapping issues 8 × 20,000 numbers from g on 8 goroutines
// while d goes down and up, and counts the repeats, the numbers, and
// those that start with fallback.
func issueWhileFlapping(t *testing.T, g *sn.Generator, d *downGen, fallback byte) (repeats, total, fromFallback int) {
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // the store goes down and up until the workers are done
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			d.down.Store(i%3 == 0)
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]string, 0, 20_000)
			for range 20_000 {
				s, err := g.Next(ctx)
				if err != nil {
					t.Error(err)
					break
				}
				mine = append(mine, s)
				if len(mine)%64 == 0 {
					runtime.Gosched()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range mine {
				total++
				if seen[s] {
					repeats++
				}
				seen[s] = true
				if s[0] == fallback {
					fromFallback++
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	d.down.Store(false)
	return repeats, total, fromFallback
}

// A request refused before the Generator draws (Refuse, or a count out of
// range) runs once through the middleware as a call that failed: a
// middleware that watches calls sees it with its error, Retry does not
// try it again, and nothing is drawn. The control: a call that fails in
// the store is tried again.
func TestRefuse(t *testing.T) {
	ctx := context.Background()
	d := newDownGen()
	var seen []error
	watch := func(_ *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			err := next(ctx, b, r)
			seen = append(seen, err)
			return err
		}, nil
	}
	g := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", d), sn.WithMiddleware(sn.Retry(time.Second), watch))
	bad := errors.New("the body is not JSON")
	if err := g.Refuse(ctx, sn.Request{}, bad); !errors.Is(err, sn.ErrRefused) || !errors.Is(err, bad) {
		t.Errorf("Refuse = %v; want ErrRefused and its reason", err)
	}
	if _, err := g.Issue(ctx, sn.Request{N: sn.MaxN + 1}); !errors.Is(err, sn.ErrTooMany) {
		t.Errorf("n past MaxN = %v; want ErrTooMany", err)
	}
	if len(seen) != 2 || !errors.Is(seen[0], bad) || !errors.Is(seen[1], sn.ErrTooMany) || d.calls.Load() != 0 {
		t.Errorf("the middleware saw %v, and the store was asked %d times; want the two refusals, once each, and no draw", seen, d.calls.Load())
	}
	if err := sn.MustNew(`T-@<seq>`, mem()).Refuse(ctx, sn.Request{}, bad); !errors.Is(err, sn.ErrRefused) {
		t.Errorf("Refuse without middleware = %v; want ErrRefused", err)
	}
	seen = nil
	d.fails.Store(1)
	if _, err := g.Next(ctx); err != nil || len(seen) != 2 {
		t.Errorf("control: a store that fails once: %v, seen %v; want tried again and issued", err, seen)
	}
}
