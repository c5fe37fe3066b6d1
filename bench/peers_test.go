// Package bench measures sn against its peers, in one run, with the
// contenders interleaved: each round runs every contender once, so that
// the load of a shared machine falls on all of them, and the table gives
// medians over the rounds of each contender's time per number and of each
// ratio. It is a module of its own, so that the peers never become
// dependencies of sn. Run it with make bench, or:
//
//	cd bench && go test -run '^$' -bench Peers -benchtime 1x
//
// It starts its own redis-server on 127.0.0.1 and writes a bbolt file in
// a temporary directory.
package bench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/bwmarrin/snowflake"
	"github.com/redis/go-redis/v9"
	"github.com/sony/sonyflake/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/redisseq"
	snsnow "github.com/sngen/sn/sequence/snowflake"
)

var (
	rounds = flag.Int("rounds", 7, "interleaved rounds")
	slice  = flag.Duration("slice", 100*time.Millisecond, "time each contender runs in each round")
)

// contender issues numbers: run issues n of them in a loop of its own.
type contender struct {
	name string
	run  func(n int) error
}

// seed is the seed template of sn's README.
const seed = `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`

var (
	ctx  = context.Background()
	sink int64
	text string
	buf  = make([]byte, 0, 64)
)

// handWritten is the seed template's number made by hand: strconv,
// padding and the Luhn digit, appended to dst.
func handWritten(dst []byte, n int64) []byte {
	dst = append(dst, "SN-"...)
	start := len(dst)
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	for i := len(d); i < 8; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, d...)
	payload := dst[start:]
	sum, double := 0, true
	for i := len(payload) - 1; i >= 0; i-- {
		v := int(payload[i] - '0')
		if double {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return append(dst, '-', byte('0'+(10-sum%10)%10))
}

// contenders returns every contender, ready to run.
func contenders(b *testing.B) []contender {
	var counter, hand atomic.Int64
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	b.Cleanup(func() { seg.Close() })
	h := seg.Bind("bound")
	k := seg.Bound("bound, TryNext")
	mustGen := func(tpl string, seq sequence.Gen) *sn.Generator {
		g, err := sn.New(tpl, sn.WithSequence("seq", seq))
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	// Fresh counters per contender: eight digits hold 10^8 numbers.
	gNext := mustGen(seed, must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})))
	gAppend := mustGen(seed, must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})))
	gBatch := mustGen(seed, must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})))

	node, err := snowflake.NewNode(1)
	if err != nil {
		b.Fatal(err)
	}
	sf, err := sonyflake.New(sonyflake.Settings{MachineID: func() (int, error) { return 1, nil }})
	if err != nil {
		b.Fatal(err)
	}

	snTwitter, err := snsnow.New(ctx, snsnow.Twitter, snsnow.Options{Worker: 1})
	if err != nil {
		b.Fatal(err)
	}
	snSony, err := snsnow.New(ctx, snsnow.Sonyflake, snsnow.Options{Worker: 1})
	if err != nil {
		b.Fatal(err)
	}

	rdb := startRedis(b)
	hincr := redis.NewScript(`return redis.call('HINCRBY', KEYS[1], 'n', 1)`)
	redisSeg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, sequence.NewMemoryAllocator(), redisseq.AllocatorOptions{Prefix: "bench:"})), sequence.SegmentOptions{}))
	b.Cleanup(func() { redisSeg.Close() })
	redisBound := redisSeg.Bind("k")

	dir := b.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "peer.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	store, err := boltseq.Open(filepath.Join(dir, "sn.db"), boltseq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	boltSeg := must(sequence.NewSegment(store, sequence.SegmentOptions{}))
	b.Cleanup(func() { boltSeg.Close() })
	boltBound := boltSeg.Bind("k")

	loop := func(next func() (int64, error)) func(int) error {
		return func(n int) error {
			for range n {
				v, err := next()
				if err != nil {
					return err
				}
				sink += v
			}
			return nil
		}
	}
	return []contender{
		{"atomic add", func(n int) error {
			for range n {
				sink += counter.Add(1)
			}
			return nil
		}},
		{"atomic add behind a call", loop(func() (int64, error) { return addBehindCall(&counter), nil })},
		{"sn Segment, bound", loop(func() (int64, error) { return h.Next(ctx) })},
		{"sn Segment, TryNext inlined", func(n int) error {
			for range n {
				v, ok := k.TryNext()
				if !ok {
					var err error
					if v, err = k.Next(ctx); err != nil {
						return err
					}
				}
				sink += v
			}
			return nil
		}},
		{"sn Segment, Next(key)", loop(func() (int64, error) { return seg.Next(ctx, "unbound") })},
		{"hand-written string", func(n int) error {
			for range n {
				text = string(handWritten(buf[:0], hand.Add(1)))
			}
			return nil
		}},
		{"sn Next", func(n int) error {
			for range n {
				s, err := gNext.Next(ctx)
				if err != nil {
					return err
				}
				text = s
			}
			return nil
		}},
		{"hand-written append", func(n int) error {
			for range n {
				buf = handWritten(buf[:0], hand.Add(1))
			}
			return nil
		}},
		{"sn Append", func(n int) error {
			var bt sn.Batch
			for range n {
				bt.Reset()
				if err := gAppend.Append(ctx, &bt, sn.Request{}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"sn Issue(N: 100)", func(n int) error {
			for i := 0; i < n; i += 100 {
				out, err := gBatch.Issue(ctx, sn.Request{N: 100})
				if err != nil {
					return err
				}
				text = out[99]
			}
			return nil
		}},
		{"bwmarrin/snowflake", loop(func() (int64, error) { return node.Generate().Int64(), nil })},
		{"sn snowflake, Twitter layout", loop(func() (int64, error) { return snTwitter.Next(ctx, "") })},
		{"sonyflake v2", loop(sf.NextID)},
		{"sn snowflake, Sonyflake layout", loop(func() (int64, error) { return snSony.Next(ctx, "") })},
		{"Redis INCR", loop(func() (int64, error) { return rdb.Incr(ctx, "peer:incr").Result() })},
		{"Redis Lua HINCRBY", loop(func() (int64, error) { return hincr.Run(ctx, rdb, []string{"peer:hash"}).Int64() })},
		{"sn Segment over Redis", loop(func() (int64, error) { return redisBound.Next(ctx) })},
		{"bbolt transaction", loop(func() (int64, error) {
			var v int64
			err := db.Update(func(tx *bolt.Tx) error {
				bk, err := tx.CreateBucketIfNotExists([]byte("n"))
				if err != nil {
					return err
				}
				v = int64(bk.Sequence()) + 1
				return bk.SetSequence(uint64(v))
			})
			return v, err
		})},
		{"sn Segment over bbolt", loop(func() (int64, error) { return boltBound.Next(ctx) })},
		parallel("atomic add", func(n int) error {
			var s int64
			for range n {
				s += counter.Add(1)
			}
			sink2.Add(s)
			return nil
		}),
		parallel("sn Segment, bound", func(n int) error {
			var s int64
			for range n {
				v, err := h.Next(ctx)
				if err != nil {
					return err
				}
				s += v
			}
			sink2.Add(s)
			return nil
		}),
		parallel("sn Next", func(n int) error {
			for range n {
				if _, err := gNext.Next(ctx); err != nil {
					return err
				}
			}
			return nil
		}),
	}
}

// addBehindCall is the atomic add as a call that is not inlined: the
// least any number source that is a method call, as a Handle is, can cost.
//
//go:noinline
func addBehindCall(c *atomic.Int64) int64 { return c.Add(1) }

// sink2 takes the sums of parallel loops.
var sink2 atomic.Int64

// parallel runs run on GOMAXPROCS goroutines at once, sharing the n
// numbers, named name with "×P".
func parallel(name string, run func(n int) error) contender {
	p := runtime.GOMAXPROCS(0)
	return contender{fmt.Sprintf("%s ×%d", name, p), func(n int) error {
		errs := make(chan error, p)
		for i := range p {
			go func() { errs <- run(n/p + boolInt(i < n%p)) }()
		}
		var first error
		for range p {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ratios are the comparisons the table prints: a / b of the times per
// number, over the rounds.
var ratios = []struct{ what, a, b string }{
	{"Segment bound handle: throughput against an atomic add (goal >= 0.9)", "atomic add", "sn Segment, bound"},
	{"Segment bound handle: throughput against an atomic add behind a call", "atomic add behind a call", "sn Segment, bound"},
	{"SegmentKey.TryNext, inlined: throughput against an atomic add behind a call (goal >= 0.8)", "atomic add behind a call", "sn Segment, TryNext inlined"},
	{"atomic add behind a call: throughput against an inlined one", "atomic add", "atomic add behind a call"},
	{"Segment Next(key) against the bound handle (goal <= 2)", "sn Segment, Next(key)", "sn Segment, bound"},
	{"Next against hand-written (goal <= 1.2)", "sn Next", "hand-written string"},
	{"AppendNext against hand-written append (goal <= 1.3)", "sn AppendNext", "hand-written append"},
	{"NextN(100) per number against Next (goal < 1)", "sn NextN(100)", "sn Next"},
	{"bwmarrin/snowflake against the bound Segment", "bwmarrin/snowflake", "sn Segment, bound"},
	{"bwmarrin/snowflake against sn snowflake, same layout", "bwmarrin/snowflake", "sn snowflake, Twitter layout"},
	{"sonyflake v2 against sn snowflake, same layout", "sonyflake v2", "sn snowflake, Sonyflake layout"},
	{"sonyflake v2 against the bound Segment", "sonyflake v2", "sn Segment, bound"},
	{"Redis INCR against the Segment over Redis", "Redis INCR", "sn Segment over Redis"},
	{"Redis Lua HINCRBY against the Segment over Redis", "Redis Lua HINCRBY", "sn Segment over Redis"},
	{"bbolt transaction against the Segment over bbolt", "bbolt transaction", "sn Segment over bbolt"},
	{"Redis INCR against sn Next (a whole number string)", "Redis INCR", "sn Next"},
	{"with every CPU: Segment bound handle, throughput against an atomic add", "atomic add ×P", "sn Segment, bound ×P"},
	{"with every CPU: Next against one caller's Next", "sn Next ×P", "sn Next"},
}

// withP puts GOMAXPROCS in place of the P of a parallel contender's name.
func withP(name string) string {
	return strings.Replace(name, "×P", fmt.Sprintf("×%d", runtime.GOMAXPROCS(0)), 1)
}

// BenchmarkPeers runs every contender once per round, in turn, for about
// -slice each, and prints each one's median time per number (wall and
// CPU), the ratios, and the heap per key of a Segment and of a Generator
// with 100,000 keys. b.N is not used: run it with -benchtime 1x.
func BenchmarkPeers(b *testing.B) {
	cs := contenders(b)
	wall := make(map[string][]float64)
	cpu := make(map[string][]float64)
	perRound := make(map[string]float64)
	ratioRounds := make([][]float64, len(ratios))
	// Calibrate: how many numbers fill a slice.
	sizes := make(map[string]int)
	for _, c := range cs {
		n := 1
		for {
			start := time.Now()
			if err := c.run(n); err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			if d := time.Since(start); d > *slice/10 || n > 1<<30 {
				sizes[c.name] = max(1, int(float64(n)*float64(*slice)/float64(d)))
				break
			}
			n *= 4
		}
	}
	for range *rounds {
		for _, c := range cs {
			n := sizes[c.name]
			runtime.GC()
			c0 := cpuTime()
			start := time.Now()
			if err := c.run(n); err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			w := float64(time.Since(start).Nanoseconds()) / float64(n)
			wall[c.name] = append(wall[c.name], w)
			cpu[c.name] = append(cpu[c.name], float64((cpuTime()-c0).Nanoseconds())/float64(n))
			perRound[c.name] = w
		}
		for i, r := range ratios {
			ratioRounds[i] = append(ratioRounds[i], perRound[withP(r.a)]/perRound[withP(r.b)])
		}
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "contender\tns/number (median of %d)\tmin\tmax\tCPU ns/number\t\n", *rounds)
	for _, c := range cs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t\n", c.name, num(median(wall[c.name])), num(slices.Min(wall[c.name])), num(slices.Max(wall[c.name])), num(median(cpu[c.name])))
	}
	w.Flush()
	fmt.Println()
	w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "ratio of times per number, median of the rounds\tratio\tmin\tmax\n")
	for i, r := range ratios {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.what, num(median(ratioRounds[i])), num(slices.Min(ratioRounds[i])), num(slices.Max(ratioRounds[i])))
	}
	w.Flush()
	fmt.Println()
	for _, l := range []struct {
		name   string
		layout snsnow.Layout
	}{{"sn snowflake, Twitter layout", snsnow.Twitter}, {"sn snowflake, Sonyflake layout", snsnow.Sonyflake}} {
		fmt.Printf("%s: %.3f of the layout's limit of %.0f ids per second (goal >= 0.95)\n", l.name, 1e9/median(wall[l.name])/l.layout.Limit(), l.layout.Limit())
	}
	fmt.Println()
	segBytes, genBytes := heapPerKey(b)
	fmt.Printf("heap per key, 100,000 keys used once, the store's own excluded: Segment %.0f bytes; Generator with key=customer over a Segment %.0f bytes\n", segBytes, genBytes)
	fmt.Printf("%s, %d CPUs, GOMAXPROCS %d, %s, rounds of %v\n", runtime.Version(), runtime.NumCPU(), runtime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02"), *slice)
}

// heapPerKey measures the heap that 100,000 keys, each used once, cost: in
// a Segment, and through a Generator whose key is a variable. The keys'
// own strings are kept alive, so that what sn holds is counted, its copy
// of each key included.
func heapPerKey(b *testing.B) (seg, gen float64) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("customer-%06d", i)
	}
	// Each store is filled with every key first, with its own copy of
	// each: the store's memory is the store's (in production, a bbolt file,
	// Redis or SQL), not sn's.
	filled := func() ownKeys {
		a := ownKeys{sequence.NewMemoryAllocator()}
		for _, k := range append(keys, "warm") {
			if _, err := a.Allocate(ctx, k, 1); err != nil {
				b.Fatal(err)
			}
		}
		return a
	}
	s := must(sequence.NewSegment(filled(), sequence.SegmentOptions{Idle: -1}))
	defer s.Close()
	s.Next(ctx, "warm")
	before := heap()
	for _, k := range keys {
		if _, err := s.Next(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
	seg = float64(heap()-before) / n
	runtime.KeepAlive(s)

	// The Generator's counter keys are its own ("INV/@<customer>/...|
	// customer=customer-000001"): a first pass over a Segment that is then
	// dropped fills the store with them.
	a := ownKeys{sequence.NewMemoryAllocator()}
	pass := func() (*sequence.Segment, uint64) {
		s := must(sequence.NewSegment(a, sequence.SegmentOptions{Idle: -1}))
		g, err := sn.New(`INV/@<customer>/@<seq, width=6, key=customer>`, sn.WithSequence("seq", s))
		if err != nil {
			b.Fatal(err)
		}
		vars := sn.Vars{"customer": "warm"}
		g.Issue(ctx, sn.Request{Vars: vars})
		before := heap()
		for _, k := range keys {
			vars["customer"] = k
			if _, err := g.Issue(ctx, sn.Request{Vars: vars}); err != nil {
				b.Fatal(err)
			}
		}
		return s, heap() - before
	}
	s1, _ := pass()
	s1.Close()
	s2, grown := pass()
	defer s2.Close()
	gen = float64(grown) / n
	runtime.KeepAlive(keys)
	return seg, gen
}

// ownKeys is a memory store that keeps a copy of its own of every key, as
// a store outside the process does. (A Go map keeps the string of the
// last assignment: a MemoryAllocator would share sn's copy.)
type ownKeys struct{ *sequence.MemoryAllocator }

func (a ownKeys) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	return a.MemoryAllocator.Allocate(ctx, strings.Clone(key), n)
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// num formats a figure with three significant digits.
func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// startRedis starts a redis-server without persistence on a free port of
// 127.0.0.1, stopped when the benchmark ends.
func startRedis(b *testing.B) *redis.Client {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", b.TempDir())
	if err := cmd.Start(); err != nil {
		b.Fatalf("redis-server (apt-get install redis-server): %v", err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port})
	b.Cleanup(func() { rdb.Close() })
	for deadline := time.Now().Add(10 * time.Second); rdb.Ping(ctx).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("redis-server did not answer within 10s")
		}
	}
	return rdb
}
