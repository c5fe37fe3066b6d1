package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
)

// chunk is how many numbers next asks for at once: one store transaction,
// one write to stdout.
const chunk = 4096

// progressFrom is the smallest count for which next shows progress.
const progressFrom = 10000

func cmdNext(e *env, args []string) error {
	f := newFlags("next")
	f.count(1)
	f.call()
	f.stores()
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	if f.n < 0 {
		return usagef(f.cmd, "-n %d: want 0 or more", f.n)
	}
	store, err := f.storeConfig()
	if err != nil {
		return err
	}
	t, pos, err := f.target(pos, store)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(f.cmd, "unexpected argument %q", pos[0])
	}
	if err := f.checkDurable(t); err != nil {
		return err
	}
	if f.n == 0 {
		return nil
	}
	if err := f.checkVars(e.ctx, t.generator()); err != nil {
		return err
	}

	// The first SIGINT or SIGTERM stops the run after the numbers issued
	// so far are printed and the store is closed; a second one kills.
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)

	// Exact: each chunk reserves just the numbers it prints, so a run
	// leaves no gap behind.
	wait := f.wait
	if wait <= 0 {
		wait = -1 // try once
	}
	g, closeGen, err := t.open(ctx, config.WithDir(t.dir), config.WithExact(), config.WithLockWait(wait))
	if err != nil {
		return f.explain(err)
	}
	if f.newStore != "" && t.name == cliName {
		if _, err := os.Stat(f.newStore); err == nil {
			fmt.Fprintf(e.stderr, "sn: created a new store, %s: numbers are unique within it, and continue from it in later runs on this machine; a series issued on several machines needs one shared store for all of them (--ledger DSN)\n", f.newStore)
		}
	}

	p := progress{e: e, total: f.n, show: e.tty && f.n >= progressFrom}
	issued := 0
	var runErr error
	var bt sn.Batch
	txn := g.Transactional()
	for issued < f.n {
		// A gapless template's chunk is one transaction (Transact),
		// printed once committed: a chunk rolled back printed nothing.
		err := g.Transact(ctx, func(ctx context.Context) error {
			bt.Reset()
			return g.Append(ctx, &bt, sn.Request{N: min(chunk, f.n-issued), At: f.at, Vars: f.vars})
		})
		if err != nil && txn {
			bt.Reset()
		}
		for i := range bt.Len() {
			e.out.Write(bt.Bytes(i))
			e.out.WriteByte('\n')
		}
		issued += bt.Len()
		if werr := e.out.Flush(); werr != nil {
			runErr = werr
			break
		}
		if err != nil {
			runErr = err
			break
		}
		p.update(issued)
	}
	p.done()
	if cerr := closeGen(); runErr == nil {
		runErr = cerr
	}
	runErr = f.explain(runErr)
	if ctx.Err() != nil && (runErr == nil || errors.Is(runErr, context.Canceled)) && issued < f.n {
		fmt.Fprintf(e.stderr, "sn: interrupted after %d of %d numbers\n", issued, f.n)
		return errInterrupted
	}
	return runErr
}

// checkVars fails before any store is opened, and so before any number
// is drawn, when the template prints a variable that --var does not give
// or when a value breaks the template's limits.
func (f *flags) checkVars(ctx context.Context, g *sn.Generator) error {
	parts := g.Explain().Parts
	var missing []string
	for _, p := range parts {
		set := slices.ContainsFunc(parts, func(q sn.PartInfo) bool { return q.Kind == "setter" && q.Name == p.Name })
		if want := "--var " + p.Name + "=VALUE"; p.Kind == "variable" && !set && f.vars[p.Name] == "" && !slices.Contains(missing, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return usagef(f.cmd, "the template needs %s", strings.Join(missing, " "))
	}
	reads := g.Vars()
	for _, name := range slices.Sorted(maps.Keys(f.vars)) {
		if !slices.Contains(reads, name) {
			what := "no variable"
			if len(reads) > 0 {
				what = "the variables " + strings.Join(reads, ", ")
			}
			return usagef(f.cmd, "--var %s: the template reads %s", name, what)
		}
	}
	if _, err := g.Preview(ctx, sn.Request{At: f.at, Vars: f.vars}); err != nil {
		return &inputError{err}
	}
	return nil
}

// checkDurable refuses, before any store is opened, a template whose
// backend keeps no numbers from one run to the next (memory): each run
// would issue the same numbers again.
func (f *flags) checkDurable(t *target) error {
	seq, _ := t.cfg.Sequence(t.name)
	var st config.StoreInfo
	if seq.Balanced != nil {
		// Durable only if every member is (a config file's, which
		// target validated).
		var err error
		if st, err = t.cfg.StoreInfo(t.name, config.WithDir(t.dir)); err != nil {
			return &inputError{err}
		}
	} else {
		d, err := config.Lookup(seq.Backend)
		if err != nil {
			return &inputError{err}
		}
		if st, err = d.Check(&config.Target{Name: t.name, Sequence: seq, Dir: t.dir}); err != nil {
			return &inputError{err}
		}
	}
	switch {
	case st.Durable:
	case seq.Balanced != nil:
		return usagef(f.cmd, "template %q is balanced over a member whose numbers would restart at every run; give every member a durable store (such as bolt) in %s, or see its numbers with sn preview",
			t.name, f.config)
	case seq.Backend == "snowflake":
		return usagef(f.cmd, "template %q uses a fixed snowflake worker id, whose ids repeat when two runs overlap or the clock goes back between runs; lease worker ids from a Redis (url) in %s, or see its numbers with sn preview",
			t.name, f.config)
	default:
		return usagef(f.cmd, "template %q uses the %s backend, whose numbers would restart at every run; give it a durable store (such as bolt) in %s, or see its numbers with sn preview",
			t.name, seq.Backend, f.config)
	}
	return nil
}

// open builds t's Generator with config.Config.Build, which opens its
// store and raises its floor. The errors of a -t template are not dressed
// as a config file's.
func (t *target) open(ctx context.Context, opts ...config.BuildOption) (*sn.Generator, func() error, error) {
	if t.name == cliName {
		opts = append(opts, config.WithOptions(sn.WithName(""))) // a template of the command line has no name
	}
	set, err := t.cfg.Build(ctx, opts...)
	if err != nil {
		var ce *config.Error
		if t.name == cliName && errors.As(err, &ce) && ce.Template == cliName {
			err = ce.Err
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // the store's error, without "bolt sequence: "
			}
		}
		return nil, nil, err
	}
	g, _ := set.Get(t.name)
	return g, set.Close, nil
}

// progress shows how far next has come on stderr, at most every 100ms.
type progress struct {
	e     *env
	total int
	show  bool
	last  time.Time
	shown bool
}

func (p *progress) update(n int) {
	if !p.show || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.shown = true
	fmt.Fprintf(p.e.stderr, "\rsn: %d of %d numbers", n, p.total)
}

// done clears the progress line.
func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.e.stderr, "\r\033[K")
	}
}
