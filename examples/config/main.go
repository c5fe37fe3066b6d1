// Command config issues numbers from the named templates of a config file,
// sn.yaml (built into the program; -config reads another): two templates
// whose counters live in an embedded bbolt file and one that counts in
// memory.
//
//	go run ./examples/config -state /tmp/shop
//
// Run it twice with the same -state directory: the stored counters go on
// where the first run left them, the memory one starts again.
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sngen/sn"
	_ "github.com/sngen/sn/backend/bolt" // the bolt backend of shop.db
	"github.com/sngen/sn/config"
)

// shop is sn.yaml, for running the example from any directory.
//
//go:embed sn.yaml
var shop []byte

func main() {
	config := flag.String("config", "", "the config file (default: the sn.yaml built in)")
	state := flag.String("state", "", "the directory of the store file, created if need be (default: a new temporary directory)")
	flag.Parse()
	temp := *state == ""
	if temp {
		dir, err := os.MkdirTemp("", "sn-example")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		*state = dir
	}
	err := run(os.Stdout, *config, *state, time.Now)
	if temp {
		os.RemoveAll(*state)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run loads the config file at path (the built-in sn.yaml when path is
// ""), keeps the store files in the directory state, which it creates if
// need be, and prints a few numbers of each template.
func run(w io.Writer, path, state string, now func() time.Time) (err error) {
	ctx := context.Background()
	if err := os.MkdirAll(state, 0o700); err != nil {
		return err
	}
	var cfg *config.Config
	if path == "" {
		cfg, err = config.Decode(shop, "yaml")
	} else {
		cfg, err = config.Load(path)
	}
	if err != nil {
		return err
	}

	// Build opens shop.db, in the state directory, once for both templates
	// that use it; set.Close closes it.
	set, err := cfg.Build(ctx, config.WithDir(state), config.WithOptions(sn.WithClock(now)))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := set.Close(); err == nil {
			err = cerr
		}
	}()

	for _, name := range set.Names() {
		g, _ := set.Get(name)
		nums, err := g.Issue(ctx, sn.Request{N: 3})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-9s %v\n", name+":", nums)
	}
	return nil
}
