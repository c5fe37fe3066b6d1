package boltseq

import (
	"context"

	bolt "go.etcd.io/bbolt"
)

// Ping reads the file in a transaction; a closed Store returns an error
// wrapping sequence.ErrClosed.
func (s *Store) Ping(ctx context.Context) error {
	return s.view(ctx, "Ping", func(*bolt.Tx) error { return nil })
}
