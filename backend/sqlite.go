package backend

import (
	"context"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqliteseq"
)

// sqliteDriver is the sqlite backend: blocks of numbers reserved from one
// SQLite file (sqliteseq), which many processes of one machine may share,
// served through a sequence.Segment.
type sqliteDriver struct{}

// Check requires a path; the store is the file, whatever the path's
// spelling (config.Target.File).
func (sqliteDriver) Check(t *config.Target) (config.StoreInfo, error) {
	return checkFile(t, "sqlite")
}

// Open opens the SQLite file once per Build, and serves it.
func (sqliteDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, _ := decode(t) // Check accepted it
	abs, err := t.File(s.Path)
	if err != nil {
		return nil, err
	}
	store, err := config.Share(t, fileKey("sqlite", abs), func() (*sqliteseq.Store, error) {
		return sqliteseq.Open(abs, sqliteseq.Options{})
	})
	if err != nil {
		return nil, err
	}
	return config.Serve(t, store)
}
