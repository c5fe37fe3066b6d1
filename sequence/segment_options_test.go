package sequence

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestSegmentOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts SegmentOptions
		want string // substring of the error; "" for valid
	}{
		{"zero", SegmentOptions{}, ""},
		{"full", SegmentOptions{Step: 10, MinStep: 5, MaxStep: 20, Prefetch: 0.5, Target: time.Second, FetchTimeout: time.Second}, ""},
		{"negative-step", SegmentOptions{Step: -1}, "SegmentOptions.Step is -1"},
		{"negative-min", SegmentOptions{MinStep: -1}, "SegmentOptions.MinStep is -1"},
		{"negative-max", SegmentOptions{MaxStep: -1}, "SegmentOptions.MaxStep is -1"},
		{"min-above-max", SegmentOptions{MinStep: 20, MaxStep: 10}, "SegmentOptions.MinStep is 20, want at most MaxStep, 10"},
		{"step-below-min", SegmentOptions{Step: 5, MinStep: 10}, "SegmentOptions.Step is 5, want at least MinStep, 10"},
		{"step-above-max", SegmentOptions{Step: 50, MaxStep: 10}, "SegmentOptions.Step is 50, want at most MaxStep, 10"},
		{"prefetch-one", SegmentOptions{Prefetch: 1}, "Prefetch is 1, want a share between 0 and 1"},
		{"prefetch-negative", SegmentOptions{Prefetch: -0.1}, "Prefetch is -0.1"},
		{"prefetch-nan", SegmentOptions{Prefetch: math.NaN()}, "Prefetch is NaN"},
		{"negative-target", SegmentOptions{Target: -time.Second}, "Target is -1s"},
		{"negative-timeout", SegmentOptions{FetchTimeout: -time.Second}, "FetchTimeout is -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Validate = %v; want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v; want ErrInvalidArgument containing %q", err, tt.want)
			}
		})
	}
}

func TestSegmentOptionsDefaults(t *testing.T) {
	type steps struct {
		Step, MinStep, MaxStep int64
		Prefetch               float64
		Target, FetchTimeout   time.Duration
	}
	tests := []struct {
		name string
		opts SegmentOptions
		want steps
	}{
		{"zero", SegmentOptions{}, steps{1000, 1000, 1_000_000, 0.2, time.Minute, 5 * time.Second}},
		{"big-step", SegmentOptions{Step: 2_000_000}, steps{2_000_000, 2_000_000, 2_000_000, 0.2, time.Minute, 5 * time.Second}},
		{"small-max", SegmentOptions{MaxStep: 16}, steps{16, 16, 16, 0.2, time.Minute, 5 * time.Second}},
		{"min-only", SegmentOptions{MinStep: 5000}, steps{5000, 5000, 1_000_000, 0.2, time.Minute, 5 * time.Second}},
		{"min-above-max", SegmentOptions{MinStep: 20, MaxStep: 10}, steps{10, 10, 10, 0.2, time.Minute, 5 * time.Second}},
		{"negatives", SegmentOptions{Step: -1, MinStep: -1, MaxStep: -1, Prefetch: 2, Target: -1, FetchTimeout: -1}, steps{1000, 1000, 1_000_000, 0.2, time.Minute, 5 * time.Second}},
		{"kept", SegmentOptions{Step: 3, MinStep: 1, MaxStep: 16, Prefetch: 0.5, Target: time.Second, FetchTimeout: time.Millisecond}, steps{3, 1, 16, 0.5, time.Second, time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts.withDefaults()
			got := steps{o.Step, o.MinStep, o.MaxStep, o.Prefetch, o.Target, o.FetchTimeout}
			if got != tt.want {
				t.Errorf("withDefaults = %+v; want %+v", got, tt.want)
			}
			if o.Now == nil {
				t.Error("withDefaults left Now nil")
			}
		})
	}
}

func TestSegmentOptionsThreshold(t *testing.T) {
	tests := []struct {
		prefetch float64
		size     int64
		want     int64
	}{
		{0.2, 1000, 200},
		{0.2, 3, 1},
		{0.2, 1, 1},
		{0.99, 10, 10},
		{0.5, 5, 3},
		{0.2, math.MaxInt64, math.MaxInt64 / 5},
		{0.9999999999999999, math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		got := SegmentOptions{Prefetch: tt.prefetch}.threshold(tt.size)
		// float64 rounding makes the last case approximate.
		if d := got - tt.want; d < -1024 || d > 1024 {
			t.Errorf("threshold(%v, %d) = %d; want %d", tt.prefetch, tt.size, got, tt.want)
		}
	}
}
