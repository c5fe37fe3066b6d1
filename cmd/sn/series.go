package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
)

// cmdSeries lists, checks against and forgets the templates of a store's
// catalog.
func cmdSeries(e *env, args []string) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	f := newFlags("series")
	f.stores()
	yes := f.fs.Bool("yes", false, "")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	switch sub {
	case "list", "check", "forget":
	default:
		return usagef(f.cmd, "unknown subcommand %q: want list, check TEMPLATE or forget ID", sub)
	}
	store, err := f.seriesStore()
	if err != nil {
		return err
	}
	if sub == "check" {
		if len(pos) == 1 && f.template == "" {
			f.template, pos = pos[0], nil
		}
		if f.template == "" {
			return usagef(f.cmd, "series check: give the template to prove against the store's catalog")
		}
	}
	if sub == "forget" && len(pos) != 1 {
		return usagef(f.cmd, "series forget: give the ID of one entry (sn series lists them)")
	}
	if sub != "forget" && len(pos) > 0 {
		return usagef(f.cmd, "unexpected argument %q", pos[0])
	}
	wait := f.wait
	if wait <= 0 {
		wait = -1
	}
	gen, closeStore, err := config.OpenStore(e.ctx, store, config.WithLockWait(wait))
	if err != nil {
		return f.explain(err)
	}
	defer closeStore()
	cat := catalogOf(gen)
	if cat == nil {
		return fmt.Errorf("the %s store keeps no catalog", store.Backend)
	}
	switch sub {
	case "check":
		g, err := sn.New(f.template, sn.WithSequence("seq", gen))
		if err != nil {
			return &inputError{err}
		}
		if err := g.CheckCatalog(e.ctx, cat); err != nil {
			return err
		}
		fmt.Fprintf(e.out, "ok: %s prints no number a template of the store's catalog prints for another counter or number\n", g.String())
		return nil
	case "forget":
		return forget(e, cat, gen, pos[0], *yes)
	}
	return listSeries(e.ctx, e, cat, gen)
}

// seriesStore is the store series reads: --config's, or the flags'.
func (f *flags) seriesStore() (config.Sequence, error) {
	if f.config == "" {
		return f.storeConfig()
	}
	if f.storeFlags() {
		return config.Sequence{}, usagef(f.cmd, "give either --config FILE or the store's flags")
	}
	cfg, err := config.Load(f.config)
	if err != nil {
		return config.Sequence{}, &inputError{err}
	}
	s := cfg.Store
	if s.Backend == "" {
		if _, ok := s.Options["path"]; !ok {
			return f.storeConfig()
		}
		s.Backend = "bolt"
	}
	return s, nil
}

// catalogOf returns the catalog of the store gen draws from, or nil.
func catalogOf(gen sequence.Gen) *catalog.Catalog {
	var cat *catalog.Catalog
	sequence.Walk(gen, func(g sequence.Gen) {
		if c := catalog.Of(g); c != nil && cat == nil {
			cat = c
		}
	})
	return cat
}

func listSeries(ctx context.Context, e *env, cat *catalog.Catalog, gen sequence.Gen) error {
	ss, err := sn.ReadCatalog(ctx, cat)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		fmt.Fprintln(e.out, "the store's catalog is empty: no template has drawn from it yet")
		return nil
	}
	w := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tTEMPLATE\tCOUNTER\tLAST\tUSED\tFIRST USED\tBY")
	for _, s := range ss {
		name := s.Name
		if name == "" {
			name = "-"
		}
		head := fmt.Sprintf("%s\t%s\t%s", s.ID[:min(12, len(s.ID))], name, s.Template)
		tail := fmt.Sprintf("%s\t%s", s.First.UTC().Format(time.RFC3339), s.By)
		if s.Err != nil {
			fmt.Fprintf(w, "%s\t(unreadable: %v)\t\t\t%s\n", head, s.Err, tail)
			continue
		}
		for _, c := range s.Counters {
			last, used := "-", "-"
			if c.Last >= 0 {
				last = strconv.FormatInt(c.Last, 10)
			}
			if u := c.Used(); u >= 0 {
				used = strconv.FormatFloat(100*u, 'f', 2, 64) + "%"
			}
			if !c.Fixed {
				last = "per call"
			}
			fmt.Fprintf(w, "%s\t%q\t%s\t%s\t%s\n", head, c.Key, last, used, tail)
			head = "\t\t"
		}
	}
	return w.Flush()
}

// forget removes an entry, given by its ID or a prefix of it, once told
// that it is meant: what it risks is said first.
func forget(e *env, cat *catalog.Catalog, gen sequence.Gen, id string, yes bool) error {
	ss, err := sn.ReadCatalog(e.ctx, cat)
	if err != nil {
		return err
	}
	var match []sn.Series
	for _, s := range ss {
		if strings.HasPrefix(s.ID, id) && id != "" {
			match = append(match, s)
		}
	}
	switch len(match) {
	case 0:
		return &inputError{fmt.Errorf("no entry of the catalog has an ID starting %q (sn series lists them)", id)}
	case 1:
	default:
		return &inputError{fmt.Errorf("%d entries have an ID starting %q: give more of it", len(match), id)}
	}
	s := match[0]
	fmt.Fprintf(e.stderr, "sn: forgetting %s (%s), in the catalog since %s by %s.\n", s.ID, s.Template, s.First.UTC().Format(time.RFC3339), s.By)
	fmt.Fprintln(e.stderr, "sn: the numbers it printed exist; once it is forgotten, a template enrolled later is not proven against it and may print them again.")
	if !yes {
		return &inputError{errors.New("nothing forgotten: add --yes to forget it")}
	}
	ok, err := cat.Forget(e.ctx, s.ID)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("entry %s was gone already", s.ID)
	}
	fmt.Fprintf(e.out, "forgot %s\n", s.ID)
	return nil
}
