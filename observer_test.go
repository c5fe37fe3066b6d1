package sn_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// tally is an Observer that counts what it is told.
type tally struct {
	mu      sync.Mutex
	seqs    []string
	numbers int
	// unprinted counts numbers observed without c.Numbers: those of
	// AppendNext and AppendNextN without hooks
	unprinted int
	errs      []error
	log       *[]string
	panics    bool
}

func (o *tally) Open(seqs map[string]sequence.Gen) {
	for name, g := range seqs {
		if g != nil {
			o.seqs = append(o.seqs, name)
		}
	}
}

func (o *tally) Observe(ctx context.Context, c *sn.Call, err error) {
	if o.panics {
		panic("observer bug")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.log != nil {
		*o.log = append(*o.log, "observe")
	}
	if err != nil {
		o.errs = append(o.errs, err)
		return
	}
	if c.Numbers != nil && len(c.Numbers) != c.N {
		panic("Observe saw fewer numbers than asked for")
	}
	if c.Numbers == nil {
		o.unprinted += c.N
	}
	o.numbers += c.N
}

// Observers see every way of issuing, the errors that end calls, and the
// sequences of the template; they run after the hooks, which they do not
// replace.
func TestObserver(t *testing.T) {
	ctx := context.Background()
	down := newDownGen()
	var log []string
	a, b := &tally{log: &log}, &tally{}
	g, err := sn.New("A-@<seq, width=6>-@<v, var>",
		sn.WithSequence("seq", down),
		sn.WithHooks(sn.Hooks{After: func(context.Context, *sn.Call) { log = append(log, "after") }}),
		sn.WithObserver(a), sn.WithObserver(b))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(a.seqs, ",") != "seq" {
		t.Errorf("Open saw sequences %q, want seq", a.seqs)
	}
	vars := sn.Vars{"v": "x"}
	if _, err := g.NextWith(ctx, vars); err != nil {
		t.Fatal(err)
	}
	if _, err := g.AppendNext(ctx, nil, time.Time{}, vars); err != nil {
		t.Fatal(err)
	}
	if _, err := g.NextNAt(ctx, 5, time.Time{}, vars); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); !errors.Is(err, sn.ErrVarMissing) {
		t.Fatalf("Next without v: %v, want ErrVarMissing", err)
	}
	down.down.Store(true)
	if _, err := g.NextWith(ctx, vars); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("Next with the store down: %v", err)
	}
	for _, o := range []*tally{a, b} {
		if o.numbers != 7 || len(o.errs) != 2 || !errors.Is(o.errs[0], sn.ErrVarMissing) || !errors.Is(o.errs[1], sequence.ErrUnavailable) {
			t.Errorf("observer saw %d numbers and errors %v; want 7, ErrVarMissing and ErrUnavailable", o.numbers, o.errs)
		}
	}
	if want := "after,observe"; strings.Join(log[:2], ",") != want {
		t.Errorf("ran as %v, want %s first", log, want)
	}

	// Without hooks, the appending calls leave the numbers in the
	// caller's buffer: the observer is told how many.
	c := &tally{}
	plain, err := sn.New("A-@<seq, width=6>", sn.WithSequence("seq", sequence.NewMemory()), sn.WithObserver(c))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.AppendNext(ctx, nil, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := plain.AppendNextN(ctx, nil, nil, 4, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.NextN(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if c.numbers != 7 || c.unprinted != 5 || len(c.errs) != 0 {
		t.Errorf("observer without hooks saw %d numbers, %d without strings, errors %v; want 7, 5, none", c.numbers, c.unprinted, c.errs)
	}
	buf := make([]byte, 0, 64)
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := plain.AppendNext(ctx, buf, time.Time{}, nil); err != nil {
			t.Fatal(err)
		}
	}); allocs > 1 {
		t.Errorf("AppendNext with an observer allocates %v times; want at most 1 (the Call)", allocs)
	}

	if _, err := sn.New("A-@<seq>", mem(), sn.WithObserver(nil)); err == nil {
		t.Error("WithObserver(nil) accepted")
	}
	p, err := sn.New("A-@<seq>", sn.WithSequence("seq", sequence.NewMemory()), sn.WithObserver(&tally{panics: true}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Next(ctx); !errors.Is(err, sn.ErrPanic) {
		t.Errorf("a panicking observer: %v, want ErrPanic", err)
	}
}
