package sn_test

import (
	"context"
	"errors"
	"fmt"
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

// The hooks run in their order around Next, AppendNext and NextN, and see
// the numbers issued.
func TestHooksOrder(t *testing.T) {
	var mu sync.Mutex
	var log []string
	add := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	g := sn.MustNew(`T-@<seq, width=4>`, sn.WithSequence("seq", sequence.NewMemory()), sn.WithHooks(sn.Hooks{
		Before: func(ctx context.Context, c *sn.Call) error {
			add(fmt.Sprintf("before n=%d attempt=%d", c.N, c.Attempt))
			return nil
		},
		After: func(ctx context.Context, c *sn.Call) {
			add(fmt.Sprintf("after %v attempt=%d template=%s", c.Numbers, c.Attempt, c.Template))
		},
		OnError: func(ctx context.Context, c *sn.Call) sn.Rejection {
			add("onerror")
			return sn.Fail()
		},
	}))
	ctx := context.Background()
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	buf, err := g.AppendNext(ctx, []byte("x:"), time.Time{}, nil)
	if err != nil || string(buf) != "x:T-0002" {
		t.Fatalf("AppendNext = %q, %v", buf, err)
	}
	if _, err := g.NextN(ctx, 2); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"before n=1 attempt=0", "after [T-0001] attempt=1 template=T-@<seq, width=4>",
		"before n=1 attempt=0", "after [T-0002] attempt=1 template=T-@<seq, width=4>",
		"before n=2 attempt=0", "after [T-0003 T-0004] attempt=1 template=T-@<seq, width=4>",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks ran as\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

// Before can refuse a call: nothing is drawn. Errors that a retry cannot
// cure do not reach OnError.
func TestHooksBeforeRefuses(t *testing.T) {
	m := sequence.NewMemory()
	refuse := errors.New("quota exceeded")
	var onError atomic.Int64
	g := sn.MustNew(`T-@<seq>-@<customer>`, sn.WithSequence("seq", m), sn.WithHooks(sn.Hooks{
		Before: func(ctx context.Context, c *sn.Call) error {
			if c.Vars["customer"] == "blocked" {
				return refuse
			}
			return nil
		},
		OnError: func(ctx context.Context, c *sn.Call) sn.Rejection { onError.Add(1); return sn.Retry(time.Second) },
	}))
	ctx := context.Background()
	if _, err := g.NextWith(ctx, sn.Vars{"customer": "blocked"}); !errors.Is(err, refuse) {
		t.Fatalf("Before refusing: %v", err)
	}
	if s, err := g.NextWith(ctx, sn.Vars{"customer": "ok"}); err != nil || s != "T-1-ok" {
		t.Errorf("after a refused call: %q, %v; want T-1-ok (nothing drawn by the refused call)", s, err)
	}
	if _, err := g.NextWith(ctx, nil); !errors.Is(err, sn.ErrVarMissing) {
		t.Errorf("missing variable: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.NextWith(done, sn.Vars{"customer": "ok"}); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v", err)
	}
	if n := onError.Load(); n != 0 {
		t.Errorf("OnError ran %d times for errors a retry cannot cure", n)
	}
}

// Retry draws again until the store works, within its bound.
func TestHooksRetry(t *testing.T) {
	d := newDownGen()
	d.fails.Store(3)
	var attempts []int
	g := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", d), sn.WithHooks(sn.Hooks{
		After:   func(ctx context.Context, c *sn.Call) { attempts = append(attempts, c.Attempt) },
		OnError: func(ctx context.Context, c *sn.Call) sn.Rejection { return sn.Retry(10 * time.Second) },
	}))
	ctx := context.Background()
	s, err := g.Next(ctx)
	if err != nil || s != "T-1" || len(attempts) != 1 || attempts[0] != 4 {
		t.Fatalf("Next through 3 failures = %q, %v, attempts %v; want T-1 at attempt 4", s, err, attempts)
	}
	d.down.Store(true)
	calls := d.calls.Load()
	g2 := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", d), sn.WithHooks(sn.Hooks{
		OnError: func(ctx context.Context, c *sn.Call) sn.Rejection { return sn.Retry(20 * time.Millisecond) },
	}))
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
}

