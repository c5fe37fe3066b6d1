package sqlseq_test

import (
	"errors"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// Ping answers while the database does.
func TestPing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			if err := s.Ping(t.Context()); err != nil {
				t.Errorf("Ping: %v", err)
			}
			db.Close()
			if err := s.Ping(t.Context()); !errors.Is(err, sequence.ErrUnavailable) {
				t.Errorf("Ping with the pool closed: %v; want ErrUnavailable", err)
			}
		})
	}
}
