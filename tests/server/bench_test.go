package server_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sngen/sn"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/metrics"
	"github.com/sngen/sn/server"
)

var (
	loadSlice  = flag.Duration("load.slice", 300*time.Millisecond, "how long each contender runs per round in BenchmarkLoad")
	loadRounds = flag.Int("load.rounds", 3, "rounds of BenchmarkLoad")
)

// BenchmarkLoad issues numbers through sn serve's handler on 127.0.0.1
// and through the library, side by side in interleaved rounds, at 1, 16
// and 64 concurrent clients, one number per call and in batches, and
// prints numbers per second, p50 and p99 latency per call and the
// service's time per number against the library's. b.N is not used: run
//
//	go test -run '^$' -bench Load -benchtime 1x ./server
func BenchmarkLoad(b *testing.B) {
	cfg, err := config.Decode([]byte("store: {backend: bolt, path: sn.db}\ntemplates:\n  orders: {template: \"SN-@<seq, width=10>-@<checksum, algo=luhn>\"}\n"), "yaml")
	if err != nil {
		b.Fatal(err)
	}
	// Metrics as sn serve has them, on both contenders.
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	set, err := cfg.Build(context.Background(), config.WithDir(b.TempDir()),
		config.WithOptions(sn.WithMiddleware(m.Middleware())))
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close()
	h, err := server.New(set, server.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 128}
	c, _ := client.New(ts.URL, client.Options{HTTPClient: &http.Client{Transport: transport, Timeout: 30 * time.Second}})
	remote := c.Generator("orders")
	local, _ := set.Get("orders")
	ctx := context.Background()

	type contender struct {
		name    string
		clients int
		batch   int
		call    func(n int) ([]string, error)
	}
	var cs []contender
	for _, clients := range []int{1, 16, 64} {
		for _, batch := range []int{1, 100, 1000} {
			cs = append(cs,
				contender{"library", clients, batch, func(n int) ([]string, error) { return local.Issue(ctx, sn.Request{N: n}) }},
				contender{"sn serve", clients, batch, func(n int) ([]string, error) { return remote.Issue(ctx, client.Request{N: n}) }})
		}
	}
	type result struct{ perNumber, p50, p99 []float64 }
	results := make([]result, len(cs))
	for range *loadRounds {
		for i, ct := range cs {
			var mu sync.Mutex
			var lat []time.Duration
			var numbers int
			deadline := time.Now().Add(*loadSlice)
			start := time.Now()
			var wg sync.WaitGroup
			for range ct.clients {
				wg.Go(func() {
					var mine []time.Duration
					got := 0
					for k := 0; k < 10_000_000 && time.Now().Before(deadline); k++ {
						t0 := time.Now()
						nums, err := ct.call(ct.batch)
						if err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(t0))
						got += len(nums)
					}
					mu.Lock()
					lat = append(lat, mine...)
					numbers += got
					mu.Unlock()
				})
			}
			wg.Wait()
			wall := time.Since(start)
			sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
			r := &results[i]
			r.perNumber = append(r.perNumber, float64(wall.Nanoseconds())/float64(numbers))
			r.p50 = append(r.p50, float64(lat[len(lat)/2].Nanoseconds()))
			r.p99 = append(r.p99, float64(lat[len(lat)*99/100].Nanoseconds()))
		}
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "contender\tclients\tbatch\tnumbers/s\tp50 per call\tp99 per call\tsn serve / library per number\t")
	for i, ct := range cs {
		r := results[i]
		ratio := ""
		if ct.name == "sn serve" {
			ratio = fmt.Sprintf("%.1fx", med(r.perNumber)/med(results[i-1].perNumber))
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%.0f\t%v\t%v\t%s\t\n", ct.name, ct.clients, ct.batch, 1e9/med(r.perNumber),
			time.Duration(med(r.p50)).Round(100*time.Nanosecond), time.Duration(med(r.p99)).Round(100*time.Nanosecond), ratio)
	}
	w.Flush()
	fmt.Printf("medians of %d rounds of %v each, contenders interleaved; the store is a bbolt file behind a Segment; both with metrics, as in sn serve\n", *loadRounds, *loadSlice)
}
