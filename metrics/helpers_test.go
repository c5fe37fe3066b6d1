package metrics_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var timeZero time.Time

// gauge returns the value of the store's metric name.
func gauge(t *testing.T, reg *prometheus.Registry, name, store string) float64 {
	t.Helper()
	return read(t, reg, name, "store", store)
}

// read returns the value of the metric name whose label is value.
func read(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if m.Counter != nil {
						return m.Counter.GetValue()
					}
					return m.Gauge.GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, value)
	return 0
}
