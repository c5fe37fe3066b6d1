package sn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// unmarked hides a Memory's records, so sn does not guard it: the control
// of TestClockGuard.
type unmarked struct{ m *sequence.Memory }

func (u unmarked) Next(ctx context.Context, key string) (int64, error) { return u.m.Next(ctx, key) }

// A per-second counter expires in the store two hours and a second after
// its first draw. A clock set back across an expired counter is refused
// (sequence.ErrClockRollback), in the process that moved and in a new one
// over the same store, and never prints a number twice; a clock set back
// by less than half the retention continues its counters. The control, the
// same store and expiry without the guard, repeats.
func TestClockGuard(t *testing.T) {
	const tpl = `@<date, format=yyyyMMddHHmmss>-@<seq, reset=second>`
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	clk := &fixedClock{t: t0}
	mem := &sequence.Memory{Clock: clk.now}
	newGen := func() *sn.Generator {
		g, err := sn.New(tpl, sn.WithSequence("seq", mem), sn.WithClock(clk.now))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := newGen()
	seen := map[string]time.Time{}
	issue := func(g *sn.Generator, n int) error {
		for range n {
			s, err := g.Next(ctx)
			if err != nil {
				return err
			}
			if at, ok := seen[s]; ok {
				t.Fatalf("%q printed again at %v, first at %v", s, clk.now(), at)
			}
			seen[s] = clk.now()
		}
		return nil
	}
	if err := issue(g, 5); err != nil {
		t.Fatal(err)
	}
	clk.set(t0.Add(20 * time.Minute)) // back by 40 minutes later: within R/2, the counter is there
	if err := issue(g, 3); err != nil {
		t.Fatal(err)
	}
	clk.set(t0)
	if err := issue(g, 3); err != nil {
		t.Fatalf("a clock 20 minutes back: %v", err)
	}
	if got := len(seen); got != 11 {
		t.Fatalf("%d numbers", got)
	}

	clk.set(t0.Add(3 * time.Hour)) // past the retention: the counter of t0 expires
	if err := issue(g, 2); err != nil {
		t.Fatal(err)
	}
	var firstNumber string
	for s, at := range seen {
		if at.Equal(t0) && strings.HasSuffix(s, "-1") {
			firstNumber = s
		}
	}
	p0, err := g.Parse(firstNumber)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := mem.Next(ctx, p0.Key); n != 1 {
		t.Fatalf("the counter %q of three hours ago is still in the store: it gives %d", p0.Key, n)
	}
	clk.set(t0) // an NTP step back of three hours
	err = issue(g, 1)
	if !errors.Is(err, sequence.ErrClockRollback) {
		t.Fatalf("a clock set back 3 hours across an expired counter: %v, want ErrClockRollback", err)
	}
	t.Log(err)
	// It is refused until the clock is within half the retention of the
	// store's time: 3h - 1h, as sn serve's Retry-After says.
	if d, ok := sequence.RetryAfterOf(err); !ok || d.Round(time.Second) != 2*time.Hour {
		t.Errorf("RetryAfterOf = %v, %v; want 2h", d, ok)
	}
	if err := issue(newGen(), 1); !errors.Is(err, sequence.ErrClockRollback) {
		t.Fatalf("a new Generator (a restarted process) on the same store: %v, want ErrClockRollback", err)
	}
	// A document instant within half the retention before the mark goes ahead.
	if _, err := first(g.Issue(ctx, sn.Request{At: t0.Add(3*time.Hour - 30*time.Minute)})); err != nil {
		t.Fatalf("an instant 30 minutes back: %v", err)
	}

	// The control: the same store and expiry, no guard.
	clk.set(t0)
	mem2 := &sequence.Memory{Clock: clk.now}
	c, err := sn.New(tpl, sn.WithSequence("seq", unmarked{mem2}), sn.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	first, _ := c.Next(ctx)
	p, _ := c.Parse(first)
	key := p.Key
	clk.set(t0.Add(3 * time.Hour))
	mem2.Expire(ctx, key, 0) // what the store does to a period's counter after its retention
	clk.set(t0)
	again, _ := c.Next(ctx)
	if again != first {
		t.Fatalf("the control printed %q then %q: the test cannot see a restarted counter", first, again)
	}
	t.Logf("the control repeated %q", again)
	if !strings.HasPrefix(first, "20240501100000-") {
		t.Fatal(first)
	}
}

// After an idle spell longer than a period and the retention, with every
// clock right, nothing has been drawn since the counter of t0 was: the
// store's clock alone has moved, and its counter expired. A process
// restarted with its clock still at t0, and a document instant at t0, are
// refused; the store's clock, not the last instant issued at, is what the
// guard compares with.
func TestClockGuardIdleSpell(t *testing.T) {
	const tpl = `@<date, format=yyyyMMddHH>-@<seq, reset=hour>`
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	store := &fixedClock{t: t0}
	mem := &sequence.Memory{Clock: store.now}
	process := func(clock func() time.Time) *sn.Generator {
		g, err := sn.New(tpl, sn.WithSequence("seq", mem), sn.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	firstNum, err := process(store.now).Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	store.set(t0.Add(5 * time.Hour)) // idle: the store's clock alone moves
	behind := process(func() time.Time { return t0 })
	if n, err := behind.Next(ctx); !errors.Is(err, sequence.ErrClockRollback) {
		t.Errorf("a process restarted with its clock at t0 after the idle spell: %q, %v; want ErrClockRollback (first %q)", n, err, firstNum)
	}
	if n, err := first(process(store.now).Issue(ctx, sn.Request{At: t0})); !errors.Is(err, sn.ErrInstant) {
		t.Errorf("a document instant at t0 after the idle spell: %q, %v; want ErrInstant (first %q)", n, err, firstNum)
	}
	if n, err := first(process(store.now).Issue(ctx, sn.Request{At: t0.Add(4*time.Hour + 30*time.Minute)})); err != nil {
		t.Errorf("a document instant 30 minutes back: %q, %v", n, err)
	}
}

// WithRetention refuses less than an hour.
func TestWithRetention(t *testing.T) {
	_, err := sn.New(`@<date, format=yyyyMMddHH>@<seq, reset=hour>`, mem(), sn.WithRetention(time.Minute))
	if err == nil || !strings.Contains(err.Error(), "WithRetention(1m0s): want at least 1h0m0s") {
		t.Fatalf("WithRetention(1m) = %v", err)
	}
}

// Numbers issued At an instant far ahead (the year 2400, past the
// longest Duration from now): the counter's expiry saturates rather than
// wrapping to a negative ttl, which deletes the key at once and numbers
// the hour again (the adversary's helper found 21 repeats on SQLite).
func TestClockGuardFarFuture(t *testing.T) {
	ctx := context.Background()
	seg, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	g := sn.MustNew(`H-@<date, format=yyyyMMddHH>-@<seq, reset=hour>`, sn.WithSequence("seq", seg))
	at := time.Date(2400, 1, 1, 0, 30, 0, 0, time.UTC)
	seen := map[string]bool{}
	for _, a := range []time.Time{at, at.Add(time.Hour), at} {
		nums, err := g.Issue(ctx, sn.Request{N: 3, At: a})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range nums {
			if seen[s] {
				t.Errorf("%s issued twice", s)
			}
			seen[s] = true
		}
	}
}
