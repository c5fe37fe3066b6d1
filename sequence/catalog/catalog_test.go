package catalog_test

import (
	"context"
	"testing"

	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/record"
)

// counting is a record.Store that counts its calls.
type counting struct {
	*record.Memory
	gets, scans, commits int
}

func (c *counting) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	c.gets++
	return c.Memory.Get(ctx, keys...)
}

func (c *counting) Scan(ctx context.Context, from, to string, limit int) ([]record.Record, error) {
	c.scans++
	return c.Memory.Scan(ctx, from, to, limit)
}

func (c *counting) Commit(ctx context.Context, cond []record.Record, ops []record.Op) (bool, error) {
	c.commits++
	return c.Memory.Commit(ctx, cond, ops)
}

// Every process enrolls its templates at start: an entry recorded already
// costs one read and no commit (on SQL a commit is a write transaction
// checked for replication), and Entries one scan.
func TestEnrollRecordedIsOneRead(t *testing.T) {
	ctx := t.Context()
	s := &counting{Memory: record.NewMemory()}
	cat := catalog.New(s, nil)
	e := catalog.Entry{ID: "a1", Name: "orders", Spec: "{}"}
	accept := func([]catalog.Entry) error { return nil }
	if _, err := cat.Enroll(ctx, e, accept); err != nil {
		t.Fatal(err)
	}
	*s = counting{Memory: s.Memory}
	got, err := cat.Enroll(ctx, e, func([]catalog.Entry) error { t.Error("check called for a recorded entry"); return nil })
	if err != nil || got.ID != "a1" || got.First.IsZero() {
		t.Fatalf("Enroll again: %+v, %v", got, err)
	}
	if s.gets != 1 || s.scans != 0 || s.commits != 0 {
		t.Errorf("Enroll of a recorded entry: %d gets, %d scans, %d commits; want 1, 0, 0", s.gets, s.scans, s.commits)
	}
	*s = counting{Memory: s.Memory}
	if es, err := cat.Entries(ctx); err != nil || len(es) != 1 {
		t.Fatalf("Entries: %v, %v", es, err)
	}
	if s.gets != 0 || s.scans != 1 || s.commits != 0 {
		t.Errorf("Entries: %d gets, %d scans, %d commits; want 0, 1, 0", s.gets, s.scans, s.commits)
	}
}
