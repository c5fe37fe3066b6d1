package config_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

// remoteDriver is a backend whose counters are kept by a server at the
// sequence's url; a sequence.MemoryAllocator stands for its client here.
type remoteDriver struct{}

// Check says which fields the backend reads and requires, and where its
// counters live, without connecting.
func (remoteDriver) Check(t *config.Target) (config.Store, error) {
	st := config.Store{Durable: true, Fields: []string{"url", "step"}}
	if t.Sequence.URL == "" {
		return st, &config.Error{Field: "url", Err: errors.New("the remote backend needs a URL (set url here or in store)")}
	}
	st.ID = "remote " + t.Sequence.URL
	return st, nil
}

// Open connects once per Build, however many templates use the server,
// and serves each template from blocks of numbers.
func (remoteDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	client, err := config.Share(t, "remote "+t.Sequence.URL, func() (*sequence.MemoryAllocator, error) {
		return sequence.NewMemoryAllocator(), nil // connect to t.Sequence.URL
	})
	if err != nil {
		return nil, err
	}
	return sequence.NewSegment(client, sequence.SegmentOptions{Step: t.Sequence.Step}), nil
}

// A package that implements a backend registers its driver in its init
// function; a program imports it for that side effect.
func ExampleRegister() {
	config.Register("remote", remoteDriver{}) // in func init

	cfg, err := config.Parse([]byte(`
store: {backend: remote, url: "remote://numbers.internal", step: 100}
templates:
  orders: {template: "SN-@<seq, width=8>"}
`), "yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := cfg.Build(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	orders, _ := set.Get("orders")
	fmt.Println(orders.Next(context.Background()))
}
