package redisseq_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// checkErr fails t unless err wraps each of kinds and its message starts
// with "redisseq: " and contains every string in has.
func checkErr(t *testing.T, what string, err error, kinds []error, has ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, kinds)
		return
	}
	for _, k := range kinds {
		if !errors.Is(err, k) {
			t.Errorf("%s: error %q does not wrap %q", what, err, k)
		}
	}
	if !strings.HasPrefix(err.Error(), "redisseq: ") {
		t.Errorf("%s: error %q does not start with \"redisseq: \"", what, err)
	}
	for _, h := range has {
		if !strings.Contains(err.Error(), h) {
			t.Errorf("%s: error %q does not mention %q", what, err, h)
		}
	}
}

func TestAllocatorKeyLayout(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	tests := []struct {
		name, prefix, key, want string
	}{
		{"plain", "", "order", "sn:{order}"},
		{"braces", "", "order:{2024}", "sn:{order:%7B2024%7D}"},
		{"escape char", "", "100%", "sn:{100%25}"},
		{"escaped text", "", "%7B", "sn:{%257B}"},
		{"closing brace first", "", "}{", "sn:{%7D%7B}"},
		{"empty key", "", "", "sn:{}"},
		{"NUL and UTF-8", "", "a\x00заказ", "sn:{a\x00заказ}"},
		{"own prefix", "app:", "k", "app:{k}"},
		{"prefix with braces", "app{1}:", "k", "app%7B1%7D:{k}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{Prefix: tt.prefix}))
			if got := a.Key(tt.key); got != tt.want {
				t.Fatalf("Key(%q) = %q, want %q", tt.key, got, tt.want)
			}
			r, err := a.Allocate(ctx, tt.key, 5)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := rdb.Get(ctx, tt.want).Int64(); err != nil || got != r.Last {
				t.Fatalf("GET %q = %d, %v; want %d after Allocate returned %v", tt.want, got, err, r.Last, r)
			}
		})
	}
}

// Keys that escape to look like each other must still be separate counters.
func TestAllocatorKeysDoNotCollide(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	keys := []string{"{", "}", "%", "%7B", "%7D", "%25", "{}", "%7B%7D", "a}b", "a%7Db", "", "{a}", "a"}
	seen := map[string]string{}
	for _, k := range keys {
		if other, dup := seen[a.Key(k)]; dup {
			t.Fatalf("keys %q and %q share the Redis key %q", k, other, a.Key(k))
		}
		seen[a.Key(k)] = k
		r, err := a.Allocate(ctx, k, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.First != 1 {
			t.Errorf("first Allocate(%q) = %v, want [1, 1]: the key shares a counter", k, r)
		}
	}
}

func TestAllocatorClusterSlots(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.SharedCluster(t).Client(t)
	ledger := sequence.NewMemoryAllocator()
	a := must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Prefix: "slots:"}))
	c := must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Prefix: "slots:"}))
	for _, k := range []string{"a", "order:{2024}", "}x{", "%7B", "заказ"} {
		s1, err1 := rdb.ClusterKeySlot(ctx, a.Key(k)).Result()
		s2, err2 := rdb.ClusterKeySlot(ctx, c.Key(k)).Result()
		s3, err3 := rdb.ClusterKeySlot(ctx, strings.TrimSuffix(c.Key(k), ":range")+":lock").Result()
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		if s1 != s2 || s2 != s3 {
			t.Errorf("key %q: slots %d, %d, %d; want one slot for all its Redis keys", k, s1, s2, s3)
		}
		if _, err := a.Allocate(ctx, k, 10); err != nil {
			t.Errorf("Allocate(%q): %v", k, err)
		}
		if _, err := c.Next(ctx, k); err != nil {
			t.Errorf("Counter.Next(%q): %v", k, err)
		}
	}
}

func TestAllocatorBigNumbers(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))

	// Above 2^53 a double cannot tell 2^53 from 2^53+1: a floor compared as
	// a Lua number would be lost.
	const p53 = 1 << 53
	if err := a.Floor(ctx, "k53", p53); err != nil {
		t.Fatal(err)
	}
	if err := a.Floor(ctx, "k53", p53+1); err != nil {
		t.Fatal(err)
	}
	if r, err := a.Allocate(ctx, "k53", 1); err != nil || r.First != p53+2 {
		t.Fatalf("Allocate after Floor(2^53+1) = %v, %v; want [%d, %d]", r, err, int64(p53+2), int64(p53+2))
	}

	const p62 = 1 << 62
	if err := a.Floor(ctx, "k62", p62+1); err != nil {
		t.Fatal(err)
	}
	want := sequence.Range{First: p62 + 2, Last: p62 + 4}
	if r, err := a.Allocate(ctx, "k62", 3); err != nil || r != want {
		t.Fatalf("Allocate near 2^62 = %v, %v; want %v", r, err, want)
	}
	if err := a.Floor(ctx, "k62", p62+3); err != nil { // below: no-op
		t.Fatal(err)
	}
	if r, err := a.Allocate(ctx, "k62", 1); err != nil || r.First != p62+5 {
		t.Fatalf("Allocate after a lower Floor = %v, %v; want [%d, %d]", r, err, int64(p62+5), int64(p62+5))
	}

	// At the end of int64: exhausted, and the counter is left as it was.
	const top = math.MaxInt64
	if err := a.Floor(ctx, "end", top-10); err != nil {
		t.Fatal(err)
	}
	if r, err := a.Allocate(ctx, "end", 5); err != nil || r != (sequence.Range{First: top - 9, Last: top - 5}) {
		t.Fatalf("Allocate(5) at MaxInt64-10 = %v, %v", r, err)
	}
	_, err := a.Allocate(ctx, "end", 6)
	checkErr(t, "Allocate(6) with 5 left", err, []error{sequence.ErrExhausted}, "sn:{end}")
	if got, err := rdb.Get(ctx, "sn:{end}").Int64(); err != nil || got != top-5 {
		t.Fatalf("counter after a refused Allocate = %d, %v; want %d (unchanged)", got, err, int64(top-5))
	}
	if r, err := a.Allocate(ctx, "end", 5); err != nil || r != (sequence.Range{First: top - 4, Last: top}) {
		t.Fatalf("Allocate(5) of the last 5 = %v, %v", r, err)
	}
	_, err = a.Allocate(ctx, "end", 1)
	checkErr(t, "Allocate at MaxInt64", err, []error{sequence.ErrExhausted})
	if err := a.Floor(ctx, "end", top); err != nil {
		t.Fatalf("Floor(MaxInt64) at MaxInt64: %v", err)
	}
}

