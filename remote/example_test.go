package remote_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"

	_ "github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/remote"
	"github.com/sngen/sn/server"
)

// A Go service prints a sn serve template's numbers itself, from blocks:
// here sn serve's handler runs in the same program, on 127.0.0.1.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "sn-example")
	defer os.RemoveAll(dir)
	cfg, _ := config.Decode([]byte(`
store: {backend: bolt, path: sn.db}
templates:
  orders: {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
`), "yaml")
	set, err := cfg.Build(context.Background(), config.WithDir(dir))
	if err != nil {
		panic(err)
	}
	defer set.Close()
	h, _ := server.New(set, server.Options{})
	ts := httptest.NewServer(h)
	defer ts.Close()

	ctx := context.Background()
	c, _ := client.New(ts.URL, client.Options{})
	orders, err := remote.New(ctx, c, "orders", remote.Options{})
	if err != nil {
		panic(err)
	}
	defer orders.Close()
	for range 3 {
		n, err := orders.Next(ctx) // from memory, but the first
		if err != nil {
			panic(err)
		}
		fmt.Println(n)
	}
	fmt.Println(orders.Stats().Fetches, "block asked of sn serve")
	// Output:
	// SN-00000001-8
	// SN-00000002-6
	// SN-00000003-4
	// 1 block asked of sn serve
}
