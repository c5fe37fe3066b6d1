package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

const readmeTpl = "@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>"

// The README's headline template and the first example of sn help print
// the same numbers from two counters: on one store the second is refused,
// naming the first and when it was first used. The same template in
// another spelling, and widened, continue its counter.
func TestSeriesTwoSpellings(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	if got := ok(t, "next", "-t", readmeTpl, "-n", "3", "--store", store); got[2] != "SN-00000003-4" {
		t.Fatalf("first run: %q", got)
	}
	r := runSN(t, "", nil, "next", "-t", luhnTpl, "-n", "3", "--store", store)
	if r.code == 0 || r.stdout != "" {
		t.Fatalf("%s after %s: exit %d, printed %q: want a refusal and nothing printed", luhnTpl, readmeTpl, r.code, r.stdout)
	}
	for _, want := range []string{"collides with", readmeTpl, "in the store's catalog since", "SN-00000001-8"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r.stderr)
		}
	}
	// Another spelling, then a formatting-only edit: the counter goes on.
	if got := ok(t, "next", "-t", "@<ownerKey,value=SN>-@<seq,width=8>-@<checksum,algo=luhn>", "--store", store); got[0] != "SN-00000004-2" {
		t.Errorf("another spelling printed %q, want SN-00000004-2", got)
	}
	if got := ok(t, "next", "-t", "@<ownerKey, value=SN>-@<seq, width=10>-@<checksum, algo=luhn>", "--store", store); got[0] != "SN-0000000005-9" {
		t.Errorf("widened, it printed %q, want SN-0000000005-9", got)
	}
	// sn series check proves without recording.
	if r := runSN(t, "", nil, "series", "check", luhnTpl, "--store", store); r.code == 0 || !strings.Contains(r.stderr, "collides") {
		t.Errorf("series check %s: exit %d, stderr %q: want the refusal", luhnTpl, r.code, r.stderr)
	}
	if got := ok(t, "series", "check", "QJ@<seq, width=6>", "--store", store); !strings.HasPrefix(got[0], "ok:") {
		t.Errorf("series check of an unrelated template: %q", got)
	}
	list := ok(t, "series", "--store", store)
	if len(list) != 3 {
		t.Fatalf("sn series lists %d lines, want a header and 2 templates:\n%s", len(list), strings.Join(list, "\n"))
	}
	for i, want := range []*regexp.Regexp{
		regexp.MustCompile(`^[0-9a-f]{12} +- +` + regexp.QuoteMeta(readmeTpl) + ` +"SN" +5 +0\.00% +20\d\d-`),
		regexp.MustCompile(`^[0-9a-f]{12} +- +` + regexp.QuoteMeta("@<ownerKey, value=SN>-@<seq, width=10>-@<checksum, algo=luhn>") + ` +"SN" +5 +0\.00% +`),
	} {
		if !want.MatchString(list[i+1]) {
			t.Errorf("sn series line %d:\n%s\nwant it to match %s", i+1, list[i+1], want)
		}
	}
}

// A template edited in place keeps its counter key and would print an
// old number again: the edit is refused.
func TestSeriesEditedTemplate(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	ok(t, "next", "-t", "@<date, format=yyyyMMdd>@<seq, width=4>", "--at", "2012-03-04", "--store", store)
	r := runSN(t, "", nil, "next", "-t", "@<date, format=yyMMdd, window=2000>@<seq, width=6>", "--at", "2020-12-03", "--store", store)
	if r.code == 0 || !strings.Contains(r.stderr, "collides with") || !strings.Contains(r.stderr, "@<date, format=yyyyMMdd>@<seq, width=4>") {
		t.Fatalf("the edited template: exit %d, stdout %q, stderr %q: want a refusal naming the first", r.code, r.stdout, r.stderr)
	}
}

// codeExpr prints three capital letters: an expression only this test
// process has.
type codeExpr struct{}

func (codeExpr) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return append(dst, "ABC"...), nil
}
func (codeExpr) Order() expression.Order { return expression.Normal }
func (codeExpr) MaxLen() int             { return 3 }
func (codeExpr) Pattern() string         { return "[A-Z]{3}" }

