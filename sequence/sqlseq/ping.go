package sqlseq

import (
	"context"
	"fmt"

	"github.com/sngen/sn/sequence"
)

// Ping asks the database whether it answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlseq: Ping (table %s): %w: %w", s.table, sequence.ErrUnavailable, err)
	}
	return nil
}
