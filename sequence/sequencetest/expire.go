package sequencetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
)

// RunExpirer checks the [sequence.Expirer] contract of s, whose keys
// draw counts from with the store's own numbering (its Next, or the First
// of an Allocate of 1):
//
//   - a key given an expiry is deleted once it has passed and a later
//     Expire has run (its numbers start again at 1), and not before;
//   - a second Expire replaces the first deadline;
//   - Expire with ttl <= 0 deletes at once.
//
// Expiries are real time: the test waits about a second in all.
func RunExpirer(t *testing.T, s sequence.Expirer, draw func(ctx context.Context, key string) (int64, error)) {
	t.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("sequencetest-expire-%d-", time.Now().UnixNano())
	key := func(name string) string { return prefix + name }

	t.Run("Expire", func(t *testing.T) {
		gone, kept, now := key("gone"), key("kept"), key("now")
		for _, k := range []string{gone, kept, now} {
			for range 3 {
				if _, err := draw(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.Expire(ctx, gone, 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Expire(ctx, kept, 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Expire(ctx, kept, time.Hour); err != nil { // replaces the first deadline
			t.Fatal(err)
		}
		if err := s.Expire(ctx, now, 0); err != nil {
			t.Fatal(err)
		}
		if n, err := draw(ctx, now); err != nil || n != 1 {
			t.Fatalf("a key expired with ttl 0 draws %d, %v; want 1", n, err)
		}
		if n, err := draw(ctx, gone); err != nil || n != 4 {
			t.Fatalf("a key before its deadline draws %d, %v; want 4", n, err)
		}
		time.Sleep(700 * time.Millisecond)
		if err := s.Expire(ctx, key("other"), time.Hour); err != nil { // a sweep, where the store needs one
			t.Fatal(err)
		}
		if n, err := draw(ctx, gone); err != nil || n != 1 {
			t.Fatalf("a key past its deadline draws %d, %v; want 1 (deleted)", n, err)
		}
		if n, err := draw(ctx, kept); err != nil || n != 4 {
			t.Fatalf("a key whose deadline was moved later draws %d, %v; want 4", n, err)
		}
	})

	// A deadline past 2262, where Unix nanoseconds end, keeps the key:
	// it does not wrap to one long past that the next sweep deletes.
	t.Run("FarFuture", func(t *testing.T) {
		far := key("far")
		if n, err := draw(ctx, far); err != nil || n != 1 {
			t.Fatalf("draw = %d, %v; want 1", n, err)
		}
		if err := s.Expire(ctx, far, 250*365*24*time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := s.Expire(ctx, key("far-sweep"), time.Hour); err != nil { // a sweep, where the store needs one
			t.Fatal(err)
		}
		if n, err := draw(ctx, far); err != nil || n != 2 {
			t.Fatalf("a key that expires in 250 years draws %d, %v after a sweep; want 2", n, err)
		}
	})
}

// AllocDraw returns a draw function for [RunExpirer] over an Allocator:
// the First of an Allocate of one number.
func AllocDraw(a sequence.Allocator) func(ctx context.Context, key string) (int64, error) {
	return func(ctx context.Context, key string) (int64, error) {
		r, err := a.Allocate(ctx, key, 1)
		return r.First, err
	}
}
