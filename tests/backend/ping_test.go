package backend_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
)

// Set.Ping asks each store once, naming the templates it serves: a store
// that stops answering is reported, the others still answer.
func TestSetPing(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	cfg := &config.Config{
		Store: config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db"}},
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>"},
			"b": {Template: "B@<seq>"},
			"c": {Template: "C@<seq>", Sequence: config.Sequence{Options: config.Options{"path": "other.db"}}},
			"d": {Template: "D@<seq>", Sequence: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://" + srv.Addr() + "/0"}}},
		},
	}
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	ping := func() (names [][]string, errs []error) {
		for _, st := range set.Ping(t.Context()) {
			names = append(names, st.Templates)
			errs = append(errs, st.Err)
		}
		return names, errs
	}
	names, errs := ping()
	if want := [][]string{{"a", "b"}, {"c"}, {"d"}}; !cmp.Equal(names, want) {
		t.Fatalf("stores %v; want %v", names, want)
	}
	if err := errors.Join(errs...); err != nil {
		t.Errorf("every store is up: %v", err)
	}
	srv.Kill(t)
	_, errs = ping()
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], sequence.ErrUnavailable) {
		t.Errorf("Redis killed: %v; want only d's store unavailable", errs)
	}
	set.Close()
	_, errs = ping()
	for i, err := range errs {
		if !errors.Is(err, sequence.ErrClosed) {
			t.Errorf("store %d after Close: %v; want ErrClosed", i, err)
		}
	}
}
