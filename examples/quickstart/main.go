// Command quickstart prints a few order numbers from a template, using the
// in-memory sequence. It is the 30-second tour of sn:
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

func main() {
	if err := run(os.Stdout, time.Now); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer, now func() time.Time) error {
	ctx := context.Background()
	mem := sequence.NewMemory()

	// A prefix, an 8-digit counter and a Luhn check digit.
	orders, err := sn.New(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
		sn.WithSequence("seq", mem))
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		n, err := orders.Next(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, n)
	}

	// The date in Shanghai and a counter that restarts every day there.
	daily, err := sn.New(`@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		sn.WithSequence("seq", mem), sn.WithClock(now))
	if err != nil {
		return err
	}
	n, err := daily.Next(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, n)

	// An area and a unit given per call, with a counter per unit.
	waybills, err := sn.New(`@<area>-@<unit>-@<seq, width=5, key=unit>`, sn.WithSequence("seq", mem))
	if err != nil {
		return err
	}
	for _, unit := range []string{"6541", "6542", "6541"} {
		nums, err := waybills.Issue(ctx, sn.Request{Vars: sn.Vars{"area": "010", "unit": unit}})
		if err != nil {
			return err
		}
		fmt.Fprintln(w, nums[0])
	}

	// Parse a number back.
	fmt.Fprintln(w, orders.Validate("SN-00000001-8") == nil, orders.Validate("SN-00000001-3"))
	return nil
}
