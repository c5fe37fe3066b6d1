package server

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/wire"
)

// counts are what the server counts of a template: numbers issued and
// requests to issue that failed, by code.
type counts struct {
	issued atomic.Int64
	blocks atomic.Int64 // blocks handed out
	handed atomic.Int64 // numbers in them
	hist   *history     // the last hour

	handMu     sync.Mutex
	lastHanded map[string]int64 // by counter key, the last number handed out in a block, for MaxMonitorKeys keys
	mu         sync.Mutex
	errs       map[wire.Code]int64
}

// hand records a block handed out.
func (c *counts) hand(key string, r sequence.Range) {
	c.blocks.Add(1)
	c.handed.Add(r.Len())
	c.hist.handed(time.Now(), r.Len())
	c.handMu.Lock()
	defer c.handMu.Unlock()
	if _, ok := c.lastHanded[key]; !ok && len(c.lastHanded) >= wire.MaxMonitorKeys {
		for k := range c.lastHanded { // one out, whichever
			delete(c.lastHanded, k)
			break
		}
	}
	c.lastHanded[key] = max(c.lastHanded[key], r.Last)
}

// segmentStats sums the counters of the Segments under seq; ok is false
// when there is none.
func segmentStats(seq sequence.Gen) (sequence.SegmentStats, bool) {
	var sum *sequence.SegmentStats
	sequence.Walk(seq, func(g sequence.Gen) {
		if seg, ok := g.(*sequence.Segment); ok {
			st := seg.Stats()
			if sum != nil {
				st = sum.Add(st)
			}
			sum = &st
		}
	})
	if sum == nil {
		return sequence.SegmentStats{}, false
	}
	return *sum, true
}

// failed counts a failed request to issue.
func (c *counts) failed(code wire.Code) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[code]++
}

//go:embed monitor.html
var monitorPage []byte

// page serves the monitor page: one HTML file with its style and script,
// which reads /v1/monitor every two seconds.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	// A request that may read the monitor (a server without tokens, or
	// an Authorization header, as a screenshot tool sends it) gets the
	// page with its first reading in it: drawn before the load event, so
	// that a headless capture shows figures, not "loading…". A browser
	// with a token in the fragment reads it from /v1/monitor.
	if gr := s.access.lookup(r); gr != nil && gr.actions[Monitor] {
		if data, err := json.Marshal(s.reading(r, gr)); err == nil {
			// json.Marshal escapes <, > and &: the data cannot end the
			// script element it is in.
			w.Write(bytes.Replace(monitorPage, initialSlot, slices.Concat([]byte(`<script type="application/json" id="initial">`), data, []byte(`</script>`)), 1))
			return
		}
	}
	w.Write(monitorPage)
}

// initialSlot is where the page takes its first reading (see page).
var initialSlot = []byte(`<script type="application/json" id="initial"></script>`)

// metrics serves Options.MetricsFor with what the token reaches, or
// Options.Metrics, or 404 without them.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	gr := grantIn(w)
	if !gr.actions[Monitor] {
		s.forbid(w, gr, []Action{Monitor}, "the metrics")
		return
	}
	all := s.everything(gr)
	switch {
	case s.opts.MetricsFor != nil:
		templates, stores := map[string]bool{}, map[string]bool{}
		for _, name := range s.visible(gr) {
			templates[name] = true
			id, _ := s.set.StoreID(name)
			stores[id] = true
		}
		s.opts.MetricsFor(templates, stores, all).ServeHTTP(w, r)
	case s.opts.Metrics == nil:
		s.fail(w, wire.Error{Code: wire.CodeNotFound, Message: "this server exports no metrics"}, http.StatusNotFound)
	case !all:
		s.forbid(w, gr, []Action{Monitor}, "the metrics of every template (this server's metrics are not cut to a token's templates)")
	default:
		s.opts.Metrics.ServeHTTP(w, r)
	}
}

// everything reports whether gr reaches every template.
func (s *Server) everything(gr *grant) bool {
	return len(s.visible(gr)) == len(s.set.Names())
}

