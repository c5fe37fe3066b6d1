package backend

import (
	"context"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

// boltDriver is the bolt backend: blocks of numbers reserved from an
// embedded bbolt file (boltseq), served through a sequence.Segment.
type boltDriver struct{}

// Check requires a path; the store is the file, whatever the path's
// spelling (config.Target.File).
func (boltDriver) Check(t *config.Target) (config.StoreInfo, error) {
	return checkFile(t, "bolt")
}

// Open opens the bolt file, or shares the one the Build has open.
func (boltDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	store, err := openBolt(ctx, t)
	if err != nil {
		return nil, err
	}
	return config.Serve(t, store)
}

// openBolt opens the bolt file at t's path once per Build; bolt and
// redis-strict sequences share it.
func openBolt(ctx context.Context, t *config.Target) (*boltseq.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, _ := decode(t) // Check accepted it
	abs, err := t.File(s.Path)
	if err != nil {
		return nil, err
	}
	return config.Share(t, fileKey("bolt", abs), func() (*boltseq.Store, error) {
		return boltseq.Open(abs, boltseq.Options{LockTimeout: t.LockWait})
	})
}
