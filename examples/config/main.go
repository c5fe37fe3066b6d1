// Command config issues numbers from the named templates of a config file,
// sn.yaml: two templates whose counters live in an embedded bbolt file and
// one that counts in memory.
//
//	go run ./examples/config -config examples/config/sn.yaml -state /tmp/shop
//
// Run it twice with the same -state directory: the stored counters go on
// where the first run left them, the memory one starts again.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/backend"
)

func main() {
	config := flag.String("config", "sn.yaml", "the config file")
	state := flag.String("state", "", "the directory of the store file (default: a new temporary directory)")
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

// run loads the config file at path, keeps the store files in the
// directory state and prints a few numbers of each template.
func run(w io.Writer, path, state string, now func() time.Time) (err error) {
	ctx := context.Background()
	cfg, err := sn.LoadConfig(path)
	if err != nil {
		return err
	}

	// The Opener opens shop.db once for both templates that use it, in
	// the state directory, and closes it with the last of them.
	open := backend.New(backend.Options{Dir: state})
	defer open.Close()
	set, err := cfg.Build(ctx, open.Open, sn.WithClock(now))
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
		nums, err := g.NextN(ctx, 3)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-9s %v\n", name+":", nums)
	}
	return nil
}
