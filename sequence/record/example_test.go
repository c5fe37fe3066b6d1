package record_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/sngen/sn/sequence/record"
)

// Update reads, decides and writes if nobody wrote in between: here a
// counter kept in a record, raised by two writers.
func ExampleUpdate() {
	ctx := context.Background()
	s := record.NewMemory()
	add := func(n int) {
		err := record.Update(ctx, s, func(tx *record.Tx) error {
			r, err := tx.Get1("c/visits")
			if err != nil {
				return err
			}
			v, _ := strconv.Atoi(string(r.Value))
			tx.Put("c/visits", []byte(strconv.Itoa(v+n)))
			return nil
		})
		if err != nil {
			panic(err)
		}
	}
	add(2)
	add(3)
	rs, _ := s.Get(ctx, "c/visits")
	fmt.Println(string(rs[0].Value))
	// Output: 5
}

// Every process that opens a store reads the identity the first wrote.
func ExampleIdentity() {
	ctx := context.Background()
	s := record.NewMemory()
	a, _ := record.Identity(ctx, s)
	b, _ := record.Identity(ctx, s)
	other, _ := record.Identity(ctx, record.NewMemory())
	fmt.Println(a == b, a == other)
	// Output: true false
}
