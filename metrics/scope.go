package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Handler serves g's metrics as Prometheus scrapes them, cut to what a
// reader may see: the series whose label template is one of templates
// and those whose label store is one of stores; with all, every series,
// the process's and the Go runtime's included. sn serve answers GET
// /metrics with it for each token, with the templates the token reaches
// and their stores.
func Handler(g prometheus.Gatherer, templates, stores map[string]bool, all bool) http.Handler {
	if !all {
		g = cut{g, templates, stores}
	}
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// cut is a Gatherer of the series of some templates and stores.
type cut struct {
	g                 prometheus.Gatherer
	templates, stores map[string]bool
}

func (c cut) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := c.g.Gather()
	var out []*dto.MetricFamily
	for _, mf := range mfs {
		var keep []*dto.Metric
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if (l.GetName() == "template" && c.templates[l.GetValue()]) || (l.GetName() == "store" && c.stores[l.GetValue()]) {
					keep = append(keep, m)
					break
				}
			}
		}
		if len(keep) > 0 {
			mf.Metric = keep
			out = append(out, mf)
		}
	}
	return out, err
}

// Capacity is how much of a template's width is used: Ratio, the share of
// its width its fullest counter key has used, and RunsOut, how long until
// at the current rate the width runs out before the key's period ends (0
// when it does not).
type Capacity struct {
	Ratio   float64
	RunsOut time.Duration
}

var (
	descCapacity = prometheus.NewDesc("sn_series_capacity_ratio",
		"The share of its width the template's fullest counter key has used (last number / largest the width prints): alert above 0.8.", []string{"template"}, nil)
	descRunsOut = prometheus.NewDesc("sn_series_runs_out_seconds",
		"Seconds until, at the rate of the last ten minutes, the template's fullest key uses up its width, when that comes before its period ends; absent otherwise.", []string{"template"}, nil)
)

// WatchCapacity reports, at each scrape, the capacity f gives by template
// name: sn_series_capacity_ratio and sn_series_runs_out_seconds. sn serve
// watches its server's (server.Server.Capacities). A second call
// replaces the first f.
func (m *Metrics) WatchCapacity(f func() map[string]Capacity) {
	m.capMu.Lock()
	defer m.capMu.Unlock()
	m.capacity = f
}

// capacities is the collector of the capacity WatchCapacity watches.
type capacities Metrics

func (c *capacities) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCapacity
	ch <- descRunsOut
}

func (c *capacities) Collect(ch chan<- prometheus.Metric) {
	c.capMu.Lock()
	f := c.capacity
	c.capMu.Unlock()
	if f == nil {
		return
	}
	for name, cp := range f() {
		ch <- prometheus.MustNewConstMetric(descCapacity, prometheus.GaugeValue, cp.Ratio, name)
		if cp.RunsOut > 0 {
			ch <- prometheus.MustNewConstMetric(descRunsOut, prometheus.GaugeValue, cp.RunsOut.Seconds(), name)
		}
	}
}

// capacityFields are Metrics' fields for WatchCapacity.
type capacityFields struct {
	capMu    sync.Mutex
	capacity func() map[string]Capacity
}
