package server

import (
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/wire"
)

// A wide width at a slow rate lasts longer than a time.Duration holds:
// its capacity says it does not run out, and warns of nothing; a narrow
// one at a fast rate runs out, and warns.
func TestCapacityWideAndSlow(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		text     string
		last     int64
		rate     float64
		runsOut  bool
		warn     bool
		periodOK bool
	}{
		{"W@<seq, width=16>", 3, 0.005, false, false, false},
		{"E@<seq, width=8>", 3, 0.005, false, false, false},
		{"T@<seq, width=10>", 3, 1, false, false, false},
		{"N@<seq, width=4>", 9000, 1, true, true, false},
		{"D@<date, format=yyyyMMdd>@<seq, width=4, reset=day>", 5000, 1, true, false, true},
		{"D@<date, format=yyyyMMdd>@<seq, width=6, reset=day>", 5000, 1, false, false, true},
	} {
		g, err := sn.New(tc.text, sn.WithSequence("seq", sequence.NewMemory()))
		if err != nil {
			t.Fatal(err)
		}
		key, _ := g.Key(sn.Request{At: now})
		c := capacity(g, now, map[string]int64{key: tc.last}, tc.rate)
		if c == nil || (c.RunsOut != nil) != tc.runsOut || c.Warn != (tc.warn || tc.runsOut) || (c.PeriodEnd != nil) != tc.periodOK {
			t.Errorf("%s at %d, %v/s: %+v", tc.text, tc.last, tc.rate, c)
			continue
		}
		if c.RunsOut != nil && !c.RunsOut.After(now) {
			t.Errorf("%s: runs out at %v, before now", tc.text, c.RunsOut)
		}
	}
}

// Requests counted at once, from many goroutines and across slots, are
// all in the history: the adds take no lock, the roll-over does.
func TestHistoryConcurrent(t *testing.T) {
	h := &history{stats: func() (sequence.SegmentStats, bool) { return sequence.SegmentStats{}, true }}
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 3000 {
				at := start.Add(time.Duration(i) * 10 * time.Millisecond) // 30 s: six slots
				code := ""
				if (i+g)%10 == 0 {
					code = "var_invalid"
				}
				h.issued(at, 2, wire.Code(code))
			}
		}()
	}
	for range 8 {
		<-done
	}
	hist := h.read(start.Add(30 * time.Second))
	var issued, client int64
	for i := range hist.Issued {
		issued += hist.Issued[i]
		client += hist.ClientErrors[i]
	}
	if issued != 8*3000*2 || client != 8*300 {
		t.Errorf("issued %d, client errors %d; want %d and %d", issued, client, 8*3000*2, 8*300)
	}
}
