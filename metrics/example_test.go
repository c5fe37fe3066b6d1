package metrics_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sngen/sn"
	"github.com/sngen/sn/metrics"
	"github.com/sngen/sn/sequence"
)

// A Generator reports through a middleware, under its name; Prometheus
// reads the metrics from the registry (promhttp.HandlerFor serves them).
func ExampleMetrics_Middleware() {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		panic(err)
	}
	seg, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{MinStep: 100, MaxStep: 100})
	if err != nil {
		panic(err)
	}
	defer seg.Close()
	g := sn.MustNew("SN-@<seq, width=8>", sn.WithSequence("seq", seg), sn.WithName("orders"), sn.WithMiddleware(m.Middleware()))
	nums, _ := g.Issue(context.Background(), sn.Request{N: 3})
	fmt.Println(nums)

	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		switch mf.GetName() {
		case "sn_numbers_issued_total", "sn_block_fetches_total", "sn_block_step":
			m := mf.GetMetric()[0]
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			fmt.Printf("%s{%s=%q} %v\n", mf.GetName(), m.GetLabel()[0].GetName(), m.GetLabel()[0].GetValue(), v)
		}
	}
	// Output:
	// [SN-00000001 SN-00000002 SN-00000003]
	// sn_block_fetches_total{store="orders.seq"} 1
	// sn_block_step{store="orders.seq"} 100
	// sn_numbers_issued_total{template="orders"} 3
}
