// Package metrics exports the Prometheus metrics of sn's Generators and of
// the stores under them: numbers issued, errors by kind, call latency,
// block fetches and their latency, waits at block edges, the step, and
// the state of snowflake leases.
//
// A Generator reports through a middleware, under its name:
//
//	m, err := metrics.New(prometheus.DefaultRegisterer)
//	...
//	g, err := sn.New(template, sn.WithSequence("seq", seg), sn.WithName("orders"),
//		sn.WithMiddleware(m.Middleware()))
//
// and every template of a config, under its name in the file, through
// config.WithOptions(sn.WithMiddleware(m.Middleware())). Counting a
// call costs an atomic add and a histogram observation; the state of the
// stores is read when Prometheus scrapes, not when numbers are issued. A
// program that does not import this package links none of it.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

// Metrics hold the metrics of the Generators given its [Metrics.Middleware]
// and of the stores given to [Metrics.Watch]. They are safe for concurrent
// use.
type Metrics struct {
	issued *prometheus.CounterVec
	errs   *prometheus.CounterVec
	calls  *prometheus.HistogramVec
	capacityFields
	tokenFields

	mu     sync.Mutex
	stores []watched // in the order watched
}

// watched is a store reported under a label.
type watched struct {
	label string
	gen   sequence.Gen
}

// The descriptions of the metrics read from the stores at each scrape.
var (
	descFetches   = prometheus.NewDesc("sn_block_fetches_total", "Blocks of numbers asked of the store, successfully or not.", []string{"store"}, nil)
	descFetchErrs = prometheus.NewDesc("sn_block_fetch_errors_total", "Block fetches that failed.", []string{"store"}, nil)
	descFetchTime = prometheus.NewDesc("sn_block_fetch_seconds_total", "Time spent fetching blocks from the store; divided by sn_block_fetches_total, its mean latency.", []string{"store"}, nil)
	descWaits     = prometheus.NewDesc("sn_block_waits_total", "Calls that waited for a block to arrive from the store.", []string{"store"}, nil)
	descLate      = prometheus.NewDesc("sn_block_late_total", "Blocks used up before the block fetched ahead arrived: callers waited at the block's edge.", []string{"store"}, nil)
	descNotesLost = prometheus.NewDesc("sn_journal_notes_lost_total", "Journal records a Segment could not write (the store failed, or too many waited): their numbers stay open in an audit.", []string{"store"}, nil)
	descRegressed = prometheus.NewDesc("sn_block_regressions_total", "Blocks refused because the store went backwards.", []string{"store"}, nil)
	descKeys      = prometheus.NewDesc("sn_keys", "Counter keys held in memory.", []string{"store"}, nil)
	descStep      = prometheus.NewDesc("sn_block_step", "The size the last block fetch asked for, by whichever key fetched last.", []string{"store"}, nil)
	descLeaseUp   = prometheus.NewDesc("sn_lease_up", "1 while the snowflake worker id is held and the Gen issues, 0 when its lease is lost or not renewed.", []string{"store", "worker"}, nil)
	descLeaseLeft = prometheus.NewDesc("sn_lease_valid_seconds", "Seconds the snowflake Gen may issue without another renewal of its lease.", []string{"store", "worker"}, nil)
)

// New returns Metrics registered with reg: prometheus.DefaultRegisterer,
// or a prometheus.NewRegistry of the caller's. It fails when reg already
// holds metrics of the same names.
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: nil Registerer")
	}
	m := &Metrics{
		issued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sn_numbers_issued_total", Help: "Numbers issued by calls that succeeded (a call that fails part-way counts none).",
		}, []string{"template"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sn_errors_total", Help: "Calls that failed, by kind: the code sn serve answers with (unavailable, var_missing...).",
		}, []string{"template", "kind"}),
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sn_call_duration_seconds", Help: "Time a call that issues numbers took, successful or not.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 11), // 1µs to 1s
		}, []string{"template"}),
	}
	m.tokenFields = newTokenFields()
	for _, c := range []prometheus.Collector{m.issued, m.errs, m.calls, m.tokenReads, m.tokensStale, (*stores)(m), (*capacities)(m)} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return m, nil
}

// Middleware makes a Generator report under the label template="NAME",
// its name given by sn.WithName (its canonical template text without
// one): the numbers it issues, its errors and its latency, and the stores
// of its sequences (under store="NAME.SEQUENCE", unless [Metrics.Watch]
// names them).
func (m *Metrics) Middleware() sn.Middleware {
	return func(g *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		name := g.Name()
		if name == "" {
			name = g.String()
		}
		for seq, gen := range g.Sequences() {
			m.watch(name+"."+seq, gen, false)
		}
		issued, calls := m.issued.WithLabelValues(name), m.calls.WithLabelValues(name)
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			start, from := time.Now(), b.Len()
			err := next(ctx, b, r)
			calls.Observe(time.Since(start).Seconds())
			if err != nil {
				m.errs.WithLabelValues(name, Kind(err)).Inc()
				return err
			}
			issued.Add(float64(b.Len() - from))
			return nil
		}, nil
	}
}

