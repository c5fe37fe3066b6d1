package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/sngen/sn"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/server"
)

// A remote template is used like a Generator, and its errors match the
// library's sentinels.
func ExampleGenerator() {
	ctx := context.Background()
	cfg, err := config.Decode([]byte(`templates:
  tickets: {template: "@<customer, chars=A-Z, maxlen=4>-@<seq, width=4>"}
`), "yaml")
	if err != nil {
		panic(err)
	}
	set, err := cfg.Build(ctx) // the memory store, for the example: sn serve wants a durable one
	if err != nil {
		panic(err)
	}
	defer set.Close()
	h, err := server.New(set, server.Options{})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(h) // sn serve, in a real program
	defer ts.Close()

	c, err := client.New(ts.URL, client.Options{})
	if err != nil {
		panic(err)
	}
	tickets := c.Generator("tickets")
	nums, err := tickets.Issue(ctx, client.Request{N: 3, Vars: sn.Vars{"customer": "ACME"}})
	fmt.Println(nums, err)

	_, err = tickets.Next(ctx)
	var ce *client.Error
	fmt.Println(errors.Is(err, sn.ErrVarMissing), errors.As(err, &ce) && ce.Field == "vars.customer", ce.Status, ce.Code)
	// Output:
	// [ACME-0001 ACME-0002 ACME-0003] <nil>
	// true true 400 var_missing
}
