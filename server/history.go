package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/wire"
)

// The monitor keeps an hour of what each template did, a point every five
// seconds, in memory: enough to see at a glance what the rate did, where
// errors came from and when the store slowed.
const (
	historyStep  = 5 * time.Second
	historySlots = 720 // an hour of historyStep
)

// slot is what a template did in one historyStep. Requests add to the
// counts of the requests with atomic adds, taking no lock; the block
// counters are written when the slot begins, under history.mu.
type slot struct {
	n         atomic.Int64 // the slot: Unix time / historyStep; 0 for none yet
	issued    atomic.Int64 // numbers issued by next
	handed    atomic.Int64 // numbers handed out in blocks
	client    atomic.Int64 // requests that failed with a 4xx
	server    atomic.Int64 // requests that failed with a 5xx
	fetches   int64        // block fetches of the template's stores
	fetchTime time.Duration
	waits     int64 // calls that waited at a block's edge
}

// history is a template's last hour, a ring of slots.
type history struct {
	mu    sync.Mutex // rolls slots over, and reads them
	slots [historySlots]slot
	stats func() (sequence.SegmentStats, bool) // the template's stores' counters now
	last  sequence.SegmentStats                // at the last sample
	seen  atomic.Int64                         // the slot of the last sample, written under mu
}

// slotOf returns the slot of now. The first call of a slot takes the lock
// to empty it of an hour ago, and to add to it the change of the stores'
// counters since the last sample; the others only load its number.
func (h *history) slotOf(now time.Time) *slot {
	n := now.UnixNano() / int64(historyStep)
	s := &h.slots[n%historySlots]
	if s.n.Load() != n || h.stats != nil && h.seen.Load() != n {
		h.mu.Lock()
		h.roll(s, n)
		h.mu.Unlock()
	}
	return s
}

// roll empties s for slot n when it holds an older one (its counts first,
// then its number, so that an add that sees n adds to the new slot), and
// samples the stores' counters once per slot. Called with h.mu held.
func (h *history) roll(s *slot, n int64) {
	if s.n.Load() != n {
		s.issued.Store(0)
		s.handed.Store(0)
		s.client.Store(0)
		s.server.Store(0)
		s.fetches, s.fetchTime, s.waits = 0, 0, 0
		s.n.Store(n)
	}
	if h.seen.Load() != n && h.stats != nil {
		h.seen.Store(n)
		if st, ok := h.stats(); ok {
			s.fetches += st.Fetches - h.last.Fetches
			s.fetchTime += st.FetchTime - h.last.FetchTime
			s.waits += st.Waits - h.last.Waits
			h.last = st
		}
	}
}

// issued records a request to issue that ended with code ("" for none),
// having issued n numbers.
func (h *history) issued(now time.Time, n int, code wire.Code) {
	s := h.slotOf(now)
	s.issued.Add(int64(n))
	switch {
	case code == "":
	case code.Status() >= 500:
		s.server.Add(1)
	default:
		s.client.Add(1)
	}
}

// handed records a block of n numbers handed out.
func (h *history) handed(now time.Time, n int64) {
	h.slotOf(now).handed.Add(n)
}

// read returns the last hour up to now, oldest first.
func (h *history) read(now time.Time) *wire.History {
	h.mu.Lock()
	defer h.mu.Unlock()
	end := now.UnixNano() / int64(historyStep)
	out := &wire.History{
		StepSeconds: historyStep.Seconds(), End: time.Unix(0, (end+1)*int64(historyStep)).UTC(),
		Issued: make([]int64, historySlots), Handed: make([]int64, historySlots),
		ClientErrors: make([]int64, historySlots), ServerErrors: make([]int64, historySlots),
		Fetches: make([]int64, historySlots), FetchMillis: make([]float64, historySlots), Waits: make([]int64, historySlots),
	}
	for i := range historySlots {
		n := end - int64(historySlots-1-i)
		s := &h.slots[((n%historySlots)+historySlots)%historySlots]
		if i == historySlots-1 {
			h.roll(s, n) // the slot of now, with the stores' latest counters
		}
		if s.n.Load() != n {
			continue
		}
		out.Issued[i], out.Handed[i], out.ClientErrors[i], out.ServerErrors[i] = s.issued.Load(), s.handed.Load(), s.client.Load(), s.server.Load()
		out.Fetches[i], out.Waits[i] = s.fetches, s.waits
		out.FetchMillis[i] = float64(s.fetchTime.Microseconds()) / 1000
	}
	// Points before the first that holds anything are left out: a quiet
	// template's hour is short.
	first := historySlots - 1
	for i := range historySlots {
		if out.Issued[i] != 0 || out.Handed[i] != 0 || out.ClientErrors[i] != 0 || out.ServerErrors[i] != 0 || out.Fetches[i] != 0 || out.Waits[i] != 0 {
			first = i
			break
		}
	}
	out.Issued, out.Handed, out.ClientErrors, out.ServerErrors = out.Issued[first:], out.Handed[first:], out.ClientErrors[first:], out.ServerErrors[first:]
	out.Fetches, out.FetchMillis, out.Waits = out.Fetches[first:], out.FetchMillis[first:], out.Waits[first:]
	return out
}

