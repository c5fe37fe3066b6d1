package config_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/config"
)

// Decode sets a driver's struct from a sequence's Options, as a file
// holds them, and names each field of the wrong type.
func TestDecode(t *testing.T) {
	type common struct {
		URL string `yaml:"url"`
	}
	type opts struct {
		common
		Path      string   `yaml:"path"`
		Workers   int      `yaml:"workers"`
		Worker    *int64   `yaml:"worker"`
		Share     float64  `yaml:"share"`
		Single    bool     `yaml:"single_host"`
		Endpoints []string `yaml:"endpoints"`
		Ignored   string   `yaml:"-"`
		Name      string   // no tag: "name"
	}
	target := func(o config.Options) *config.Target {
		return &config.Target{Sequence: config.Sequence{Options: o}}
	}
	var got opts
	err := target(config.Options{
		"url": "redis://a", "path": "a.db", "workers": 3, "worker": 0, "share": 1, "single_host": "yes",
		"endpoints": []any{"a:1", "b:2"}, "name": "n", "other": "left for the Store's Fields",
	}).Decode(&got)
	zero := int64(0)
	want := opts{common: common{URL: "redis://a"}, Path: "a.db", Workers: 3, Worker: &zero, Share: 1, Single: true, Endpoints: []string{"a:1", "b:2"}, Name: "n"}
	if err != nil || !cmp.Equal(got, want, cmp.AllowUnexported(opts{})) {
		t.Errorf("Decode = %+v, %v; want %+v", got, err, want)
	}
	// JSON's whole numbers come as float64.
	var n opts
	if err := target(config.Options{"workers": float64(7)}).Decode(&n); err != nil || n.Workers != 7 {
		t.Errorf("a whole float64: %d, %v", n.Workers, err)
	}

	err = target(config.Options{
		"path": 5, "workers": 1.5, "single_host": "maybe", "endpoints": "a:1", "worker": "3", "share": "x",
	}).Decode(&n)
	var msgs []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *config.Error
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *config.Error", e)
		}
		msgs = append(msgs, ce.Field+": "+ce.Err.Error())
	}
	wantMsgs := []string{
		`endpoints: want a list, found "a:1"`,
		`path: want a string, found 5`,
		`share: want a number, found "x"`,
		`single_host: want true or false, found "maybe"`,
		`worker: want a whole number, found "3"`,
		`workers: want a whole number, found 1.5`,
	}
	if diff := cmp.Diff(wantMsgs, msgs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if err := target(nil).Decode(opts{}); err == nil {
		t.Error("Decode of a struct, not a pointer: no error")
	}
}
