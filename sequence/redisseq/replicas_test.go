package redisseq_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// With Replicas set, a number is returned only once the replicas have the
// write that issued it.
func TestReplicasWait(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t)
	replica := redistest.StartReplica(t, master)
	rdb, rr := master.Client(t), replica.Client(t)

	ledger := sequence.NewMemoryAllocator()
	a := must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Replicas: 1, ReplicaTimeout: 2 * time.Second}))
	for range 5 {
		r, err := a.Allocate(ctx, "a", 10)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := rr.HGet(ctx, a.Key("a"), "cur").Int64(); err != nil || got != r.Last {
			t.Fatalf("replica holds %d, %v right after Allocate returned %v", got, err, r)
		}
	}
	if err := a.Floor(ctx, "a", 1000); err != nil {
		t.Fatal(err)
	}

	c := must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 7, Replicas: 1, ReplicaTimeout: 2 * time.Second}))
	for i := range 20 {
		if i%5 == 0 {
			// EVALSHA fails with NOSCRIPT inside the pipeline; EVAL follows.
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		n, err := c.Next(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if cur, err := rr.HGet(ctx, c.Key("c"), "cur").Int64(); err != nil || cur != n {
			t.Fatalf("replica's cur is %d, %v right after Next returned %d", cur, err, n)
		}
	}
	if err := c.Floor(ctx, "c", 100); err != nil {
		t.Fatal(err)
	}

	// Two replicas asked for, one there: nothing is returned.
	a2 := must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Replicas: 2, ReplicaTimeout: 20 * time.Millisecond}))
	_, err := a2.Allocate(ctx, "a", 10)
	checkErr(t, "Allocate with too few replicas", err, []error{sequence.ErrUnavailable}, "sn:{a}", "1 of the 2 replicas")
	c2 := must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Replicas: 2, ReplicaTimeout: 20 * time.Millisecond}))
	_, err = c2.Next(ctx, "c")
	checkErr(t, "Next with too few replicas", err, []error{sequence.ErrUnavailable}, "sn:{c}:range", "1 of the 2 replicas")
}

// On a cluster the WAIT goes to the master that holds the key (the cluster
// here has no replicas, so it reports 0 of 1 rather than a MOVED).
func TestReplicasCluster(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.SharedCluster(t).Client(t)
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Prefix: "repl:", Replicas: 1, ReplicaTimeout: 10 * time.Millisecond}))
	for _, key := range []string{"a", "b", "c", "d"} {
		_, err := c.Next(ctx, key)
		checkErr(t, "Next on a cluster without replicas", err, []error{sequence.ErrUnavailable}, "0 of the 1 replicas")
	}
	a := must(redisseq.NewAllocator(rdb, sequence.NewMemoryAllocator(), redisseq.AllocatorOptions{Prefix: "repl:", Replicas: 1, ReplicaTimeout: 10 * time.Millisecond}))
	_, err := a.Allocate(ctx, "a", 1)
	checkErr(t, "Allocate on a cluster without replicas", err, []error{sequence.ErrUnavailable}, "0 of the 1 replicas")
}

// A failover to the replica loses no number the Counter returned: the
// promoted replica goes on above all of them.
func TestReplicasFailover(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t)
	replica := redistest.StartReplica(t, master)
	durable := sequence.NewMemoryAllocator()
	c := must(redisseq.NewCounter(master.Client(t), durable, redisseq.CounterOptions{Step: 50, Replicas: 1, ReplicaTimeout: 2 * time.Second}))
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				n, err := c.Next(ctx, "k")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	master.Kill(t)
	rr := replica.Client(t)
	if err := rr.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	promoted := must(redisseq.NewCounter(rr, durable, redisseq.CounterOptions{Step: 50})) // no replica left
	after := nextN(t, promoted, "k", 100)
	if top := slices.Max(got); after[0] <= top {
		t.Fatalf("after failover the Counter issued %d, not above %d issued before", after[0], top)
	}
	all := append(slices.Clone(got), after...)
	slices.Sort(all)
	if len(slices.Compact(all)) != len(got)+len(after) {
		t.Fatal("numbers repeated across the failover")
	}
}

// A failover to the replica loses no block the Allocator over a ledger
// returned (with Replicas, every block waits for the replica): blocks after
// it are above all of them.
func TestReplicasFailoverAllocator(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t)
	replica := redistest.StartReplica(t, master)
	ledger := sequence.NewMemoryAllocator()
	a := must(redisseq.NewAllocator(master.Client(t), ledger, redisseq.AllocatorOptions{Chunk: 100, Replicas: 1, ReplicaTimeout: 2 * time.Second}))
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				r, err := a.Allocate(ctx, "k", 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for v := r.First; v <= r.Last; v++ {
					got = append(got, v)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	master.Kill(t)
	rr := replica.Client(t)
	if err := rr.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	promoted := must(redisseq.NewAllocator(rr, ledger, redisseq.AllocatorOptions{Chunk: 100}))
	var after []int64
	for range 100 {
		r, err := promoted.Allocate(ctx, "k", 3)
		if err != nil {
			t.Fatal(err)
		}
		for v := r.First; v <= r.Last; v++ {
			after = append(after, v)
		}
	}
	all := append(slices.Clone(got), after...)
	slices.Sort(all)
	if d := len(all) - len(slices.Compact(all)); d != 0 {
		t.Fatalf("%d numbers repeated across the failover", d)
	}
}
