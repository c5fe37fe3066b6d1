package sequencetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// RunExpirer checks the [sequence.Expirer] contract of s, whose keys
// draw counts from with the store's own numbering (its Next, or the First
// of an Allocate of 1):
//
//   - a key given an expiry is deleted once it has passed and a later
//     Expire has run, and not before. A store that keeps a journal of
//     the key refuses to start it again (an error wrapping
//     [journal.ErrBehind]: its numbers would be issued twice); one that
//     keeps none starts its numbers again at 1;
//   - a second Expire replaces the first deadline, even one that has
//     passed, if no sweep deleted the key yet;
//   - Expire with ttl <= 0 deletes at once.
//
// Expiries are real time: the test waits about a second in all.
func RunExpirer(t *testing.T, s sequence.Expirer, draw func(ctx context.Context, key string) (int64, error)) {
	t.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("sequencetest-expire-%d-", time.Now().UnixNano())
	key := func(name string) string { return prefix + name }

	// deleted checks the draw from a deleted key.
	kept := journal.Of(s) != nil
	deleted := func(what string, n int64, err error) {
		t.Helper()
		switch {
		case kept && !errors.Is(err, journal.ErrBehind):
			t.Fatalf("%s draws %d, %v; want an error wrapping journal.ErrBehind: the store keeps a journal of it", what, n, err)
		case !kept && (err != nil || n != 1):
			t.Fatalf("%s draws %d, %v; want 1 (deleted)", what, n, err)
		}
	}
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
		n, err := draw(ctx, now)
		deleted("a key expired with ttl 0", n, err)
		if n, err := draw(ctx, gone); err != nil || n != 4 {
			t.Fatalf("a key before its deadline draws %d, %v; want 4", n, err)
		}
		time.Sleep(700 * time.Millisecond)
		if err := s.Expire(ctx, key("other"), time.Hour); err != nil { // a sweep, where the store needs one
			t.Fatal(err)
		}
		n, err = draw(ctx, gone)
		deleted("a key past its deadline", n, err)
		if n, err := draw(ctx, kept); err != nil || n != 4 {
			t.Fatalf("a key whose deadline was moved later draws %d, %v; want 4", n, err)
		}
	})

	// An Expire that gives more time to a key whose deadline has passed,
	// before a sweep deleted it, keeps it: its own sweep does not delete
	// it. (A store that deletes keys on time by itself, such as Redis
	// alone, may have; it keeps no journal, and starts the key at 1. Redis
	// in front of a ledger may have lost its range: a gap.)
	t.Run("Extend", func(t *testing.T) {
		late := key("late")
		for range 3 {
			if _, err := draw(ctx, late); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Expire(ctx, late, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if err := s.Expire(ctx, late, time.Hour); err != nil {
			t.Fatal(err)
		}
		n, err := draw(ctx, late)
		switch {
		case err == nil && n > 3: // a cache in front may have lost a range: a gap
		case !kept && err == nil && n == 1:
		default:
			t.Fatalf("a key given an hour more after its deadline draws %d, %v; want 4, or above: the Expire that extends it must not delete it", n, err)
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
