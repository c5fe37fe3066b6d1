package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
)

func cmdFloor(e *env, args []string) error {
	f := newFlags("floor")
	f.stores()
	dry := f.fs.Bool("dry-run", false, "")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	store, err := f.storeConfig()
	if err != nil {
		return err
	}
	t, numbers, err := f.target(pos, store)
	if err != nil {
		return err
	}
	if !*dry {
		if err := f.checkDurable(t); err != nil {
			return err
		}
	}
	// Read every number first: one that does not fit the template changes
	// nothing.
	g := t.generator()
	var parsed []sn.Parsed
	bad := 0
	err = eachNumber(e, numbers, func(s string) error {
		p, err := g.Parse(s)
		if err != nil {
			bad++
			fmt.Fprintf(e.stderr, "sn floor: %s: %s\n", s, reason(err))
			return nil
		}
		parsed = append(parsed, p)
		return nil
	})
	switch {
	case err != nil:
		return err
	case bad > 0:
		fmt.Fprintf(e.stderr, "sn floor: %d of %d numbers do not fit the template; no counter was changed\n", bad, bad+len(parsed))
		return errInvalid
	case len(parsed) == 0:
		return usagef(f.cmd, "no numbers given (as arguments or on stdin)")
	}
	plan := floors(parsed)
	verb := "raised above"
	if *dry {
		verb = "would be raised above"
	}
	if !*dry {
		ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		wait := f.wait
		if wait <= 0 {
			wait = -1
		}
		g, closeGen, err := t.open(ctx, config.WithDir(t.dir), config.WithExact(), config.WithLockWait(wait))
		if err != nil {
			return f.explain(err)
		}
		err = g.FloorParsed(ctx, parsed...)
		if cerr := closeGen(); err == nil {
			err = cerr
		}
		if err != nil {
			return f.explain(err)
		}
	}
	for _, c := range plan {
		fmt.Fprintf(e.out, "counter %q: %s %d (the largest of %d numbers)\n", c.key, verb, c.top, c.count)
	}
	return nil
}

// floor is what sn floor does to one counter.
type floor struct {
	key   string
	top   int64
	count int
}

// floors lists the counters the numbers were drawn from, in the order first
// seen, with the largest number of each.
func floors(ps []sn.Parsed) []floor {
	var out []floor
	at := map[[2]string]int{}
	for _, p := range ps {
		for _, d := range p.Draws {
			id := [2]string{fmt.Sprint(d.Offset), d.Key}
			i, ok := at[id]
			if !ok {
				i = len(out)
				at[id] = i
				out = append(out, floor{key: d.Key})
			}
			out[i].top = max(out[i].top, d.Seq)
			out[i].count++
		}
	}
	return out
}
