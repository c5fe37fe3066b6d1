package sn_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// downAfter is a store that hands out one block and then is down.
type downAfter struct{ calls atomic.Int64 }

func (a *downAfter) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if a.calls.Add(1) > 1 {
		return sequence.Range{}, errors.New("connection refused")
	}
	return sequence.Range{First: 1, Last: n}, nil
}

// Found by an adversarial review, now fixed: a template with two sequences
// whose first store goes down in the middle of a NextN batch (the Segment
// returns 5 numbers and ErrUnavailable) made NextN panic. It returns the
// error, and no number: the second sequence drew none.
func TestNextNTwoSequencesPartial(t *testing.T) {
	seg := must(sequence.NewSegment(&downAfter{}, sequence.SegmentOptions{Step: 5, MaxStep: 5, Idle: -1}))
	defer seg.Close()
	g, err := sn.New(`A@<seq>-@<seq2>`, sn.WithSequence("seq", seg), sn.WithSequence("seq2", sequence.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("NextN panicked: %v", r)
		}
	}()
	out, err := g.Issue(context.Background(), sn.Request{N: 10})
	t.Logf("out=%q err=%v", out, err)
	if !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
}

// weirdGen is a Batcher that breaks its contract in one way per mode.
type weirdGen struct {
	c    atomic.Int64
	mode string
	mu   sync.Mutex
	kept []int64
}

func (g *weirdGen) Next(ctx context.Context, key string) (int64, error) { return g.c.Add(1), nil }

func (g *weirdGen) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	switch g.mode {
	case "fresh": // a different slice, not dst
		out := make([]int64, 0, n)
		for range n {
			out = append(out, g.c.Add(1))
		}
		return out, nil
	case "fewer":
		for range n / 2 {
			dst = append(dst, g.c.Add(1))
		}
		return dst, nil
	case "more":
		for range n + 3 {
			dst = append(dst, g.c.Add(1))
		}
		return dst, nil
	case "panic":
		dst = append(dst, g.c.Add(1))
		panic("batcher boom")
	case "zero":
		dst = append(dst, g.c.Add(1), 0, g.c.Add(1))
		return dst, nil
	case "keepdst": // keeps dst and scribbles into it on the next call
		g.mu.Lock()
		if g.kept != nil {
			for i := range g.kept[:cap(g.kept)] {
				g.kept[:cap(g.kept)][i] = 7
			}
		}
		for range n {
			dst = append(dst, g.c.Add(1))
		}
		g.kept = dst
		g.mu.Unlock()
		return dst, nil
	case "errpartial":
		dst = append(dst, g.c.Add(1))
		return dst, errors.New("store down")
	}
	for range n {
		dst = append(dst, g.c.Add(1))
	}
	return dst, nil
}

// Found by an adversarial review, now fixed: batches of the wrong size,
// zeros, panics and partial errors from a user's Batcher panicked NextN or
// said "not positive". NextN returns an error, never panics, and no string
// repeats or changes later.
func TestNextNBrokenBatcher(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"ok", "fresh", "fewer", "more", "panic", "zero", "keepdst", "errpartial"} {
		for _, tpl := range []string{`SN@<seq, width=4, overflow=grow>@<checksum, algo=luhn>`, `A@<seq>-@<seq2>`} {
			wg := &weirdGen{mode: mode}
			g, err := sn.New(tpl, sn.WithSequence("seq", wg), sn.WithSequence("seq2", &weirdGen{mode: "ok"}))
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			var copies []string
			for range 5 {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s %s: panic escaped: %v", mode, tpl, r)
						}
					}()
					out, err := g.Issue(ctx, sn.Request{N: 10})
					t.Logf("%-10s %-50s len=%d err=%v", mode, tpl, len(out), err)
					for _, s := range out {
						if s == "" {
							t.Errorf("%s: empty string", mode)
						}
					}
					all = append(all, out...)
					for _, s := range out {
						copies = append(copies, strings.Clone(s))
					}
				}()
			}
			seen := map[string]bool{}
			for i, s := range all {
				if s != copies[i] {
					t.Errorf("%s: string changed %q -> %q", mode, copies[i], s)
				}
				if seen[s] {
					t.Errorf("%s %s: repeat %q", mode, tpl, s)
				}
				seen[s] = true
			}
		}
	}
}
