package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// errUnexplained is returned by gaps and verify when the journal does not
// account for every number, or does not verify.
var errUnexplained = errors.New("unexplained")

// journalTarget opens the store of a template and finds the counter key
// to read: --key, the counter of a NUMBER given, or the one --at and
// --var name.
type journalTarget struct {
	gen   *sn.Generator
	j     journal.Keeper
	key   string
	close func() error
}

func (f *flags) openJournal(e *env, pos []string, key string) (*journalTarget, []string, error) {
	store, err := f.storeConfig()
	if err != nil {
		return nil, nil, err
	}
	t, pos, err := f.target(pos, store)
	if err != nil {
		return nil, nil, err
	}
	wait := f.wait
	if wait <= 0 {
		wait = -1
	}
	g, closeGen, err := t.open(e.ctx, config.WithDir(t.dir), config.WithExact(), config.WithLockWait(wait))
	if err != nil {
		return nil, nil, f.explain(err)
	}
	j, err := g.Journal()
	if err != nil {
		closeGen()
		return nil, nil, err
	}
	jt := &journalTarget{gen: g, j: j, key: key, close: closeGen}
	return jt, pos, nil
}

// resolveKey sets the key from a number, when none was given.
func (jt *journalTarget) resolveKey(f *flags, number string) error {
	if jt.key != "" {
		return nil
	}
	if number != "" {
		p, err := jt.gen.Parse(number)
		if err != nil {
			return &inputError{err}
		}
		jt.key = p.Key
		return nil
	}
	k, err := jt.gen.Key(sn.Request{At: f.at, Vars: f.vars})
	if err != nil {
		return err
	}
	jt.key = k
	return nil
}

// readCounter opens the store, finds the counter key (from --key, a
// NUMBER in pos, or --at and --var) and reads its journal. The caller
// closes jt.
func (f *flags) readCounter(e *env, pos []string, key string) (jt *journalTarget, events []journal.Event, head journal.Head, err error) {
	jt, pos, err = f.openJournal(e, pos, key)
	if err != nil {
		return nil, nil, journal.Head{}, err
	}
	number := ""
	switch {
	case len(pos) == 1:
		number = pos[0]
	case len(pos) > 1:
		err = usagef(f.cmd, "unexpected argument %q", pos[1])
	}
	if err == nil {
		err = jt.resolveKey(f, number)
	}
	if err == nil {
		events, head, err = journal.ReadJournal(e.ctx, jt.j, jt.key)
	}
	if err != nil {
		jt.close()
		return nil, nil, journal.Head{}, err
	}
	return jt, events, head, nil
}

