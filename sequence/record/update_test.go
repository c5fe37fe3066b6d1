package record_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/sngen/sn/sequence/record"
)

// appendAfter appends the record after the one the head "h" names, as a
// journal does: the head is read first, the record's key then.
func appendAfter(ctx context.Context, s record.Store, between func()) (int, error) {
	attempts := 0
	err := record.Update(ctx, s, func(tx *record.Tx) error {
		attempts++
		h, err := tx.Get1("h")
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(string(h.Value))
		if attempts == 1 && between != nil {
			between()
		}
		if err := tx.Create("r/"+strconv.Itoa(n+1), []byte("x")); err != nil {
			return err
		}
		tx.Put("h", []byte(strconv.Itoa(n+1)))
		return nil
	})
	return attempts, err
}

// A record to create that another writer created after the head was
// read is a race, run again; one that is there while the head still says
// it is not (a head moved back by hand) is an error wrapping ErrExists.
func TestUpdateCreateRace(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	other := func() {
		if _, err := appendAfter(ctx, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	attempts, err := appendAfter(ctx, s, other)
	if err != nil || attempts != 2 {
		t.Fatalf("an append raced by another: %d attempts, %v; want 2, nil", attempts, err)
	}
	if got, _ := s.Get(ctx, "h"); string(got[0].Value) != "2" {
		t.Fatalf("the head is %q, want 2", got[0].Value)
	}
	// The head moved back by hand: record 2 is there, and stays.
	if _, err := s.Commit(ctx, nil, []record.Op{record.Put("h", []byte("1"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := appendAfter(ctx, s, nil); !errors.Is(err, record.ErrExists) {
		t.Fatalf("an append over a record past the head: %v, want ErrExists", err)
	}
}
