// Package bolt registers the "bolt" backend of package
// github.com/sngen/sn/config: blocks of numbers reserved from one embedded
// bbolt file (package sequence/boltseq), served through a
// sequence.Segment. Import it for its side effect:
//
//	import _ "github.com/sngen/sn/backend/bolt"
//
// A bolt sequence reads path (required: the file, relative to
// config.WithDir's directory) and the steps of its Segment: step,
// min_step, max_step, prefetch, target, fetch_timeout and idle. A Build
// opens each file once, however many templates, and however many
// spellings of its path, name it.
package bolt

import (
	"context"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

func init() { config.Register("bolt", driver{}) }

// fields are a bolt sequence's own fields.
type fields struct {
	// Path is the bbolt file. A relative path is resolved against the
	// directory given to config.WithDir.
	Path string `yaml:"path"`
}

// driver is the bolt backend.
type driver struct{}

// Check requires a path; the store is the file, whatever the path's
// spelling (config.CheckFile).
func (driver) Check(t *config.Target) (config.StoreInfo, error) {
	return config.CheckFile(t, "bolt")
}

// Open opens the bolt file, or shares the one the Build has open.
func (driver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	var f fields
	t.Decode(&f) // Check accepted it
	store, err := Open(ctx, t, f.Path)
	if err != nil {
		return nil, err
	}
	return config.Serve(t, store)
}

// Open opens the bbolt file at path (resolved with t.File) once per
// Build, as the bolt backend does: a driver whose store is also a bolt
// file (redis-strict's durable counter) shares it with the bolt sequences
// of the Build.
func Open(ctx context.Context, t *config.Target, path string) (*boltseq.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, err := t.File(path)
	if err != nil {
		return nil, err
	}
	return config.Share(t, ShareKey(abs), func() (*boltseq.Store, error) {
		return boltseq.Open(abs, boltseq.Options{LockTimeout: t.LockWait})
	})
}

// ShareKey is the config.Share key, and the StoreInfo.ID, of the bolt
// file at abs, as config.Target.File gives it.
func ShareKey(abs string) string { return "bolt " + abs }
