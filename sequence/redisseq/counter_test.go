package redisseq_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// named gives an Allocator the identity id: a store that lost its data
// but is still the same store.
type named struct {
	*sequence.MemoryAllocator
	id string
}

func (n named) StoreID(context.Context) (string, error) { return n.id, nil }

// allocOnly hides every optional interface of an Allocator (Floorer,
// Identifier).
type allocOnly struct{ a sequence.Allocator }

func (o allocOnly) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	return o.a.Allocate(ctx, key, n)
}

// failingAlloc always fails with err.
type failingAlloc struct{ err error }

func (f failingAlloc) Allocate(context.Context, string, int64) (sequence.Range, error) {
	return sequence.Range{}, f.err
}

// rangeOf returns the range hash of key as cur/max/left.
func rangeOf(t *testing.T, rdb redis.UniversalClient, c *redisseq.Counter, key string) map[string]string {
	t.Helper()
	m, err := rdb.HGetAll(context.Background(), c.Key(key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	delete(m, "ledger") // see TestCounterRanges
	if b, ok := m["boot"]; ok && b != runID(t, rdb) {
		t.Errorf("key %s: a range of boot %s, not the server's %s", c.Key(key), b, runID(t, rdb))
	}
	delete(m, "boot")
	delete(m, "floor") // the highest floor raised, see TestCounterFloor
	return m
}

// runID returns the boot a range the server installs carries: its
// run_id and its replication ID.
func runID(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	return redistest.InfoField(t, rdb, "server", "run_id") + ":" + redistest.InfoField(t, rdb, "replication", "master_replid")
}

func nextN(t *testing.T, g sequence.Gen, key string, n int) []int64 {
	t.Helper()
	var got []int64
	for range n {
		v, err := g.Next(context.Background(), key)
		if err != nil {
			t.Fatalf("Next(%q) after %v: %v", key, got, err)
		}
		got = append(got, v)
	}
	return got
}

func seq(first, last int64) []int64 {
	var s []int64
	for v := first; v <= last; v++ {
		s = append(s, v)
	}
	return s
}

func TestCounterRanges(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	durable := sequence.NewMemoryAllocator()
	c := must(redisseq.NewCounter(rdb, durable, redisseq.CounterOptions{Step: 4}))
	if got, want := nextN(t, c, "k", 10), seq(1, 10); !slices.Equal(got, want) {
		t.Fatalf("numbers = %v, want %v", got, want)
	}
	// 10 numbers from ranges of 4: three refills, the last range half
	// used, recorded with the identity of the ledger it came from.
	id, _ := durable.StoreID(context.Background())
	want := map[string]string{"cur": "10", "max": "12", "ledger": id, "boot": runID(t, rdb)}
	if got := rdb.HGetAll(context.Background(), c.Key("k")).Val(); !mapsEqual(got, want) {
		t.Fatalf("range hash = %v, want %v", got, want)
	}
	if r, _ := durable.Allocate(context.Background(), "k", 1); r.First != 13 {
		t.Fatalf("durable allocator handed out up to %d, want 12", r.First-1)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Calls through different Counters (different processes, in effect) are
// served first come, first served.
func TestCounterStrictAcrossCounters(t *testing.T) {
	srv := redistest.Start(t)
	durable := sequence.NewMemoryAllocator()
	var counters []*redisseq.Counter
	for range 3 {
		counters = append(counters, must(redisseq.NewCounter(srv.Client(t), durable, redisseq.CounterOptions{Step: 5})))
	}
	var last int64
	for i := range 100 {
		n, err := counters[i%3].Next(context.Background(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if n != last+1 {
			t.Fatalf("call %d got %d after %d; want %d", i, n, last, last+1)
		}
		last = n
	}
}

// Redis losing its data costs a gap, never a repeat.
func TestCounterRedisDataLoss(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 100}))
	before := nextN(t, c, "k", 30)
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	after := nextN(t, c, "k", 5)
	if want := seq(101, 105); !slices.Equal(after, want) {
		t.Fatalf("after FLUSHALL: %v, want %v (the next range; %v were issued before)", after, want, before)
	}
}

// A durable allocator that went back (lost data) is raised above the range
// in Redis when it can be floored, and an error otherwise.
func TestCounterDurableRegressed(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	c1 := must(redisseq.NewCounter(rdb, named{sequence.NewMemoryAllocator(), "L"}, redisseq.CounterOptions{Step: 10}))
	nextN(t, c1, "k", 10) // the range [1, 10] is spent

	// The same store, having lost its data, would hand out [1, 10] again.
	fresh := named{sequence.NewMemoryAllocator(), "L"}
	c2 := must(redisseq.NewCounter(rdb, fresh, redisseq.CounterOptions{Step: 10}))
	if got, want := nextN(t, c2, "k", 3), seq(11, 13); !slices.Equal(got, want) {
		t.Fatalf("with a durable store behind Redis: %v, want %v", got, want)
	}

	// Another store is refused outright: it is not the record of what
	// was issued.
	other := must(redisseq.NewCounter(rdb, named{sequence.NewMemoryAllocator(), "M"}, redisseq.CounterOptions{Step: 10}))
	_, err := other.Next(ctx, "k")
	checkErr(t, "Next with another ledger", err, []error{redisseq.ErrOtherLedger}, "sn:{k}:range", `ledger "L"`, `is "M"`)

	rdb.HSet(ctx, c1.Key("j"), "cur", "50", "max", "50")
	c3 := must(redisseq.NewCounter(rdb, allocOnly{sequence.NewMemoryAllocator()}, redisseq.CounterOptions{Step: 10}))
	_, err = c3.Next(ctx, "j")
	checkErr(t, "Next with a durable store behind Redis that cannot be floored", err,
		[]error{sequence.ErrRegressed}, "sn:{j}:range", "[1, 10]", "50")
	if got := rangeOf(t, rdb, c3, "j"); got["cur"] != "50" || got["max"] != "50" {
		t.Fatalf("a refused range was installed: %v", got)
	}
}

func TestCounterDurableErrors(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	cause := errors.New("disk on fire")
	tests := []struct {
		name  string
		err   error
		kinds []error
	}{
		{"plain", cause, []error{sequence.ErrUnavailable, cause}},
		{"unavailable", fmt.Errorf("%w: %w", sequence.ErrUnavailable, cause), []error{sequence.ErrUnavailable, cause}},
		{"exhausted", sequence.ErrExhausted, []error{sequence.ErrExhausted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := must(redisseq.NewCounter(rdb, failingAlloc{tt.err}, redisseq.CounterOptions{}))
			_, err := c.Next(ctx, tt.name)
			checkErr(t, "Next", err, tt.kinds, c.Key(tt.name), "redisseq_test.failingAlloc")
			if tt.name != "exhausted" && errors.Is(err, sequence.ErrExhausted) {
				t.Errorf("error %q wraps ErrExhausted", err)
			}
		})
	}
}

func TestCounterFloor(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	tests := []struct {
		name    string
		issued  int   // numbers issued before the floor, with Step 100
		floor   int64 // then Floor(floor)
		want    int64 // the next number
		wantMap map[string]string
	}{
		{"unused key", 0, 1000, 1001, map[string]string{"cur": "1001", "max": "1100"}},
		{"inside the range", 10, 50, 51, map[string]string{"cur": "51", "max": "100"}},
		{"at the range's end", 10, 100, 101, map[string]string{"cur": "101", "max": "200"}},
		{"above the range", 10, 150, 151, map[string]string{"cur": "151", "max": "250"}},
		{"below issued", 10, 5, 11, map[string]string{"cur": "11", "max": "100"}},
		{"zero", 10, 0, 11, map[string]string{"cur": "11", "max": "100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 100}))
			nextN(t, c, tt.name, tt.issued)
			if err := c.Floor(ctx, tt.name, tt.floor); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Next(ctx, tt.name); err != nil || n != tt.want {
				t.Fatalf("Next after Floor(%d) = %d, %v; want %d", tt.floor, n, err, tt.want)
			}
			if got := rangeOf(t, rdb, c, tt.name); !mapsEqual(got, tt.wantMap) {
				t.Fatalf("range hash = %v, want %v", got, tt.wantMap)
			}
		})
	}

	c := must(redisseq.NewCounter(rdb, allocOnly{sequence.NewMemoryAllocator()}, redisseq.CounterOptions{}))
	err := c.Floor(ctx, "k", 10)
	checkErr(t, "Floor with a durable store that cannot floor", err, []error{errors.ErrUnsupported}, "sn:{k}:range")
	checkErr(t, "Floor(-1)", c.Floor(ctx, "k", -1), []error{sequence.ErrInvalidArgument}, "sn:{k}:range")
}

// A range installed from a durable store that had not seen a floor yet must
// not issue below the floor: the floor leaves a spent range at its height,
// and the install script refuses to go below it.
func TestCounterFloorRefusesLowerRange(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	durable := sequence.NewMemoryAllocator()
	c := must(redisseq.NewCounter(rdb, durable, redisseq.CounterOptions{Step: 10}))
	if err := c.Floor(ctx, "k", 500); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cur": "500", "max": "500"}
	if got := rangeOf(t, rdb, c, "k"); !mapsEqual(got, want) {
		t.Fatalf("range hash after Floor on a missing range = %v, want %v", got, want)
	}
	// Another Counter whose durable store never heard of the floor.
	other := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 10}))
	if n, err := other.Next(ctx, "k"); err != nil || n <= 500 {
		t.Fatalf("Next from a Counter with a lagging durable store = %d, %v; want > 500", n, err)
	}
}

