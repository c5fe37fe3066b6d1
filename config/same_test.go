package config_test

import (
	"context"
	"testing"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

// genFunc is a Gen of a func type: values of it cannot be compared.
type genFunc func(ctx context.Context, key string) (int64, error)

func (f genFunc) Next(ctx context.Context, key string) (int64, error) { return f(ctx, key) }

// wrapped is a comparable struct type that holds an uncomparable Gen.
type wrapped struct{ g sequence.Gen }

func (w wrapped) Next(ctx context.Context, key string) (int64, error) { return w.g.Next(ctx, key) }

type funcDriver struct{}

func (funcDriver) Check(t *config.Target) (config.StoreInfo, error) {
	return config.StoreInfo{Durable: true, Fields: []string{"url"}, ID: "func " + urlOf(t)}, nil
}

func (funcDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	m := sequence.NewMemory()
	return wrapped{genFunc(m.Next)}, nil
}

// A driver whose Gen is a struct holding a func-typed Gen: Build, Ping and
// Close compare Gens, and must not panic ("comparing uncomparable type").
func TestBuildUncomparableGen(t *testing.T) {
	config.RegisterForTest(t, "func-test", funcDriver{})
	cfg, err := config.Decode([]byte(`
store: {backend: func-test, url: "x"}
templates:
  a: {template: "A@<seq>"}
  b: {template: "B@<seq>"}
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Ping(context.Background()); len(got) != 1 || len(got[0].Templates) != 2 {
		t.Errorf("Ping: %+v, want one store of two templates", got)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if !sequence.Same(sequence.Gen(nil), nil) || sequence.Same(wrapped{genFunc(nil)}, wrapped{genFunc(nil)}) {
		t.Errorf("Same: nil is itself; two uncomparable values are different")
	}
}
