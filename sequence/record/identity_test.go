package record_test

import (
	"sync"
	"testing"

	"github.com/sngen/sn/sequence/record"
)

// Processes that ask at once for a store's identity all read the one the
// first wrote; another store has another.
func TestIdentity(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := record.Identity(ctx, s)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("identities read at once: %q", ids)
		}
	}
	other, err := record.Identity(ctx, record.NewMemory())
	if err != nil || other == ids[0] {
		t.Fatalf("another store: %q, %v; the first is %q", other, err, ids[0])
	}
}
