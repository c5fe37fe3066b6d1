package remote_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/sngen/sn/client"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/remote"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/server"
)

// BenchmarkRemote issues one number per call: through the library over
// a local bbolt store ("library"), through package remote from blocks of
// the same store served by sn serve's handler on 127.0.0.1 ("remote"),
// and through the client, a request per number ("request"). Compare
// medians of runs interleaved by -count:
//
//	go test -run '^$' -bench Remote -count 6 ./remote
func BenchmarkRemote(b *testing.B) {
	cfg, err := config.Decode([]byte("store: {backend: bolt, path: sn.db}\ntemplates:\n  orders: {template: \"SN-@<seq, width=10>-@<checksum, algo=luhn>\"}\n"), "yaml")
	if err != nil {
		b.Fatal(err)
	}
	set, err := cfg.Build(context.Background(), config.WithDir(b.TempDir()))
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
	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rg, err := remote.New(context.Background(), c, "orders", remote.Options{Segment: sequence.SegmentOptions{}})
	if err != nil {
		b.Fatal(err)
	}
	defer rg.Close()
	lib, _ := set.Get("orders")
	req := c.Generator("orders")
	ctx := context.Background()
	for _, ct := range []struct {
		name string
		next func(context.Context) (string, error)
	}{{"library", lib.Next}, {"remote", rg.Next}, {"request", req.Next}} {
		b.Run(ct.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ct.next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
