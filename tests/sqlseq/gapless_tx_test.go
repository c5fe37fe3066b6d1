package sqlseq_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/sqlseq"
)

// claimsOutside is Gapless with its idempotency claims kept in the
// Store's own transactions, outside the caller's: what every release
// before this one did. The control of TestGaplessIdempotencyRollsBack.
type claimsOutside struct {
	*sqlseq.Gapless
	s *sqlseq.Store
}

func (c claimsOutside) Records() record.Store { return c.s.Records() }

// A draw with an idempotency key in a transaction that rolls back: the
// number goes to the next invoice, and the key's record must go with it,
// or a retry of the key is answered with that invoice's number. Twenty
// keys, each drawn in a transaction rolled back, then a plain draw
// committed, then the key retried and committed: no number is committed
// for two documents. The control keeps the claims outside the caller's
// transaction, as before, and repeats every one.
func TestGaplessIdempotencyRollsBack(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			run := func(t *testing.T, prefix string, seq sequence.Gen) (repeats int) {
				g := sn.MustNew(prefix+`-@<seq, width=6>`, sn.WithSequence("seq", seq))
				committed := map[string]int{}
				draw := func(key string, commit bool) string {
					t.Helper()
					tx, err := db.BeginTx(ctx, nil)
					if err != nil {
						t.Fatal(err)
					}
					nums, err := g.Issue(sqlseq.WithTx(ctx, tx), sn.Request{IdempotencyKey: key})
					if err != nil {
						tx.Rollback()
						t.Fatalf("key %q: %v", key, err)
					}
					if !commit {
						tx.Rollback()
						return nums[0]
					}
					if err := tx.Commit(); err != nil {
						t.Fatal(err)
					}
					committed[nums[0]]++
					if committed[nums[0]] > 1 {
						repeats++
					}
					return nums[0]
				}
				for i := range 20 {
					key := fmt.Sprintf("invoice-%d", i)
					draw(key, false)
					draw("", true)
					draw(key, true)
				}
				return repeats
			}
			if r := run(t, "INV", s.Gapless()); r != 0 {
				t.Errorf("%d numbers committed for two documents", r)
			}
			r := run(t, "CTL", claimsOutside{s.Gapless(), s})
			if r == 0 {
				t.Fatal("control: claims outside the transaction repeated nothing: the test cannot tell")
			}
			t.Logf("0 repeats; the control, claims outside the transaction, repeats %d of 20", r)
		})
	}
}