// FallBack issues from the fallback Generator; a fallback that could print
// the primary's numbers is refused at New.
func TestHooksFallback(t *testing.T) {
	ctx := context.Background()
	d := newDownGen()
	fb := sn.MustNew(`B-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	var fellBack atomic.Bool
	g, err := sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithFallback(fb), sn.WithHooks(sn.Hooks{
		After:   func(ctx context.Context, c *sn.Call) { fellBack.Store(c.Fallback) },
		OnError: func(ctx context.Context, c *sn.Call) sn.Rejection { return sn.FallBack() },
	}))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Next(ctx); s != "A-000001" || fellBack.Load() {
		t.Errorf("store up: %q (fallback %v)", s, fellBack.Load())
	}
	d.down.Store(true)
	if s, err := g.Next(ctx); s != "B-000001" || err != nil || !fellBack.Load() {
		t.Errorf("store down: %q, %v (fallback %v); want B-000001 from the fallback", s, err, fellBack.Load())
	}
	got, err := g.NextN(ctx, 2)
	if err != nil || strings.Join(got, ",") != "B-000002,B-000003" {
		t.Errorf("NextN with the store down: %v, %v", got, err)
	}

	same := sn.MustNew(`A-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	_, err = sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithFallback(same))
	var amb *sn.AmbiguityError
	if !errors.Is(err, sn.ErrAmbiguous) || !errors.As(err, &amb) {
		t.Errorf("a fallback printing the same numbers: %v; want an AmbiguityError", err)
	}
	loose := sn.MustNew(`A-@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
	if _, err := sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", d), sn.WithFallback(loose)); !errors.Is(err, sn.ErrAmbiguous) {
		t.Errorf("a fallback whose numbers overlap (A-@<seq> against A-@<seq, width=6>): %v; want ErrAmbiguous", err)
	}

	noFallback := sn.MustNew(`A-@<seq>`, sn.WithSequence("seq", d), sn.WithHooks(sn.Hooks{
		OnError: func(ctx context.Context, c *sn.Call) sn.Rejection { return sn.FallBack() },
	}))
	if _, err := noFallback.Next(ctx); !errors.Is(err, errDown) || !strings.Contains(err.Error(), "no WithFallback") {
		t.Errorf("FallBack without a fallback: %v", err)
	}
}

// A panic in any hook is an error wrapping ErrPanic.
func TestHooksPanic(t *testing.T) {
	ctx := context.Background()
	for _, which := range []string{"Before", "After", "OnError"} {
		d := newDownGen()
		d.down.Store(which == "OnError")
		h := sn.Hooks{}
		boom := func() { panic("hook bug") }
		switch which {
		case "Before":
			h.Before = func(context.Context, *sn.Call) error { boom(); return nil }
		case "After":
			h.After = func(context.Context, *sn.Call) { boom() }
		case "OnError":
			h.OnError = func(context.Context, *sn.Call) sn.Rejection { boom(); return sn.Fail() }
		}
		g := sn.MustNew(`T-@<seq>`, sn.WithSequence("seq", d), sn.WithHooks(h))
		if _, err := g.Next(ctx); !errors.Is(err, sn.ErrPanic) || !strings.Contains(err.Error(), which) {
			t.Errorf("a panic in %s: %v; want ErrPanic naming the hook", which, err)
		}
	}
	if _, err := sn.New(`T-@<seq>`, mem(), sn.WithFallback(nil)); err == nil {
		t.Error("WithFallback(nil) accepted")
	}
}

// 8 goroutines while the primary store goes down and up at random, the
// fallback on the same memory store and the same key: the prefixes keep
// the two series apart, and no number repeats.
func TestHooksFallbackNeverRepeats(t *testing.T) {
	ctx := context.Background()
	shared := sequence.NewMemory()
	d := &downGen{m: shared}
	fb := sn.MustNew(`B-@<seq, width=8>`, sn.WithSequence("seq", shared))
	g := sn.MustNew(`A-@<seq, width=8>`, sn.WithSequence("seq", d), sn.WithFallback(fb), sn.WithHooks(sn.Hooks{
		OnError: func(ctx context.Context, c *sn.Call) sn.Rejection { return sn.FallBack() },
	}))
	var mu sync.Mutex
	seen := map[string]bool{}
	repeats, fromB := 0, 0
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
				if seen[s] {
					repeats++
				}
				seen[s] = true
				if s[0] == 'B' {
					fromB++
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if repeats != 0 || fromB == 0 || fromB == len(seen) {
		t.Errorf("%d repeats in %d numbers, %d from the fallback", repeats, len(seen), fromB)
	}
	t.Logf("%d numbers, %d from the fallback, 0 repeats", len(seen), fromB)
}
