package sequence_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
)

func ExampleNewMemory() {
	ctx := context.Background()
	m := sequence.NewMemory()
	for range 3 {
		n, _ := m.Next(ctx, "order")
		fmt.Println(n)
	}
	n, _ := m.Next(ctx, "invoice") // every key has its own counter
	fmt.Println(n)
	// Output:
	// 1
	// 2
	// 3
	// 1
}

func ExampleNewSegment() {
	ctx := context.Background()
	// In production the Allocator is a store such as redisseq or boltseq.
	s, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: 100})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for range 3 {
		n, err := s.Next(ctx, "order")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(n)
	}
	ks, _ := s.KeyStats("order")
	fmt.Println("serving from", ks.Current, "issued", ks.Issued)
	// Output:
	// 1
	// 2
	// 3
	// serving from [1, 100] issued 3
}

func ExampleSegment_Bind() {
	ctx := context.Background()
	s, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	// Bind once, at start-up; the Handle skips the key lookup on every call.
	invoices := s.Bind("invoice")
	a, _ := invoices.Next(ctx)
	b, _ := invoices.Next(ctx)
	c, _ := s.Next(ctx, "invoice") // the same counter
	fmt.Println(a, b, c)
	// Output:
	// 1 2 3
}

func ExampleSegment_NextN() {
	ctx := context.Background()
	s, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: 4, MaxStep: 4})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	// Ten numbers across three blocks of four, appended to a reused buffer.
	buf := make([]int64, 0, 16)
	buf, err = s.NextN(ctx, "waybill", buf, 10)
	fmt.Println(buf, err)
	// Output:
	// [1 2 3 4 5 6 7 8 9 10] <nil>
}

func ExampleSegment_Floor() {
	ctx := context.Background()
	s, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	// Start above the last number the old system issued.
	if err := s.Floor(ctx, "order", 41_999); err != nil {
		fmt.Println(err)
		return
	}
	n, _ := s.Next(ctx, "order")
	fmt.Println(n)
	// Output:
	// 42000
}

func ExampleSegmentOptions_Validate() {
	err := sequence.SegmentOptions{Step: 100, MaxStep: 10, Prefetch: 1.5}.Validate()
	fmt.Println(err)
	// Output:
	// sequence: invalid argument: SegmentOptions.Step is 100, want at most MaxStep, 10
	// sequence: invalid argument: SegmentOptions.Prefetch is 1.5, want a share between 0 and 1, such as 0.2
}

func ExampleNewMemoryAllocator() {
	ctx := context.Background()
	a := sequence.NewMemoryAllocator()
	r1, _ := a.Allocate(ctx, "order", 100)
	r2, _ := a.Allocate(ctx, "order", 100)
	fmt.Println(r1, r2)
	// Output:
	// [1, 100] [101, 200]
}

func ExampleNewBalanced() {
	ctx := context.Background()
	// In production each Gen is a Segment over its own store: two
	// databases, say, so that numbering goes on while one is down.
	b, err := sequence.NewBalanced([]sequence.Gen{sequence.NewMemory(), sequence.NewMemory()}, sequence.BalancedOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 4 {
		n, _ := b.Next(ctx, "order")
		gen, value := b.Split(n)
		fmt.Println(n, "= value", value, "from Gen", gen)
	}
	// Output:
	// 3 = value 1 from Gen 1
	// 2 = value 1 from Gen 0
	// 5 = value 2 from Gen 1
	// 4 = value 2 from Gen 0
}

func ExampleNewQueued() {
	ctx := context.Background()
	// In production the Gen is one that cannot reserve blocks, such as a
	// strict Redis counter or a Balanced; Queued draws ahead of demand.
	q, err := sequence.NewQueued(sequence.NewMemory(), sequence.QueuedOptions{Lead: 100 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()
	for range 3 {
		n, _ := q.Next(ctx, "ticket")
		fmt.Println(n)
	}
	// Output:
	// 1
	// 2
	// 3
}
