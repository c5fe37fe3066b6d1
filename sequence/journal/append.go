package journal

import (
	"errors"
	"fmt"

	"github.com/sngen/sn/sequence/record"
)

// HeadOf reads the head of key's journal in tx.
func HeadOf(tx *record.Tx, key string) (Head, error) {
	r, err := tx.Get1(HeadKey(key))
	if err != nil {
		return Head{}, err
	}
	return DecodeHead(key, r.Value)
}

// Append chains es after the last record of key's journal in tx, for a
// change of the key's mark from before to mark, and writes them and the
// head: first the records [Reconcile] gives when the head does
// not end at before. Each record's By is the writer tx's context names
// ([ByOf]). It returns the records as written, none for no es.
// A record is written once ([record.Tx.Create]): one already at a new
// record's number, after a head moved back by hand, is an error wrapping
// [ErrCorrupt] and [record.ErrExists] (a store's own transaction refuses
// with one wrapping record.ErrExists, which it passes to [Overwrite]),
// and nothing is written.
// A change to a counter that stands below the journal's mark, deleted
// (0) included, is an error wrapping [ErrBehind], unless it is a Floor to
// the mark or above; nothing is written.
// A Returned record that starts at or below the largest number voided
// ([Head.Void]) is an error wrapping [ErrVoid], and nothing is written:
// a store's Return takes nothing back then.
// The caller's transaction orders the key's writes: a [record.Update],
// or the store's own through [record.In].
func Append(tx *record.Tx, key string, before, mark int64, es ...Event) ([]Event, error) {
	if len(es) == 0 {
		return nil, nil
	}
	head, err := HeadOf(tx, key)
	if err != nil {
		return nil, err
	}
	switch repair, err := behind(key, head, before, es); {
	case err != nil:
		return nil, err
	case repair:
		// The numbers up to the journal's mark are recorded already:
		// the Floor records what it skips above it, if anything.
		e := es[0]
		e.Range.First = head.Mark + 1
		e.Reason = fmt.Sprintf("the counter stood at %d, below the journal's %d: raised", before, head.Mark)
		if e.Range.First > e.Range.Last {
			return nil, nil
		}
		es = append([]Event{e}, es[1:]...)
	default:
		es = append(Reconcile(head, before), es...)
	}
	by := ByOf(tx.Context())
	out := make([]Event, len(es))
	for i, e := range es {
		if e.Kind == Returned && e.Range.First <= head.Void {
			return nil, fmt.Errorf("%w: key %q: %v goes back, and %d was voided", ErrVoid, key, e.Range, head.Void)
		}
		e.By = by
		out[i], head = Chain(head, key, e)
		if e.Kind == Voided {
			head.Void = max(head.Void, e.Range.Last)
		}
		// Written once: a record already there is past a head moved
		// back by hand, and writing over it would hide the edit.
		if err := tx.Create(Key(key, out[i].Seq), MarshalEvent(out[i])); err != nil {
			return nil, Overwrite(key, err)
		}
	}
	head.Mark = mark
	tx.Put(HeadKey(key), EncodeHead(head))
	return out, nil
}

// behind refuses a change to key whose counter stands at before, below
// the mark the journal's head recorded: the counter was lowered or
// deleted by hand, restored apart from its journal, or deleted by its
// expiry after its period ended, and numbers up to the mark may be issued
// already. (A counter deleted by expiry and drawn from again is a draw
// for a past period: numbers of that period printed again.) The one
// change taken is the repair, which it reports: a Floor to the journal's
// mark or above.
func behind(key string, head Head, before int64, es []Event) (repair bool, err error) {
	if head.Seq == 0 || before >= head.Mark {
		return false, nil
	}
	if es[0].Kind == Floored && es[0].Range.Last >= head.Mark {
		return true, nil
	}
	if before <= 0 {
		return false, fmt.Errorf("%w: the counter of %q is gone, and its journal recorded numbers up to %d reserved: it was deleted by hand, or by its expiry after its period ended; "+
			"starting it again at 1 would issue those numbers twice. A draw for a past period means a clock went back; if the key must go on, raise the counter to %d with Floor (sn floor)", ErrBehind, key, head.Mark, head.Mark)
	}
	return false, fmt.Errorf("%w: the counter of %q stands at %d, below %d, the last number its journal recorded reserved: it was lowered by hand, or restored apart from its journal, and numbers up to %d may be issued already; "+
		"check them (sn gaps), then raise the counter to %d with Floor (sn floor)", ErrBehind, key, before, head.Mark, head.Mark, head.Mark)
}

// Note appends e, a record only a caller knows of (see
// [Keeper]), to key's journal in tx, after checking it against
// the mark the head keeps ([CheckNote]). A store that keeps a
// floor raises it for a void in the same transaction.
func Note(tx *record.Tx, key string, e Event) (Event, error) {
	head, err := HeadOf(tx, key)
	if err != nil {
		return Event{}, err
	}
	if err := CheckNote(key, e, head.Mark); err != nil {
		return Event{}, err
	}
	out, err := Append(tx, key, head.Mark, head.Mark, e)
	if err != nil {
		return Event{}, err
	}
	return out[0], nil
}

// Overwrite returns the error of an append to key's journal that found a
// record where it was to write one, err (wrapping [record.ErrExists]):
// it wraps [ErrCorrupt] too. Other errors are returned as they are.
func Overwrite(key string, err error) error {
	if !errors.Is(err, record.ErrExists) {
		return err
	}
	return fmt.Errorf("%w: the journal of %q holds a record past its head: the head was moved back, and nothing is appended until the journal is restored (VerifyChain names the records): %w", ErrCorrupt, key, err)
}
