package sqlseq_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// tiny is a layout with two worker ids, so that tests run out of them.
var tiny = snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}

func TestLeaserConformance(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			l := must(sqlseq.NewLeaser(newStore(t, b, b.open(t), sqlseq.Options{}), sqlseq.LeaserOptions{}))
			sequencetest.Run(t, func(t *testing.T) sequence.Gen {
				g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: l, TTL: 3 * time.Second}) // a fresh id waits one TTL: not the default 10s
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				return g
			})
		})
	}
}

// The promises of every Leaser (sequencetest.RunLeaser), on each
// database.
func TestLeaser(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel() // a database of its own on each server: the two side by side
			db := b.open(t)
			db.SetMaxOpenConns(32)
			s := newStore(t, b, db, sqlseq.Options{})
			sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
				return must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{Name: name}))
			}, 300*time.Millisecond)
		})
	}
}

// layoutOf returns a layout of workers worker ids (a power of two; -1 for
// a layout with a negative number of worker bits).
func layoutOf(workers int64) snowflake.Layout {
	bits := -1
	for w := int64(1); w <= workers; w <<= 1 {
		bits++
	}
	return snowflake.Layout{TimeBits: 41, WorkerBits: bits, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
}

// The database loses the records of two live holders, which hold both ids of
// the layout (an operator's DELETE, a restore of an older backup). A third
// process then leases one of their ids: it finds no bound and issues only
// after one TTL, by which time the holders have stopped (their renewals
// find no row): 0 repeats.
func TestLeaserDataLoss(t *testing.T) {
	const ttl = 400 * time.Millisecond
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			var mu sync.Mutex
			seen := map[int64]int{}
			repeats := 0
			issue := func(g *snowflake.Gen, who int, stop <-chan struct{}) error {
				for {
					select {
					case <-stop:
						return nil
					default:
					}
					ids, err := g.NextN(ctx, "", nil, 64)
					mu.Lock()
					for _, id := range ids {
						if w, ok := seen[id]; ok && w != who {
							repeats++
						}
						seen[id] = who
					}
					mu.Unlock()
					if err != nil {
						return err
					}
				}
			}
			newGen := func() *snowflake.Gen {
				g, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{})), TTL: ttl})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				return g
			}
			holders := []*snowflake.Gen{newGen(), newGen()}
			stop := make(chan struct{})
			errs := make(chan error, 3)
			var wg sync.WaitGroup
			for i, h := range holders {
				wg.Go(func() { errs <- issue(h, i, stop) })
			}
			time.Sleep(2 * ttl)
			if _, err := db.ExecContext(ctx, "DELETE FROM sn_ledger_kv WHERE k >= 'wk/' AND k < 'wk0'"); err != nil {
				t.Fatal(err)
			}
			third := newGen()
			wg.Go(func() { errs <- issue(third, 2, stop) })
			time.Sleep(3 * ttl)
			close(stop)
			wg.Wait()
			close(errs)
			stopped := 0
			for err := range errs {
				switch {
				case errors.Is(err, sequence.ErrLeaseLost):
					stopped++
				case err != nil:
					t.Errorf("a holder: %v", err)
				}
			}
			t.Logf("%d ids, %d holders stopped on a lost lease, %d repeats", len(seen), stopped, repeats)
			// The two holders whose lease the store lost stop; the third
			// may stop too, when a renewal times out on a loaded machine:
			// stopping is safe, a repeat is not.
			if repeats != 0 || stopped < 2 {
				t.Errorf("%d repeats, %d of the 2 holders whose lease was lost stopped", repeats, stopped)
			}
		})
	}
}

// A Gen cut off from the database (its *sql.DB closed) stops issuing;
// the one that takes its id issues above it
// (sequencetest.RunLeaserTakeover).
func TestLeaserTakeover(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			db, dsn := be.openDSN(t)
			s := newStore(t, be, db, sqlseq.Options{})
			sequencetest.RunLeaserTakeover(t, func(t *testing.T, name string) snowflake.Leaser {
				return must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{Name: name}))
			}, func(t *testing.T, name string) (snowflake.Leaser, func()) {
				cut, err := sql.Open(be.driver, dsn)
				if err != nil {
					t.Fatal(err)
				}
				return must(sqlseq.NewLeaser(newStore(t, be, cut, sqlseq.Options{}), sqlseq.LeaserOptions{Name: name})), func() { cut.Close() }
			}, 400*time.Millisecond)
		})
	}
}