// rate returns the numbers issued and handed out per second over the
// last d, up to now.
func (h *history) rate(now time.Time, d time.Duration) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	end := now.UnixNano() / int64(historyStep)
	k := int64(d / historyStep)
	var sum int64
	for n := end - k + 1; n <= end; n++ {
		if s := &h.slots[((n%historySlots)+historySlots)%historySlots]; s.n.Load() == n {
			sum += s.issued.Load() + s.handed.Load()
		}
	}
	// The slot of now is under way: count the time it has run.
	secs := float64(k-1)*historyStep.Seconds() + float64(now.UnixNano()%int64(historyStep))/1e9
	if secs <= 0 {
		return 0
	}
	return float64(sum) / secs
}

// rateWindow is how far back the capacity's rate looks.
const rateWindow = 10 * time.Minute

// warnRatio is the share of a width used from which the monitor warns.
const warnRatio = 0.8

// capacity works out how much of template g's width its fullest counter
// key held in memory has used, and, at the rate of the last ten
// minutes, whether and when the width runs out before the key's period
// ends. keys are the keys held and the last number of each (issued by
// the server, or handed out in a block); nil without a width.
func capacity(g *sn.Generator, now time.Time, keys map[string]int64, rate float64) *wire.Capacity {
	var max int64
	for _, p := range g.Explain().Parts {
		if p.Kind == "sequence" {
			max = p.Max
			break
		}
	}
	if max <= 0 {
		return nil
	}
	c := &wire.Capacity{Max: max, Rate: rate}
	for k, last := range keys {
		if last > c.Last || (last == c.Last && k < c.Key) {
			c.Key, c.Last = k, last
		}
	}
	c.Ratio = float64(c.Last) / float64(max)
	if end, ok := periodEnd(g, now); ok {
		c.PeriodEnd = &end
	}
	if rate > 0 {
		// In float seconds first: a wide width at a slow rate lasts
		// longer than a Duration holds.
		secs := float64(max-c.Last) / rate
		if secs < (400 * 24 * time.Hour).Seconds() {
			out := now.Add(time.Duration(secs * float64(time.Second)))
			if c.PeriodEnd == nil || out.Before(*c.PeriodEnd) {
				out = out.UTC().Truncate(time.Second)
				c.RunsOut = &out
			}
		}
	}
	c.Warn = c.Ratio >= warnRatio || c.RunsOut != nil
	return c
}

// periodEnd returns when the period of g's counter key at now ends: the
// first instant whose key differs, found to the second within 400 days;
// ok is false for a key without a period.
func periodEnd(g *sn.Generator, now time.Time) (time.Time, bool) {
	key := func(t time.Time) string {
		k, err := g.Key(sn.Request{At: t})
		if err != nil {
			return ""
		}
		return k
	}
	k0 := key(now)
	lo, hi := now.Truncate(time.Second), now.Add(400*24*time.Hour)
	if key(hi) == k0 {
		return time.Time{}, false
	}
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
		if key(mid) == k0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi.UTC(), true
}

// gapKinds are the journal records that leave numbers unissued.
var gapKinds = map[journal.EventKind]bool{journal.Released: true, journal.Voided: true, journal.Floored: true, journal.Lost: true, journal.Returned: true}

// latestGaps returns up to limit of the last records of key's journal
// that leave numbers unissued, newest first: what sn gaps explains.
func latestGaps(ctx context.Context, g *sn.Generator, key string, limit int) []wire.Gap {
	j, err := g.Journal()
	if err != nil || key == "" {
		return nil
	}
	head, err := j.Head(ctx, key)
	if err != nil {
		return nil
	}
	const scan = 500 // the records looked at
	evs, err := j.Events(ctx, key, max(0, head.Seq-scan), scan)
	if err != nil {
		return nil
	}
	var out []wire.Gap
	for i := len(evs) - 1; i >= 0 && len(out) < limit; i-- {
		e := evs[i]
		if !gapKinds[e.Kind] {
			continue
		}
		out = append(out, wire.Gap{Kind: e.Kind.String(), First: e.Range.First, Last: e.Range.Last, At: e.At.UTC(), By: e.By, Actor: e.Actor, Reason: e.Reason})
	}
	return out
}

// Capacities returns the capacity of each template whose numbers have a
// width, by name, as the monitor shows it: for an alert
// (metrics.WatchCapacity exports it as sn_series_capacity_ratio).
func (s *Server) Capacities() map[string]wire.Capacity {
	now := time.Now()
	out := map[string]wire.Capacity{}
	for _, name := range s.set.Names() {
		g, _ := s.set.Get(name)
		if c := s.capacity(name, g, now, nil); c != nil {
			out[name] = *c
		}
	}
	return out
}
