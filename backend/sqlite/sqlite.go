// Package sqlite registers the "sqlite" backend of package
// github.com/sngen/sn/config: blocks of numbers reserved from one SQLite
// file (package sequence/sqliteseq, through a driver written in Go, no
// cgo), which the processes of one machine may share, served through a
// sequence.Segment. Import it for its side effect:
//
//	import _ "github.com/sngen/sn/backend/sqlite"
//
// A sqlite sequence reads path (required: the file, relative to
// config.WithDir's directory) and the steps of its Segment: step,
// min_step, max_step, prefetch, target, fetch_timeout and idle. A Build
// opens each file once, however many templates, and however many
// spellings of its path, name it.
package sqlite

import (
	"context"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqliteseq"
)

func init() { config.Register("sqlite", driver{}) }

// driver is the sqlite backend.
type driver struct{}

// Check requires a path; the store is the file, whatever the path's
// spelling (config.CheckFile).
func (driver) Check(t *config.Target) (config.StoreInfo, error) {
	return config.CheckFile(t, "sqlite")
}

// Open opens the SQLite file once per Build, and serves it.
func (driver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := config.CheckFile(t, "sqlite")
	if err != nil {
		return nil, err
	}
	abs := st.ID[len("sqlite "):] // the ID is the backend and the file, the Share key too
	store, err := config.Share(t, st.ID, func() (*sqliteseq.Store, error) {
		return sqliteseq.Open(abs, sqliteseq.Options{})
	})
	if err != nil {
		return nil, err
	}
	return config.Serve(t, store)
}