// Counters are exact above 2^53 (where Lua numbers are not) and end with
// ErrExhausted at MaxInt64 without corrupting the range.
func TestCounterBigNumbers(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 1000}))

	// The take script computes in Lua while max has at most 15 digits, and
	// with strings and HINCRBY above: with ranges of 10, [10^15-14,
	// 10^15-5] is served one way and [10^15-4, 10^15+5] the other.
	const e15 = 1_000_000_000_000_000
	c10 := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 10}))
	for _, key := range []string{"k15", "k15b"} {
		if err := c10.Floor(ctx, key, e15-15); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := nextN(t, c10, "k15", 20), seq(e15-14, e15+5); !slices.Equal(got, want) {
		t.Fatalf("across 10^15 one by one: %v, want %v", got, want)
	}
	if got, err := c10.NextN(ctx, "k15b", []int64{}, 20); err != nil || !slices.Equal(got, seq(e15-14, e15+5)) {
		t.Fatalf("across 10^15 with NextN(20): %v, %v", got, err)
	}

	const p53 = 1 << 53
	if err := c.Floor(ctx, "k53", p53-10); err != nil {
		t.Fatal(err)
	}
	if got, want := nextN(t, c, "k53", 3), seq(p53-9, p53-7); !slices.Equal(got, want) {
		t.Fatalf("near 2^53: %v, want %v", got, want)
	}
	if err := c.Floor(ctx, "k53", p53+1); err != nil { // inside the range [2^53-9, 2^53+990]
		t.Fatal(err)
	}
	want := map[string]string{"cur": fmt.Sprint(p53 + 1), "max": fmt.Sprint(p53 + 990)}
	if got := rangeOf(t, rdb, c, "k53"); !mapsEqual(got, want) {
		t.Fatalf("range hash after Floor(2^53+1) = %v, want %v", got, want)
	}
	got, err := c.NextN(ctx, "k53", nil, 990)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[:989], seq(p53+2, p53+990)) || got[989] != p53+991 {
		t.Fatalf("NextN(990) across a refill near 2^53 = [%d ... %d], want [%d ... %d]", got[0], got[989], int64(p53+2), int64(p53+991))
	}

	const p62 = 1 << 62
	if err := c.Floor(ctx, "k62", p62+1); err != nil {
		t.Fatal(err)
	}
	if got, want := nextN(t, c, "k62", 3), seq(p62+2, p62+4); !slices.Equal(got, want) {
		t.Fatalf("near 2^62: %v, want %v", got, want)
	}

	const top = math.MaxInt64
	if err := c.Floor(ctx, "end", top-3); err != nil {
		t.Fatal(err)
	}
	if got, want := nextN(t, c, "end", 3), []int64{top - 2, top - 1, top}; !slices.Equal(got, want) {
		t.Fatalf("at the end of int64: %v, want %v", got, want)
	}
	_, err = c.Next(ctx, "end")
	checkErr(t, "Next past MaxInt64", err, []error{sequence.ErrExhausted}, "sn:{end}:range")
	wantEnd := map[string]string{"cur": fmt.Sprint(top), "max": fmt.Sprint(top)}
	if got := rangeOf(t, rdb, c, "end"); !mapsEqual(got, wantEnd) {
		t.Fatalf("range hash after exhaustion = %v, want %v", got, wantEnd)
	}
}

