package catalog_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
)

// A store's catalog: the first enrollment of an ID records it, a second
// finds it, and a check that refuses records nothing.
func Example() {
	ctx := context.Background()
	cat := catalog.Of(sequence.NewMemoryAllocator())
	accept := func([]catalog.Entry) error { return nil }
	cat.Enroll(ctx, catalog.Entry{ID: "a1", Name: "orders", Spec: "ORD-@<seq>"}, accept)
	cat.Enroll(ctx, catalog.Entry{ID: "a1", Name: "orders again"}, accept)
	_, err := cat.Enroll(ctx, catalog.Entry{ID: "b2", Name: "invoices"}, func(es []catalog.Entry) error {
		return errors.New("collides with " + es[0].Name)
	})
	fmt.Println(err)
	es, _ := cat.Entries(ctx)
	for _, e := range es {
		fmt.Println(e.ID, e.Name)
	}
	// Output:
	// collides with orders
	// a1 orders
}