// monitor answers GET /v1/monitor: what the token's templates do.
func (s *Server) monitor(w http.ResponseWriter, r *http.Request) {
	gr := grantIn(w)
	if !gr.actions[Monitor] {
		s.forbid(w, gr, []Action{Monitor}, "the monitor")
		return
	}
	reply(w, http.StatusOK, s.reading(r, gr))
}

// reading is what the monitor shows to gr now.
func (s *Server) reading(r *http.Request, gr *grant) wire.Monitor {
	h, _ := s.health(r, gr)
	now := time.Now()
	m := wire.Monitor{Time: now.UTC(), Ready: h.Ready, Stores: h.Stores, Templates: []wire.MonitorTemplate{}}
	for _, name := range s.visible(gr) {
		g, _ := s.set.Get(name)
		store, _ := s.set.StoreID(name)
		mt := wire.MonitorTemplate{Name: name, Template: g.String(), Store: store, Keys: []wire.KeyState{}, Errors: map[wire.Code]int64{}}
		c := s.counts[name]
		mt.Issued = c.issued.Load()
		c.mu.Lock()
		for code, n := range c.errs {
			mt.Errors[code] = n
			if code.Status() < 500 {
				mt.ClientErrors += n
			} else {
				mt.ServerErrors += n
			}
		}
		c.mu.Unlock()
		seq, _ := s.set.Gen(name)
		var blocks *sequence.SegmentStats // of the Segments under seq, summed
		sequence.Walk(seq, func(g sequence.Gen) {
			switch g := g.(type) {
			case *sequence.Segment:
				st := addSegment(&mt, g)
				if blocks != nil {
					st = blocks.Add(st)
				}
				blocks = &st
			case *snowflake.Gen:
				li := g.LeaseInfo()
				mt.Lease = &wire.LeaseState{Worker: li.Worker, Leased: li.Leased, Valid: li.Valid, OK: li.Err == nil}
				if li.Err != nil {
					mt.Lease.Error = li.Err.Error()
				}
			}
		})
		mt.Handed, mt.HandedBlock = c.handed.Load(), c.blocks.Load()
		mt.History = c.hist.read(now)
		mt.Capacity = s.capacity(name, g, now, mt.Keys)
		if mt.Capacity != nil {
			gctx, cancel := context.WithTimeout(r.Context(), seriesTimeout)
			mt.Gaps = latestGaps(gctx, g, mt.Capacity.Key, 10)
			cancel()
		}
		if mt.Gaps == nil {
			mt.Gaps = []wire.Gap{}
		}
		if blocks != nil {
			mt.Blocks = &wire.Blocks{
				Fetches: blocks.Fetches, Errors: blocks.Errors, Waits: blocks.Waits, Late: blocks.Late,
				Regressions: blocks.Regressions, FetchMillis: float64(blocks.FetchTime.Microseconds()) / 1000,
			}
		}
		m.Templates = append(m.Templates, mt)
	}
	// A catalog that does not answer in time (a table locked by a
	// migration) is left out, not waited for: /readyz reports stores.
	ctx, cancel := context.WithTimeout(r.Context(), seriesTimeout)
	m.Series, m.MoreSeries = s.series(ctx, gr)
	cancel()
	return m
}

// capacity works out the capacity of template name, whose keys held in
// memory are keys (nil to read them).
func (s *Server) capacity(name string, g *sn.Generator, now time.Time, keys []wire.KeyState) *wire.Capacity {
	c := s.counts[name]
	if keys == nil {
		seq, _ := s.set.Gen(name)
		var mt wire.MonitorTemplate
		sequence.Walk(seq, func(gen sequence.Gen) {
			if seg, ok := gen.(*sequence.Segment); ok {
				addSegment(&mt, seg)
			}
		})
		keys = mt.Keys
	}
	last := map[string]int64{}
	for _, k := range keys {
		if g.CheckKey(k.Key) != nil {
			continue // another template's, on a store they share
		}
		used := k.Last
		if used == 0 && k.Block != nil {
			used = k.Block.First - 1 // a block not drawn from yet: what is below it is used
		}
		last[k.Key] = max(last[k.Key], used)
	}
	c.handMu.Lock()
	for k, v := range c.lastHanded {
		last[k] = max(last[k], v)
	}
	c.handMu.Unlock()
	if len(last) == 0 {
		if k, err := g.Key(sn.Request{At: now}); err == nil {
			last[k] = 0 // nothing issued by this server yet
		}
	}
	return capacity(g, now, last, c.hist.rate(now, rateWindow))
}