func TestCounterNextN(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 100}))
	tests := []struct {
		name string
		dst  []int64
		n    int
		want []int64
	}{
		{"zero", []int64{-1}, 0, []int64{-1}},
		{"within a range", nil, 30, seq(1, 30)},
		{"across two refills", []int64{-1}, 250, append([]int64{-1}, seq(31, 280)...)},
		{"rest of a range", nil, 20, seq(281, 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.NextN(ctx, "k", tt.dst, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("NextN(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
	got, err := c.NextN(ctx, "k", []int64{7}, -1)
	checkErr(t, "NextN(-1)", err, []error{sequence.ErrInvalidArgument}, "sn:{k}:range")
	if !slices.Equal(got, []int64{7}) {
		t.Fatalf("NextN(-1) returned dst %v, want it unchanged", got)
	}
}

func TestCounterForeignValues(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{}))
	tests := []struct {
		name   string
		fields []string // for a hash; nil: a string
		want   error
		msg    string
	}{
		{"string", nil, redisseq.ErrWrongType, "redisseq: key sn:{string}:range holds a foreign value of the wrong type"},
		{"negative max", []string{"cur", "1", "max", "-9"}, redisseq.ErrCorrupt, `redisseq: key sn:{negative max}:range holds a corrupt value: CORRUPT field max is "-9"`},
		{"bad cur", []string{"cur", "x", "max", "9"}, redisseq.ErrCorrupt, "redisseq: key sn:{bad cur}:range holds a corrupt value: hash value is not an integer"},
		{"bad big cur", []string{"cur", "x", "max", "1000000000000000000"}, redisseq.ErrCorrupt, `CORRUPT fields cur, max are "x", "1000000000000000000"`},
		{"bad max", []string{"cur", "1", "max", "1e9"}, redisseq.ErrCorrupt, `CORRUPT field max is "1e9"`},
		// No script writes cur above max; raising the ledger to such a cur
		// could exhaust the key for every machine.
		{"cur above max", []string{"cur", "20", "max", "10"}, redisseq.ErrCorrupt, `CORRUPT field cur "20" is above max "10"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := c.Key(tt.name)
			if tt.fields == nil {
				rdb.Set(ctx, key, "hello", 0)
			} else {
				rdb.HSet(ctx, key, append(tt.fields, "boot", runID(t, rdb))) // of this server: read, not refilled
			}
			before, _ := rdb.Dump(ctx, key).Result()
			_, err := c.Next(ctx, tt.name)
			checkErr(t, "Next", err, []error{tt.want}, tt.msg)
			if after, _ := rdb.Dump(ctx, key).Result(); after != before {
				t.Errorf("Next changed the foreign value")
			}
		})
	}
}

// A range that lost one of its fields (by hand: the scripts write both
// together) is missing: the next range is installed above the field left,
// and no number repeats.
func TestCounterHalfRange(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	for _, field := range []string{"cur", "max"} {
		t.Run(field, func(t *testing.T) {
			c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Prefix: field + ":", Step: 10}))
			var top int64
			for range 3 {
				n, err := c.Next(ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				top = n
			}
			if err := rdb.HDel(ctx, c.Key("k"), field).Err(); err != nil {
				t.Fatal(err)
			}
			n, err := c.Next(ctx, "k")
			if err != nil || n <= top {
				t.Errorf("after HDEL %s: Next = %d, %v; want above %d", field, n, err, top)
			}
		})
	}
}

// Callers wait while another process holds the refill lock, and give up
// when their context ends.
func TestCounterWaitsForRefillLock(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 10}))
	other := must(redisseq.NewLock(rdb, "sn:{k}:lock", time.Hour))
	if ok, err := other.TryLock(ctx); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := c.Next(short, "k")
	checkErr(t, "Next while another process holds the lock", err,
		[]error{sequence.ErrUnavailable, context.DeadlineExceeded}, "sn:{k}:range")

	done := make(chan error, 1)
	go func() {
		_, err := c.Next(ctx, "k")
		done <- err
	}()
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Next after the lock was released: %v", err)
	}
}

func TestCounterUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	c := must(redisseq.NewCounter(srv.Client(t), sequence.NewMemoryAllocator(), redisseq.CounterOptions{}))
	nextN(t, c, "k", 3)
	srv.Kill(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Next(ctx, "k")
	checkErr(t, "Next on a dead server", err, []error{sequence.ErrUnavailable}, "sn:{k}:range")
	_, err = c.NextN(ctx, "k", nil, 5)
	checkErr(t, "NextN on a dead server", err, []error{sequence.ErrUnavailable}, "sn:{k}:range")
	srv.Restart(t)
	if n, err := c.Next(context.Background(), "k"); err != nil || n <= 3 {
		t.Fatalf("Next after restart = %d, %v; want a number above 3", n, err)
	}
}