// A template with an expression of the user's is proven against in a
// process that does not have the expression: sn, here.
func TestSeriesCustomExpression(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sn.db")
	store, err := boltseq.Open(path, boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seg := must(sequence.NewSegment(store, sequence.SegmentOptions{}))
	codes := sn.NewRegistry()
	codes.RegisterExpression("code", func(expression.Args) (expression.Expression, error) { return codeExpr{}, nil })
	g, err := sn.New("@<code>-@<seq, width=4>", sn.WithSequence("seq", seg), sn.WithName("codes"), sn.WithRegistry(codes))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := g.Next(context.Background()); err != nil || n != "ABC-0001" {
		t.Fatalf("Next = %q, %v", n, err)
	}
	seg.Close()
	store.Close()

	r := runSN(t, "", nil, "next", "-t", "XYZ-@<seq, width=4>", "--store", path)
	if r.code == 0 || !strings.Contains(r.stderr, `collides with "codes" (@<code>-@<seq, width=4>)`) {
		t.Fatalf("XYZ-@<seq, width=4> after @<code>-@<seq, width=4>: exit %d, stdout %q, stderr %q: want a refusal naming codes", r.code, r.stdout, r.stderr)
	}
	ok(t, "next", "-t", "XY-@<seq, width=4>", "--store", path) // two letters: code prints three
	if list := ok(t, "series", "--store", path); !strings.Contains(list[1], "codes") {
		t.Errorf("sn series:\n%s", strings.Join(list, "\n"))
	}
}

// Forgetting an entry says what it risks, and needs --yes.
func TestSeriesForget(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	ok(t, "next", "-t", readmeTpl, "--store", store)
	list := ok(t, "series", "--store", store)
	id := strings.Fields(list[1])[0]
	r := runSN(t, "", nil, "series", "forget", id, "--store", store)
	if r.code == 0 || !strings.Contains(r.stderr, "may print them again") || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("forget without --yes: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := ok(t, "series", "--store", store); len(got) != 2 {
		t.Fatalf("forget without --yes forgot: %q", got)
	}
	r = runSN(t, "", nil, "series", "forget", id, "--yes", "--store", store)
	if r.code != 0 || !strings.Contains(r.stdout, "forgot "+id) {
		t.Fatalf("forget --yes: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if got := ok(t, "series", "--store", store); len(got) != 1 || !strings.Contains(got[0], "empty") {
		t.Errorf("after forget, sn series says %q", got)
	}
	if r := runSN(t, "", nil, "series", "forget", "ffff", "--yes", "--store", store); r.code == 0 {
		t.Errorf("forgetting an unknown entry succeeded")
	}
}

// Four sn processes, acting as machines, enroll templates on one
// PostgreSQL ledger at the same moment, round after round: three that
// collide pairwise (one series spelt with a literal prefix, with an owner
// key, with an owner key that holds the dash) and one that collides with
// none. Of the three exactly one wins each round, the fourth always does,
// and no number is printed twice. The control runs the same on a bbolt
// file per process, where no catalog is shared: every template wins, and
// the numbers repeat.
func TestSeriesMachines(t *testing.T) {
	ledger := pgtest.Shared(t).NewDatabase(t)
	const rounds = 16
	run := func(t *testing.T, stores func(i int) []string) (wins [4]int, repeats int) {
		seen := map[string]bool{}
		for r := range rounds {
			p := fmt.Sprintf("R%d", r)
			tpls := []string{
				p + "-@<seq, width=6>",
				"@<ownerKey, value=" + p + ">-@<seq, width=6>",
				"@<ownerKey, value=" + p + "->@<seq, width=6>",
				"Q" + p + "-@<seq, width=6>",
			}
			var wg sync.WaitGroup
			res := make([]result, len(tpls))
			for i, tpl := range tpls {
				wg.Go(func() {
					res[i] = runSN(t, "", nil, append([]string{"next", "-t", tpl, "-n", "20"}, stores(i)...)...)
				})
			}
			wg.Wait()
			won := 0
			for i, x := range res {
				if x.code == 0 {
					wins[i]++
					if i < 3 {
						won++
					}
				} else if !strings.Contains(x.stderr, "collides with") {
					t.Fatalf("round %d: %s: exit %d, stderr %q", r, tpls[i], x.code, x.stderr)
				}
				for _, n := range lines(x.stdout) {
					if seen[n] {
						repeats++
					}
					seen[n] = true
				}
			}
			t.Logf("round %d: %d of the 3 colliding templates won", r, won)
		}
		return wins, repeats
	}
	t.Run("ledger", func(t *testing.T) {
		wins, repeats := run(t, func(int) []string { return []string{"--ledger", ledger} })
		if got := wins[0] + wins[1] + wins[2]; got != rounds {
			t.Errorf("the colliding templates won %d times in %d rounds (%v), want exactly once a round", got, rounds, wins)
		}
		if wins[3] != rounds {
			t.Errorf("the template that collides with none won %d of %d rounds", wins[3], rounds)
		}
		if repeats != 0 {
			t.Errorf("%d numbers printed twice", repeats)
		}
		t.Logf("wins %v, repeats: %d", wins, repeats)
	})
	t.Run("control", func(t *testing.T) {
		dir := t.TempDir()
		wins, repeats := run(t, func(i int) []string { return []string{"--store", filepath.Join(dir, fmt.Sprintf("%d.db", i))} })
		if repeats == 0 || wins[0]+wins[1]+wins[2] != 3*rounds {
			t.Errorf("control: wins %v and %d repeats: want every template to win and repeats seen", wins, repeats)
		}
		t.Logf("control: wins %v, repeats: %d", wins, repeats)
	})
}

// sn version and sn --version print the module's version and the Go
// release it was built with, and the revision when the build recorded it.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		got := ok(t, args...)
		if len(got) != 1 || !strings.HasPrefix(got[0], "sn ") || !strings.Contains(got[0], "("+runtime.Version()+")") {
			t.Errorf("sn %s: %q", args[0], got)
		}
	}
	if r := runSN(t, "", nil, "version", "x"); r.code != 2 {
		t.Errorf("sn version x: exit %d", r.code)
	}
}