// seriesTimeout bounds the reading of the catalogs for the monitor.
const seriesTimeout = 2 * time.Second

// series returns the templates of the catalogs of the Set's stores, each
// store once, at most MaxMonitorSeries, and how many were left out. A
// catalog that cannot be read is left out: /readyz reports its store.
//
// A token that reaches only some of its tenant's templates sees the
// entries named after them; one that reaches all, every entry of their
// stores (a tenant's stores are its own).
func (s *Server) series(ctx context.Context, gr *grant) ([]wire.MonitorSeries, int) {
	out := []wire.MonitorSeries{}
	more := 0
	seen := map[string]bool{}
	listed := map[string]bool{} // entries of a catalog two stores of the config share (one Redis), once
	names := s.visible(gr)
	hidden := map[string]bool{}
	for _, name := range s.set.Names() {
		if !slices.Contains(names, name) {
			hidden[name] = true
		}
	}
	for _, name := range names {
		store, _ := s.set.StoreID(name)
		g, _ := s.set.Get(name)
		if seen[store] {
			continue
		}
		seen[store] = true
		for _, cat := range g.Catalogs() {
			es, err := cat.Entries(ctx)
			if err != nil {
				continue
			}
			for _, e := range es {
				// An entry named after a template the token does not
				// reach is never shown, whatever the store: a config that
				// spells one store two ways must not show one tenant
				// another's templates.
				if (!gr.all() && !slices.Contains(names, e.Name)) || hidden[e.Name] {
					continue
				}
				id := e.ID + "\x00" + e.First.String() + "\x00" + e.By
				if listed[id] {
					continue
				}
				listed[id] = true
				if len(out) == wire.MaxMonitorSeries {
					more++
					continue
				}
				sp, err := sn.ReadCatalogEntry(e)
				if err != nil {
					sp = "(unreadable: " + err.Error() + ")"
				}
				first := e.First.UTC()
				if first.Year() < 0 || first.Year() > 9999 { // not a time JSON can carry: a corrupt row
					first = time.Time{}
				}
				out = append(out, wire.MonitorSeries{Store: store, ID: e.ID, Name: e.Name, Template: sp, First: first, By: e.By})
			}
			break // a store's catalogs are one
		}
	}
	return out, more
}

// addSegment adds a Segment's keys to mt, and returns its counters.
func addSegment(mt *wire.MonitorTemplate, seg *sequence.Segment) sequence.SegmentStats {
	st := seg.Stats()
	var keys []string
	if room := wire.MaxMonitorKeys - len(mt.Keys); room > 0 {
		keys = seg.Keys(room)
	}
	mt.MoreKeys += max(0, int(st.Keys)-len(keys))
	for _, key := range keys {
		ks, ok := seg.KeyStats(key)
		if !ok {
			continue // released since Keys
		}
		k := wire.KeyState{Key: key, Step: ks.Step, Fetching: ks.Fetching}
		if ks.Current.First > 0 && ks.Current.Len() > 0 { // {0, 0} is no block
			k.Block = &wire.Range{First: ks.Current.First, Last: ks.Current.Last}
			if ks.Issued > 0 {
				k.Last = ks.Current.First + ks.Issued - 1
			}
		}
		if ks.Next.First > 0 && ks.Next.Len() > 0 {
			k.Next = &wire.Range{First: ks.Next.First, Last: ks.Next.Last}
		}
		if ks.LastError != nil {
			k.Error = ks.LastError.Error()
		}
		mt.Keys = append(mt.Keys, k)
	}
	return st
}