// heldNumber reads the counter of "INV-2026-000007".
func heldNumber(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s[strings.LastIndexByte(s, '-')+1:], 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// sn.Generator.Hold, Commit and VoidHold over Gapless, with a reset per
// year: a hold is a number of the template; a retried hold with its key
// is the same hold, with its deadline; a commit or a void of a number not
// held is refused, and a void of a held one is recorded with its actor;
// Transact commits a request's numbers together, or none.
func TestGeneratorHold(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			g, err := sn.New(`INV-@<date, format=yyyy>-@<seq, width=6, reset=year>`, sn.WithSequence("seq", s.Gapless()), sn.WithProfile("gapless"))
			if err != nil {
				t.Fatal(err)
			}
			if !g.Transactional() {
				t.Fatal("a Generator over Gapless is not Transactional")
			}
			h1, err := g.Hold(ctx, sn.Request{At: at, IdempotencyKey: "draft-1"}, time.Hour)
			if err != nil || h1.Number != "INV-2026-000001" || time.Until(h1.Deadline) < 50*time.Minute {
				t.Fatalf("Hold: %+v %v", h1, err)
			}
			again, err := g.Hold(ctx, sn.Request{At: at, IdempotencyKey: "draft-1"}, time.Hour)
			if err != nil || again.Number != h1.Number || !again.Deadline.Equal(h1.Deadline) {
				t.Errorf("the hold retried with its key: %+v %v, want %+v", again, err, h1)
			}
			if _, err := g.Issue(ctx, sn.Request{At: at}); !errors.Is(err, sqlseq.ErrNoTx) {
				t.Errorf("a draw without a transaction: %v, want ErrNoTx", err)
			}
			// In a transaction, the key of a hold is another request's.
			if err := g.Transact(ctx, func(ctx context.Context) error {
				nums, err := g.Issue(ctx, sn.Request{At: at, IdempotencyKey: "draft-1"})
				if err == nil && nums[0] == h1.Number {
					return fmt.Errorf("the key of a hold answered a draw with the held number %s", nums[0])
				}
				return err
			}); err != nil {
				t.Error(err)
			}
			if err := g.Commit(ctx, h1.Number); err != nil {
				t.Fatal(err)
			}
			if err := g.Commit(ctx, h1.Number); !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Errorf("a second Commit: %v", err)
			}
			if err := g.VoidHold(ctx, h1.Number, "changed my mind"); !errors.Is(err, sqlseq.ErrNotHeld) {
				t.Errorf("VoidHold of a committed number: %v, want ErrNotHeld", err)
			}
			h3, err := g.Hold(ctx, sn.Request{At: at}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.VoidHold(sn.WithActor(ctx, "alice"), h3.Number, "draft abandoned"); err != nil {
				t.Fatal(err)
			}
			if err := g.Commit(ctx, h3.Number); !errors.Is(err, sqlseq.ErrNotHeld) {
				t.Errorf("Commit of a voided hold: %v", err)
			}
			// Transact: three numbers, rolled back by an error, come
			// again to the next request.
			boom := errors.New("the invoice could not be written")
			var lost []string
			err = g.Transact(ctx, func(ctx context.Context) error {
				lost, err = g.Issue(ctx, sn.Request{N: 3, At: at})
				if err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) || len(lost) != 3 {
				t.Fatalf("Transact: %v %v", lost, err)
			}
			var got []string
			if err := g.Transact(ctx, func(ctx context.Context) error {
				got, err = g.Issue(ctx, sn.Request{N: 3, At: at})
				return err
			}); err != nil || strings.Join(got, ",") != strings.Join(lost, ",") {
				t.Errorf("after a rollback: %v %v, want %v again", got, err, lost)
			}
			if _, err := g.Hold(ctx, sn.Request{N: 2, At: at}, time.Hour); !errors.Is(err, sn.ErrTooMany) {
				t.Errorf("a hold of two numbers: %v", err)
			}
			if _, err := g.Hold(ctx, sn.Request{At: at}, 0); !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Errorf("a hold for no time: %v", err)
			}
			key, _ := g.Key(sn.Request{At: at})
			events, head, err := journal.ReadJournal(ctx, s.Gapless(), key)
			if err != nil {
				t.Fatal(err)
			}
			r := journal.Audit(key, events, head, time.Now())
			st := states(r)
			if !r.Explained() || head.Mark != 6 || st[journal.Issued] != 5 || st[journal.Void] != 1 {
				t.Errorf("mark %d, %v, %v", head.Mark, st, r.Problems)
			}
			var actor string
			for _, e := range events {
				if e.Kind == journal.Voided {
					actor = e.Actor
				}
			}
			if actor != "alice" {
				t.Errorf("the void's actor: %q, want alice", actor)
			}

			seg, _ := sequence.NewSegment(s, sequence.SegmentOptions{})
			defer seg.Close()
			blocks := sn.MustNew(`ORD-@<seq, width=6>`, sn.WithSequence("seq", seg))
			if _, err := blocks.Hold(ctx, sn.Request{}, time.Hour); !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("a hold of a Segment's number: %v, want ErrUnsupported", err)
			}
			if blocks.Transactional() {
				t.Error("a Generator over a Segment is Transactional")
			}
		})
	}
}

