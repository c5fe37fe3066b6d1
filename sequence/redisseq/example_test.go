package redisseq_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/redisseq"
)

// The examples need a Redis at localhost:6379, so they are compiled but not
// run (they have no Output comment). The tests run the same code against
// servers they start themselves.

// A Segment over the Redis Allocator: one INCRBY per block of 1000, every
// other number from memory. Numbers are unique across processes, and
// increase within each process.
func ExampleNewAllocator() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"localhost:6379"}})
	defer rdb.Close()

	alloc, err := redisseq.NewAllocator(rdb, sequence.NewMemoryAllocator(), redisseq.AllocatorOptions{})
	if err != nil {
		panic(err)
	}
	seq, err := sequence.NewSegment(alloc, sequence.SegmentOptions{Step: 1000})
	if err != nil {
		panic(err)
	}
	defer seq.Close()

	n, err := seq.Next(context.Background(), "invoice")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("INV-%08d\n", n)
}

// A strict counter: first come, first served across every process sharing
// the Redis, with ranges of 1000 reserved in a local bbolt file, so that a
// Redis that loses its data costs a gap, never a repeat.
func ExampleNewCounter() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"localhost:6379"}})
	defer rdb.Close()
	durable, err := boltseq.Open("/var/lib/myapp/sequences.db", boltseq.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer durable.Close()

	c, err := redisseq.NewCounter(rdb, durable, redisseq.CounterOptions{Step: 1000})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n, err := c.Next(ctx, "ticket")
	if err != nil {
		log.Fatal(err) // wraps sequence.ErrUnavailable when Redis is down
	}
	fmt.Println("ticket", n)

	// Ten numbers in one round trip.
	batch, err := c.NextN(ctx, "ticket", nil, 10)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(batch)
}

// Migrating from an older system: start above the last number it issued.
func ExampleCounter_Floor() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()
	c, err := redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{})
	if err != nil {
		panic(err)
	}
	if err := c.Floor(context.Background(), "order", 2_000_000); err != nil {
		log.Fatal(err)
	}
	n, _ := c.Next(context.Background(), "order")
	fmt.Println(n > 2_000_000)
}

// A Lock on its own: one contender per NewLock.
func ExampleLock() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()
	ctx := context.Background()

	l, err := redisseq.NewLock(rdb, "myapp:nightly-report", 30*time.Second)
	if err != nil {
		panic(err)
	}
	if err := l.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	defer l.Unlock(ctx)
	// ... work that should not run twice at once, and stays correct if the
	// lock expires while it runs ...
}
