package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

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

// A sqlite sequence without a path is refused at Validate, naming the field.
func TestPathRequired(t *testing.T) {
	cfg, err := config.Decode([]byte("store: {backend: sqlite}\ntemplates:\n  orders: {template: \"SN-@<seq>\"}\n"), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate()
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Field != "sequence.path" {
		t.Fatalf("Validate = %v; want a *config.Error for path", err)
	}
}