// cmdGaps lists what became of the numbers of a counter that were not
// issued, from its store's journal.
func cmdGaps(e *env, args []string) error {
	f := newFlags("gaps")
	f.stores()
	f.call()
	key := f.fs.String("key", "", "")
	from := f.fs.Int64("from", 1, "")
	to := f.fs.Int64("to", 0, "")
	all := f.fs.Bool("all", false, "")
	keys := f.sealKeys()
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	jt, events, head, err := f.readCounter(e, pos, *key)
	if err != nil {
		return err
	}
	defer jt.close()
	verr := journal.VerifySealed(jt.key, events, head, *keys)
	rep := journal.Audit(jt.key, events, head, time.Now())
	last := *to
	if last == 0 {
		last = head.Mark
	}
	fmt.Fprintf(e.out, "counter %q: numbers %d to %d (mark %d, %d journal records)\n", jt.key, *from, last, head.Mark, len(events))
	counts := map[journal.State]int64{}
	unexplained := 0
	for _, sp := range rep.Within(*from, last) {
		counts[sp.State] += sp.Range.Len()
		if !sp.State.Explained() {
			unexplained++
		}
		if sp.State == journal.Issued && !*all {
			continue
		}
		fmt.Fprintf(e.out, "%s\t%s\t%s\n", spanText(sp.Range), sp.State, sp.Cause())
	}
	if last > head.Mark {
		fmt.Fprintf(e.out, "%s\tnot reserved yet\n", spanText(sequence.Range{First: max(*from, head.Mark+1), Last: last}))
	}
	var parts []string
	for st := journal.Issued; st <= journal.Unaccounted; st++ {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	fmt.Fprintf(e.out, "summary: %s\n", strings.Join(parts, ", "))
	for _, p := range rep.Problems {
		fmt.Fprintf(e.stderr, "sn gaps: %s\n", p)
	}
	if verr != nil {
		fmt.Fprintf(e.stderr, "sn gaps: the journal does not verify, so it cannot explain anything: %v\n", verr)
		return errUnexplained
	}
	if unexplained > 0 || len(rep.Problems) > 0 {
		fmt.Fprintf(e.stderr, "sn gaps: %d runs of numbers unexplained or awaiting action, %d problems\n", unexplained, len(rep.Problems))
		return errUnexplained
	}
	return nil
}

func spanText(r sequence.Range) string {
	if r.First == r.Last {
		return strconv.FormatInt(r.First, 10)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// cmdVerify checks the hash chain of a counter's journal.
func cmdVerify(e *env, args []string) error {
	f := newFlags("verify")
	f.stores()
	f.call()
	key := f.fs.String("key", "", "")
	var anchors []journal.Head
	f.fs.Func("anchor", "", func(s string) error {
		seq, h, ok := strings.Cut(s, ":")
		n, err := strconv.ParseInt(seq, 10, 64)
		b, herr := hex.DecodeString(h)
		if !ok || err != nil || herr != nil || len(b) != 32 || n < 1 {
			return fmt.Errorf("want RECORD:HASH, as sn verify prints it, got %q", s)
		}
		var a journal.Head
		a.Seq = n
		copy(a.Hash[:], b)
		anchors = append(anchors, a)
		return nil
	})
	keys := f.sealKeys()
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	jt, events, head, err := f.readCounter(e, pos, *key)
	if err != nil {
		return err
	}
	defer jt.close()
	if err := journal.VerifySealed(jt.key, events, head, *keys, anchors...); err != nil {
		fmt.Fprintf(e.stderr, "sn verify: %v\n", err)
		return errUnexplained
	}
	sealed := ""
	if len(events) > 0 && journal.SealedBy(events[0]) != "" {
		sealed = fmt.Sprintf(" (pruned through record %d, signed by key %s)", events[0].Seq, journal.SealedBy(events[0]))
	}
	fmt.Fprintf(e.out, "ok: counter %q: %d journal records verify%s; anchor: %d:%s\n", jt.key, len(events), sealed, head.Seq, journal.HashString(head.Hash))
	return nil
}

// cmdVoid records numbers as void, with a reason.
func cmdVoid(e *env, args []string) error {
	f := newFlags("void")
	f.stores()
	reason := f.fs.String("reason", "", "")
	actor := f.fs.String("actor", "", "")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	if *reason == "" {
		return usagef(f.cmd, "give the reason with --reason: an auditor reads it")
	}
	jt, pos, err := f.openJournal(e, pos, "")
	if err != nil {
		return err
	}
	defer jt.close()
	ctx := e.ctx
	if *actor != "" {
		ctx = sn.WithActor(ctx, *actor)
	}
	if len(pos) == 0 {
		return usagef(f.cmd, "give the numbers to void")
	}
	for _, n := range pos {
		if err := jt.gen.Void(ctx, n, *reason); err != nil {
			return err
		}
		fmt.Fprintf(e.out, "%s: void\n", n)
	}
	return nil
}

// cmdPrune replaces a counter's journal with one record that sums it up,
// for a closed period whose retention is over.
func cmdPrune(e *env, args []string) error {
	f := newFlags("prune")
	f.stores()
	f.call()
	key := f.fs.String("key", "", "")
	yes := f.fs.Bool("yes", false, "")
	keys := f.sealKeys()
	sealKey := f.fs.String("seal-key", "", "")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	if *sealKey == "" {
		return usagef(f.cmd, "give the private key that signs the prune with --seal-key (sn keygen makes one): an auditor checks the prune with its public key, and nobody without it can make one")
	}
	sk, err := readPrivateKey(*sealKey)
	if err != nil {
		return err
	}
	*keys = append(*keys, sk.Public().(ed25519.PublicKey))
	jt, events, head, err := f.readCounter(e, pos, *key)
	if err != nil {
		return err
	}
	defer jt.close()
	p := jt.j
	if err := journal.VerifySealed(jt.key, events, head, *keys); err != nil {
		fmt.Fprintf(e.stderr, "sn prune: the journal does not verify, and is kept as it is for the auditor: %v\n", err)
		return errUnexplained
	}
	if len(events) == 0 {
		fmt.Fprintf(e.out, "counter %q has no journal\n", jt.key)
		return nil
	}
	if rep := journal.Audit(jt.key, events, head, time.Now()); !rep.Explained() {
		fmt.Fprintf(e.stderr, "sn prune: the journal of counter %q does not explain every number (sn gaps says which): commit or void what is pending first; it is kept as it is\n", jt.key)
		return errUnexplained
	}
	sum, err := journal.PruneRecord(jt.key, events, time.Now(), sk)
	if err != nil {
		return err
	}
	if !*yes {
		fmt.Fprintf(e.out, "would replace %d records of counter %q with one, signed by key %s: %s\nthe anchor stays %d:%s; run again with --yes to prune\n",
			len(events), jt.key, journal.SealedBy(sum), journal.PruneSummary(sum), head.Seq, journal.HashString(head.Hash))
		return nil
	}
	done, err := p.Prune(e.ctx, jt.key, sum)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "pruned counter %q, signed by key %s: %s; anchor %d:%s\n", jt.key, journal.SealedBy(done), journal.PruneSummary(done), head.Seq, journal.HashString(head.Hash))
	return nil
}
