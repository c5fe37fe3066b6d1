package record

import (
	"context"
	"crypto/rand"
)

// IdentityKey is the record that names a store: see [Identity].
const IdentityKey = "m/id"

// Identity returns the identity of the store whose records s are: a
// random value that the first process to ask writes under [IdentityKey],
// and that every process opening the same store reads back; another
// store has another. A copy of a store's data (a file copied, a dump
// restored) has the same identity as the store it was copied from.
func Identity(ctx context.Context, s Store) (string, error) {
	var id string
	err := Update(ctx, s, func(tx *Tx) error {
		r, err := tx.Get1(IdentityKey)
		if err != nil {
			return err
		}
		if r.Exists() {
			id = string(r.Value)
			return nil
		}
		id = "records " + rand.Text()
		tx.Put(IdentityKey, []byte(id))
		return nil
	})
	return id, err
}