func TestAllocatorInvalidArguments(t *testing.T) {
	ctx := context.Background()
	a := must(redisseq.NewRedisOnlyAllocator(redistest.Start(t, redistest.Persistent()).Client(t), redisseq.AllocatorOptions{}))
	for _, n := range []int64{0, -1, math.MinInt64} {
		_, err := a.Allocate(ctx, "k", n)
		checkErr(t, "Allocate with a bad n", err, []error{sequence.ErrInvalidArgument}, "sn:{k}")
	}
	checkErr(t, "Floor(-1)", a.Floor(ctx, "k", -1), []error{sequence.ErrInvalidArgument}, "sn:{k}")
}

func TestAllocatorForeignValues(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	tests := []struct {
		name  string
		setup func(key string) error
		want  error
		msg   string
	}{
		{"hash", func(k string) error { return rdb.HSet(ctx, k, "f", "v").Err() }, redisseq.ErrWrongType,
			"redisseq: key sn:{hash} holds a foreign value of the wrong type"},
		{"list", func(k string) error { return rdb.RPush(ctx, k, "x").Err() }, redisseq.ErrWrongType,
			"redisseq: key sn:{list} holds a foreign value of the wrong type"},
		{"text", func(k string) error { return rdb.Set(ctx, k, "hello", 0).Err() }, redisseq.ErrCorrupt,
			"redisseq: key sn:{text} holds a corrupt value"},
		{"too big", func(k string) error { return rdb.Set(ctx, k, "99999999999999999999", 0).Err() }, redisseq.ErrCorrupt,
			"redisseq: key sn:{too big} holds a corrupt value"},
		{"negative", func(k string) error { return rdb.Set(ctx, k, "-5", 0).Err() }, redisseq.ErrCorrupt,
			"redisseq: key sn:{negative} holds a corrupt value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := a.Key(tt.name)
			if err := tt.setup(key); err != nil {
				t.Fatal(err)
			}
			dump, _ := rdb.Dump(ctx, key).Result()
			checkErr(t, "Floor", a.Floor(ctx, tt.name, 1000), []error{tt.want}, tt.msg)
			_, err := a.Allocate(ctx, tt.name, 10)
			checkErr(t, "Allocate", err, []error{tt.want}, tt.msg)
			if tt.want == redisseq.ErrWrongType {
				if after, _ := rdb.Dump(ctx, key).Result(); after != dump {
					t.Error("the foreign value was changed")
				}
			}
		})
	}
}

// SCRIPT FLUSH (or a restart) empties Redis's script cache; Run falls back
// from EVALSHA to EVAL.
func TestScriptFlush(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 3}))
	var last int64
	for i := range 10 {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := a.Floor(ctx, "a", int64(i)*100); err != nil {
			t.Fatalf("Allocator.Floor after SCRIPT FLUSH: %v", err)
		}
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		n, err := c.Next(ctx, "c")
		if err != nil {
			t.Fatalf("Counter.Next after SCRIPT FLUSH: %v", err)
		}
		if n <= last {
			t.Fatalf("Counter.Next = %d after %d", n, last)
		}
		last = n
	}
	if r, err := a.Allocate(ctx, "a", 1); err != nil || r.First != 901 {
		t.Fatalf("Allocate after floors up to 900 = %v, %v", r, err)
	}
}

// A Redis that cannot be reached gives ErrUnavailable with the cause, and a
// closed client gives ErrClosed.
func TestAllocatorUnavailable(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	if _, err := a.Allocate(context.Background(), "k", 1); err != nil {
		t.Fatal(err)
	}
	srv.Kill(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := a.Allocate(ctx, "k", 1)
	checkErr(t, "Allocate on a dead server", err, []error{sequence.ErrUnavailable}, "sn:{k}")
	checkErr(t, "Floor on a dead server", a.Floor(ctx, "k", 5), []error{sequence.ErrUnavailable}, "sn:{k}")

	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	c.Close()
	_, err = must(redisseq.NewRedisOnlyAllocator(c, redisseq.AllocatorOptions{})).Allocate(context.Background(), "k", 1)
	checkErr(t, "Allocate with a closed client", err, []error{sequence.ErrClosed, redis.ErrClosed}, "sn:{k}")
}