// Holds from many goroutines through sn.Generator, each with a key it
// retries, then committed or voided: the numbers are 1..N, each held
// once, and the journal explains every one.
func TestGeneratorHoldConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			g := sn.MustNew(`INV-@<seq, width=6>`, sn.WithSequence("seq", s.Gapless()), sn.WithProfile("gapless"))
			var mu sync.Mutex
			held := map[int64]string{}
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 8 {
						key := fmt.Sprintf("w%d-%d", w, i)
						h, err := g.Hold(ctx, sn.Request{IdempotencyKey: key}, time.Hour)
						if err == nil {
							var again sn.Held
							again, err = g.Hold(ctx, sn.Request{IdempotencyKey: key}, time.Hour)
							if err == nil && again.Number != h.Number {
								err = fmt.Errorf("key %s held %s, then %s", key, h.Number, again.Number)
							}
						}
						if err != nil {
							t.Error(err)
							return
						}
						n := heldNumber(t, h.Number)
						mu.Lock()
						if k, dup := held[n]; dup {
							t.Errorf("%d held for %s and %s", n, k, key)
						}
						held[n] = key
						mu.Unlock()
						if (w+i)%4 == 0 {
							err = g.VoidHold(ctx, h.Number, "abandoned")
						} else {
							err = g.Commit(ctx, h.Number)
						}
						if err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			for n := int64(1); n <= 64; n++ {
				if _, ok := held[n]; !ok {
					t.Errorf("%d was never held", n)
				}
			}
			key, _ := g.Key(sn.Request{})
			events, head, err := journal.ReadJournal(ctx, s.Gapless(), key)
			if err != nil {
				t.Fatal(err)
			}
			r := journal.Audit(key, events, head, time.Now())
			st := states(r)
			if !r.Explained() || head.Mark != 64 || st[journal.Issued] != 48 || st[journal.Void] != 16 {
				t.Errorf("mark %d, %v, %v", head.Mark, st, r.Problems)
			}
		})
	}
}

// A hold in a transaction that drew the key's number already, through
// another Store of the same database (which has not seen the key): the
// hold's row is looked for outside the transaction, and found, without
// waiting for the transaction's lock on it, which would never end.
func TestGaplessHoldAfterDrawInOneTx(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			a := newStore(t, b, db, sqlseq.Options{})
			other := newStore(t, b, db, sqlseq.Options{})
			ga := sn.MustNew(`INV-@<seq, width=6>`, sn.WithSequence("seq", a.Gapless()))
			gb := sn.MustNew(`INV-@<seq, width=6>`, sn.WithSequence("seq", other.Gapless()))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var held sn.Held
			err := ga.Transact(ctx, func(ctx context.Context) error {
				if _, err := ga.Next(ctx); err != nil {
					return err
				}
				var err error
				held, err = gb.Hold(ctx, sn.Request{}, time.Hour)
				return err
			})
			if err != nil || held.Number != "INV-000002" {
				t.Fatalf("a hold after a draw in one transaction: %+v %v", held, err)
			}
		})
	}
}

// A gapless series moved from another system continues above its last
// number there: a floor (a config template's floor: calls it), which the
// journal explains. The first invoice is floor+1, and the audit explains
// every number below it.
func TestGaplessFloor(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			g := sn.MustNew(`INV-@<seq, width=6>`, sn.WithSequence("seq", s.Gapless()), sn.WithProfile("gapless"))
			if err := g.Floor(ctx, 4711); err != nil {
				t.Fatalf("Floor: %v", err)
			}
			var got []string
			if err := g.Transact(ctx, func(ctx context.Context) error {
				var err error
				got, err = g.Issue(ctx, sn.Request{N: 2})
				return err
			}); err != nil || strings.Join(got, ",") != "INV-004712,INV-004713" {
				t.Fatalf("after the floor: %v %v", got, err)
			}
			key, _ := g.Key(sn.Request{})
			events, head, err := journal.ReadJournal(ctx, s.Gapless(), key)
			if err != nil {
				t.Fatal(err)
			}
			r := journal.Audit(key, events, head, time.Now())
			if !r.Explained() || states(r)[journal.Issued] != 2 {
				t.Errorf("the audit: %v %v", states(r), r.Problems)
			}
		})
	}
}
