package sqlite_test

import (
	"context"
	"fmt"
	"os"

	_ "github.com/sngen/sn/backend/sqlite"
	"github.com/sngen/sn/config"
)

// A config whose store is a sqlite file, relative to the directory given to
// the Build.
func Example() {
	dir, err := os.MkdirTemp("", "sn")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cfg, err := config.Decode([]byte(`
store: {backend: sqlite, path: sn.db}
templates:
  orders: {template: "SN-@<seq, width=8>"}
`), "yaml")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	set, err := cfg.Build(ctx, config.WithDir(dir))
	if err != nil {
		panic(err)
	}
	defer set.Close()
	orders, _ := set.Get("orders")
	for range 2 {
		n, err := orders.Next(ctx)
		fmt.Println(n, err)
	}
	// Output:
	// SN-00000001 <nil>
	// SN-00000002 <nil>
}