// Watch reports the store g under the label store=label. A store already
// watched, by Watch or by a Generator's option, takes the new label, and
// so does a Gen under g that is watched on its own (a Segment under a
// Queued): each Segment and lease is reported once, under the label its
// first Watch gave it. The stores watched under one label are reported as
// one, summed: sn serve labels each store with its ID in the config,
// which templates on one file or one Redis share.
func (m *Metrics) Watch(label string, g sequence.Gen) { m.watch(label, g, true) }

// watch reports g under label; a store already watched takes the new
// label only with relabel.
func (m *Metrics) watch(label string, g sequence.Gen, relabel bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, w := range m.stores {
		if sequence.Same(w.gen, g) {
			if relabel {
				m.stores[i].label = label
			}
			return
		}
	}
	if relabel {
		// Before those of the Generators' options, which Collect then
		// reaches only for what this one does not hold.
		m.stores = append([]watched{{label, g}}, m.stores...)
		return
	}
	m.stores = append(m.stores, watched{label, g})
}

// stores is the collector of the watched stores' state.
type stores Metrics

// Describe sends the descriptions of the stores' metrics.
func (s *stores) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFetches, descFetchErrs, descFetchTime, descWaits, descLate, descNotesLost, descRegressed, descKeys, descStep, descLeaseUp, descLeaseLeft} {
		ch <- d
	}
}

// Collect reads the state of every store watched: the Segments and
// snowflake Gens found under it by sequence.Walk, each once. Stores
// watched under one label are summed (the step is their largest). A scrape costs the same
// however many keys the stores hold.
func (s *stores) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	ws := append([]watched(nil), s.stores...)
	s.mu.Unlock()
	type lease struct {
		label, worker string
	}
	var labels []string
	var leases []lease
	by := map[string]*sequence.SegmentStats{}
	up, left := map[lease]float64{}, map[lease]float64{}
	seen := map[sequence.Gen]bool{} // each Segment and snowflake Gen once, however often reached
	for _, w := range ws {
		sequence.Walk(w.gen, func(g sequence.Gen) {
			switch g.(type) {
			case *sequence.Segment, *snowflake.Gen:
				if seen[g] {
					return
				}
				seen[g] = true
			}
			switch g := g.(type) {
			case *sequence.Segment:
				st := by[w.label]
				if st == nil {
					st = &sequence.SegmentStats{}
					by[w.label] = st
					labels = append(labels, w.label)
				}
				*st = st.Add(g.Stats())
			case *snowflake.Gen:
				// Two Gens of one worker id under one label (one closed,
				// its successor open) are one series: up if either is.
				li := g.LeaseInfo()
				l := lease{w.label, fmt.Sprint(li.Worker)}
				if _, ok := up[l]; !ok {
					leases = append(leases, l)
					up[l] = 0
				}
				if li.Err == nil {
					up[l] = 1
				}
				if li.Leased {
					left[l] = max(left[l], time.Until(li.Valid).Seconds())
				}
			}
		})
	}
	for _, l := range leases {
		ch <- prometheus.MustNewConstMetric(descLeaseUp, prometheus.GaugeValue, up[l], l.label, l.worker)
		if v, ok := left[l]; ok {
			ch <- prometheus.MustNewConstMetric(descLeaseLeft, prometheus.GaugeValue, v, l.label, l.worker)
		}
	}
	for _, label := range labels {
		st := by[label]
		for _, v := range []struct {
			d *prometheus.Desc
			t prometheus.ValueType
			v float64
		}{
			{descFetches, prometheus.CounterValue, float64(st.Fetches)},
			{descFetchErrs, prometheus.CounterValue, float64(st.Errors)},
			{descFetchTime, prometheus.CounterValue, st.FetchTime.Seconds()},
			{descWaits, prometheus.CounterValue, float64(st.Waits)},
			{descLate, prometheus.CounterValue, float64(st.Late)},
			{descNotesLost, prometheus.CounterValue, float64(st.NotesLost)},
			{descRegressed, prometheus.CounterValue, float64(st.Regressions)},
			{descKeys, prometheus.GaugeValue, float64(st.Keys)},
			{descStep, prometheus.GaugeValue, float64(st.LastStep)},
		} {
			ch <- prometheus.MustNewConstMetric(v.d, v.t, v.v, label)
		}
	}
}
