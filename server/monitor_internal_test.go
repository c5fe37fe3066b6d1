package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/wire"
)

// A template over several Segments (balanced) lists at most
// MaxMonitorKeys keys in all, and counts the others.
func TestMonitorKeysBound(t *testing.T) {
	var mt wire.MonitorTemplate
	for s := range 3 {
		seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
		defer seg.Close()
		for k := range 70 {
			if _, err := seg.Next(context.Background(), fmt.Sprintf("key-%d-%03d", s, k)); err != nil {
				t.Fatal(err)
			}
		}
		addSegment(&mt, seg)
	}
	if len(mt.Keys) != wire.MaxMonitorKeys || mt.MoreKeys != 3*70-wire.MaxMonitorKeys {
		t.Errorf("%d keys listed and %d more; want %d and %d", len(mt.Keys), mt.MoreKeys, wire.MaxMonitorKeys, 3*70-wire.MaxMonitorKeys)
	}
}
