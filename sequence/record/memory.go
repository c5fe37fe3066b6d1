package record

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"
)

// Memory is a [Store] in a map, for one process: what package sequence's
// memory stores keep their promises in. Its clock is the machine's.
type Memory struct {
	mu      sync.Mutex
	m       map[string]Record
	version int64
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{m: map[string]Record{}} }

// Get returns the records at keys.
func (s *Memory) Get(ctx context.Context, keys ...string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = s.m[k]
		out[i].Key = k
		out[i].Value = slices.Clone(out[i].Value)
	}
	return out, nil
}

// Scan returns up to limit records in [from, to).
func (s *Memory) Scan(ctx context.Context, from, to string, limit int) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Record
	for k, r := range s.m {
		if k >= from && (to == "" || k < to) {
			r.Value = slices.Clone(r.Value)
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Commit applies ops if every record of cond has its version.
func (s *Memory) Commit(ctx context.Context, cond []Record, ops []Op) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := Check(cond, ops); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cond {
		if s.m[c.Key].Version != c.Version {
			return false, nil
		}
	}
	if s.m == nil {
		s.m = map[string]Record{}
	}
	for _, o := range ops {
		switch {
		case o.Value != nil:
			s.version++
			s.m[o.Key] = Record{Key: o.Key, Value: slices.Clone(o.Value), Version: s.version}
		case o.End != "":
			for k := range s.m {
				if k >= o.Key && k < o.End {
					delete(s.m, k)
				}
			}
		default:
			delete(s.m, o.Key)
		}
	}
	return true, nil
}

// Now returns the machine's clock.
func (s *Memory) Now(ctx context.Context) (time.Time, error) {
	return time.Now(), ctx.Err()
}
