package config_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

// kvDriver is a third-party backend whose counters are kept by a
// key-value cluster at its endpoints; a sequence.MemoryAllocator stands
// for its client here.
type kvDriver struct{}

// kvOptions are the kv backend's own fields, as a file spells them.
type kvOptions struct {
	Endpoints   []string `yaml:"endpoints"`
	DialTimeout string   `yaml:"dial_timeout"`
}

// options decodes and checks t's kv fields.
func (kvDriver) options(t *config.Target) (kvOptions, error) {
	var o kvOptions
	if err := t.Decode(&o); err != nil {
		return o, err
	}
	if len(o.Endpoints) == 0 {
		return o, &config.Error{Field: "endpoints", Err: errors.New("the kv backend needs the cluster's endpoints (set endpoints here or in store)")}
	}
	if d, err := time.ParseDuration(o.DialTimeout); o.DialTimeout != "" && (err != nil || d <= 0) {
		return o, &config.Error{Field: "dial_timeout", Err: fmt.Errorf("%q: want a positive duration such as \"2s\"", o.DialTimeout)}
	}
	return o, nil
}

// Check decodes the backend's fields, says which fields it reads (its
// own and the steps of the Segment it serves through), and where its
// counters live, without connecting.
func (d kvDriver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: []string{"endpoints", "dial_timeout", "step"}}
	o, err := d.options(t)
	if err != nil {
		return st, err
	}
	st.ID = "kv " + strings.Join(o.Endpoints, ",")
	return st, nil
}

// Open connects once per Build, however many templates use the cluster,
// and serves each template from blocks of numbers.
func (d kvDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	o, err := d.options(t)
	if err != nil {
		return nil, err
	}
	client, err := config.Share(t, "kv "+strings.Join(o.Endpoints, ","), func() (*sequence.MemoryAllocator, error) {
		return sequence.NewMemoryAllocator(), nil // connect to o.Endpoints
	})
	if err != nil {
		return nil, err
	}
	return sequence.NewSegment(client, sequence.SegmentOptions{Step: t.Sequence.Step})
}

// A package that implements a backend registers its driver in its init
// function; a program imports it for that side effect. The driver's own
// fields sit in the file beside the common ones, and it decodes them into
// a struct of its own: a wrong type or a field it does not read is an
// error with its line.
func ExampleRegister() {
	config.Register("kv", kvDriver{}) // in func init

	cfg, err := config.Decode([]byte(`
store: {backend: kv, endpoints: [kv1:2379, kv2:2379], dial_timeout: 2s, step: 100}
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

	bad, _ := config.Decode([]byte(`
store: {backend: kv, endpoints: kv1:2379}
templates:
  orders:
    template: "SN-@<seq, width=8>"
    sequence: {endpoint: kv2:2379}
`), "yaml")
	fmt.Println(bad.Validate())
	// Output:
	// SN-00000001 <nil>
	// config: line 6: template "orders": sequence.endpoint: not used by the kv backend; did you mean endpoints?
	// config: line 2: store.endpoints: want a list, found "kv1:2379"
}
