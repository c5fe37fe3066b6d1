package boltseq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

func Example() {
	dir, err := os.MkdirTemp("", "boltseq-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := boltseq.Open(filepath.Join(dir, "sn.db"), boltseq.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	ctx := context.Background()
	for _, n := range []int64{10, 5} {
		r, err := store.Allocate(ctx, "invoice", n)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r)
	}
	// Output:
	// [1, 10]
	// [11, 15]
}

func ExampleStore_Floor() {
	dir, err := os.MkdirTemp("", "boltseq-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := boltseq.Open(filepath.Join(dir, "sn.db"), boltseq.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// Continue above the last order number of the system being replaced.
	ctx := context.Background()
	if err := store.Floor(ctx, "order", 48_211); err != nil {
		log.Fatal(err)
	}
	r, err := store.Allocate(ctx, "order", 100)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r)
	// Output:
	// [48212, 48311]
}

func ExampleOpen_locked() {
	dir, err := os.MkdirTemp("", "boltseq-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sn.db")

	store, err := boltseq.Open(path, boltseq.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// A second Open of the same file, here or in another process, waits
	// LockTimeout for the first to let go, then gives up.
	_, err = boltseq.Open(path, boltseq.Options{LockTimeout: 100 * time.Millisecond})
	fmt.Println(errors.Is(err, boltseq.ErrLocked))
	// Output:
	// true
}

func Example_segment() {
	dir, err := os.MkdirTemp("", "boltseq-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := boltseq.Open(filepath.Join(dir, "sn.db"), boltseq.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// The Segment reserves 100 numbers per transaction and serves them from
	// memory; the store's mark runs ahead of the numbers issued.
	gen, err := sequence.NewSegment(store, sequence.SegmentOptions{Step: 100})
	if err != nil {
		panic(err)
	}
	defer gen.Close()
	ctx := context.Background()
	for range 3 {
		n, err := gen.Next(ctx, "ticket")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(n)
	}
	last, err := store.Last(ctx, "ticket")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reserved up to", last)
	// Output:
	// 1
	// 2
	// 3
	// reserved up to 100
}
