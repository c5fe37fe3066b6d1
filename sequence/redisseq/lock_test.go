package redisseq_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// The reply to the SET that took the lock is lost and the client resends
// it: the resent SET finds the Lock's own token. TryLock must report the
// lock taken, not leave it held by nobody who knows it until it expires.
func TestLockLostSetReply(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := must(redisseq.NewLock(dropClient(t, srv, "lostlock", func() {}), "lostlock", 10*time.Second))
	ok, err := a.TryLock(ctx)
	if err != nil || !ok {
		t.Fatalf("TryLock with a lost reply = %v, %v; want true", ok, err)
	}
	if ok, _ := a.TryLock(ctx); ok {
		t.Error("TryLock again while holding = true; a Lock is not reentrant")
	}
	b := must(redisseq.NewLock(srv.Client(t), "lostlock", 10*time.Second))
	if ok, _ := b.TryLock(ctx); ok {
		t.Error("another Lock took a held lock")
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryLock(ctx); !ok || err != nil {
		t.Fatalf("TryLock after Unlock = %v, %v", ok, err)
	}
}

func TestLockMutualExclusion(t *testing.T) {
	srv := redistest.Start(t)
	const workers, rounds = 8, 50
	var inside, entries atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ctx := context.Background()
			l := must(redisseq.NewLock(srv.Client(t), "mutex", 10*time.Second))
			for range rounds {
				if err := l.Lock(ctx); err != nil {
					t.Error(err)
					return
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders inside the lock", n)
				}
				entries.Add(1)
				inside.Add(-1)
				if err := l.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if entries.Load() != workers*rounds {
		t.Fatalf("%d entries, want %d", entries.Load(), workers*rounds)
	}
}

func TestLockReleaseOnlyByOwner(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	a := must(redisseq.NewLock(rdb, "L", time.Minute))
	b := must(redisseq.NewLock(rdb, "L", time.Minute))
	checkErr(t, "Unlock of a lock never taken", a.Unlock(ctx), []error{redisseq.ErrNotHeld}, "L")
	if ok, err := a.TryLock(ctx); !ok || err != nil {
		t.Fatalf("a.TryLock = %v, %v", ok, err)
	}
	if ok, err := a.TryLock(ctx); ok || err != nil {
		t.Fatalf("a.TryLock while a holds it = %v, %v; want false (not reentrant)", ok, err)
	}
	if ok, err := b.TryLock(ctx); ok || err != nil {
		t.Fatalf("b.TryLock while a holds it = %v, %v; want false", ok, err)
	}
	checkErr(t, "b.Unlock of a's lock", b.Unlock(ctx), []error{redisseq.ErrNotHeld}, "unlock key L")
	checkErr(t, "b.Refresh of a's lock", b.Refresh(ctx), []error{redisseq.ErrNotHeld}, "key L")
	if n, _ := rdb.Exists(ctx, "L").Result(); n != 1 {
		t.Fatal("b released a's lock")
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	checkErr(t, "a.Unlock twice", a.Unlock(ctx), []error{redisseq.ErrNotHeld})
	if ok, err := b.TryLock(ctx); !ok || err != nil {
		t.Fatalf("b.TryLock after a.Unlock = %v, %v", ok, err)
	}
}

func TestLockExpiry(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	a := must(redisseq.NewLock(rdb, "L", 30*time.Millisecond))
	b := must(redisseq.NewLock(rdb, "L", time.Minute))
	if ok, err := a.TryLock(ctx); !ok || err != nil {
		t.Fatalf("a.TryLock = %v, %v", ok, err)
	}
	// b gets the lock once a's expires, without a releasing it.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Lock(wait); err != nil {
		t.Fatalf("b.Lock after a's lock expired: %v", err)
	}
	checkErr(t, "a.Unlock after expiry", a.Unlock(ctx), []error{redisseq.ErrNotHeld})
	checkErr(t, "a.Refresh after expiry", a.Refresh(ctx), []error{redisseq.ErrNotHeld})
	if n, _ := rdb.Exists(ctx, "L").Result(); n != 1 {
		t.Fatal("a's late Unlock released b's lock")
	}
	if pttl, _ := rdb.PTTL(ctx, "L").Result(); pttl <= 30*time.Millisecond {
		t.Fatalf("b's lock has PTTL %v, want its own ttl of a minute", pttl)
	}
}

func TestLockRefresh(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	a := must(redisseq.NewLock(rdb, "L", time.Hour))
	if ok, err := a.TryLock(ctx); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if err := rdb.PExpire(ctx, "L", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if pttl, _ := rdb.PTTL(ctx, "L").Result(); pttl <= time.Minute {
		t.Fatalf("PTTL after Refresh = %v, want about an hour", pttl)
	}
}

func TestLockContext(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	holder := must(redisseq.NewLock(rdb, "L", time.Hour))
	if ok, err := holder.TryLock(context.Background()); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := must(redisseq.NewLock(rdb, "L", time.Hour)).Lock(ctx)
	checkErr(t, "Lock of a held lock until the deadline", err, []error{context.DeadlineExceeded}, "lock key L")

	srv.Kill(t)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	_, err = holder.TryLock(ctx2)
	checkErr(t, "TryLock on a dead server", err, []error{sequence.ErrUnavailable}, "lock key L")
}
