package sequence_test

import (
	"errors"
	"math"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sequencetest"
)

func TestMemoryAllocatorConformance(t *testing.T) {
	sequencetest.RunAllocator(t, func(t *testing.T) sequence.Allocator { return sequence.NewMemoryAllocator() })
}

func TestMemoryAllocator(t *testing.T) {
	ctx := t.Context()
	a := sequence.NewMemoryAllocator()
	tests := []struct {
		name    string
		floor   int64 // applied first when > 0
		n       int64
		want    sequence.Range
		wantErr error
	}{
		{name: "first", n: 3, want: sequence.Range{First: 1, Last: 3}},
		{name: "next", n: 1, want: sequence.Range{First: 4, Last: 4}},
		{name: "zero", n: 0, wantErr: sequence.ErrInvalidArgument},
		{name: "negative", n: -5, wantErr: sequence.ErrInvalidArgument},
		{name: "floored", floor: 100, n: 2, want: sequence.Range{First: 101, Last: 102}},
		{name: "lower-floor", floor: 50, n: 1, want: sequence.Range{First: 103, Last: 103}},
		{name: "up-to-max", floor: math.MaxInt64 - 2, n: 2, want: sequence.Range{First: math.MaxInt64 - 1, Last: math.MaxInt64}},
		{name: "exhausted", n: 1, wantErr: sequence.ErrExhausted},
	}
	for _, tt := range tests {
		if tt.floor > 0 {
			if err := a.Floor(ctx, "k", tt.floor); err != nil {
				t.Fatalf("%s: Floor(%d) = %v", tt.name, tt.floor, err)
			}
		}
		r, err := a.Allocate(ctx, "k", tt.n)
		if !errors.Is(err, tt.wantErr) || r != tt.want {
			t.Errorf("%s: Allocate(%d) = %v, %v; want %v, %v", tt.name, tt.n, r, err, tt.want, tt.wantErr)
		}
	}
	if err := a.Floor(ctx, "k", -1); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Floor(-1) = %v; want ErrInvalidArgument", err)
	}
}

func TestMemoryAllocatorNearMax(t *testing.T) {
	a := sequence.NewMemoryAllocator()
	if err := a.Floor(t.Context(), "k", math.MaxInt64-5); err != nil {
		t.Fatal(err)
	}
	_, err := a.Allocate(t.Context(), "k", 10)
	if !errors.Is(err, sequence.ErrExhausted) {
		t.Errorf("Allocate(10) with 5 left = %v; want ErrExhausted", err)
	}
	if want := `sequence: key exhausted: key "k" has 5 numbers left, Allocate asked for 10`; err == nil || err.Error() != want {
		t.Errorf("error %q; want %q", err, want)
	}
}
