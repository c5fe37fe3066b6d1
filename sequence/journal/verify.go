package journal

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// HashString formats a hash as 64 hexadecimal digits.
func HashString(h [32]byte) string { return hex.EncodeToString(h[:]) }

// ChainError is the error [VerifyChain] returns for a journal that is not
// the one its store wrote: Seq is the first record that does not hold.
type ChainError struct {
	Key    string
	Seq    int64
	Reason string
}

// Error names the key and the record, and says what is wrong with it.
func (e *ChainError) Error() string {
	return fmt.Sprintf("journal of %q: record %d: %s", e.Key, e.Seq, e.Reason)
}

// VerifyChain checks key's journal: records numbered 1, 2, 3... (or from
// a Pruned record on), each record's hash recomputed equal to the one
// stored, the last one the head. It returns a *ChainError naming the
// first record that was altered, deleted or inserted, or nil. events
// are the whole journal, in order of Seq.
//
// A hash chain shows a change made by hand; it cannot show a chain
// recomputed whole by someone who knows the algorithm. Keep the head
// where the store's writers cannot reach it (print it, mail it to the
// auditor, sign it) and give it back as an anchor: VerifyChain then also
// checks that the journal still passes through it.
//
// A journal pruned ([Keeper]) starts with a Pruned record signed by a
// key outside the store: VerifyChain cannot check it, and says so;
// [VerifySealed] checks it with the public key.
func VerifyChain(key string, events []Event, head Head, anchors ...Head) error {
	return VerifySealed(key, events, head, nil, anchors...)
}

// VerifySealed is [VerifyChain] for a journal that may have been pruned:
// the Pruned record it starts with must be signed by one of keys (see
// [PruneRecord]), and an anchor taken before the prune, at one of the
// records it replaced, verifies against the hashes the record keeps.
func VerifySealed(key string, events []Event, head Head, keys []ed25519.PublicKey, anchors ...Head) error {
	var prev [32]byte
	var want int64 = 1
	var keptFrom int64 // the record the hashes kept by a prune start at
	var kept []byte
	for i, e := range events {
		if i == 0 && e.Kind == Pruned && sealedPrune(e) {
			// The summary of the records pruned: signed, and the chain
			// goes on from the hash it keeps.
			first, hashes, problem := checkPruned(key, e, keys)
			if problem != "" {
				return &ChainError{key, e.Seq, problem}
			}
			keptFrom, kept = first, hashes
			prev, want = e.Hash, e.Seq+1
			continue
		}
		switch {
		case e.Seq < want:
			return &ChainError{key, e.Seq, fmt.Sprintf("appears again after record %d: a record was inserted", want-1)}
		case e.Seq > want:
			return &ChainError{key, want, fmt.Sprintf("is missing (the next one is %d): a record was deleted", e.Seq)}
		}
		if e.Seq > head.Seq {
			return &ChainError{key, e.Seq, fmt.Sprintf("is past the head kept beside the counter (record %d): records were inserted", head.Seq)}
		}
		if got := ChainHash(prev, key, e); got != e.Hash {
			return &ChainError{key, e.Seq, fmt.Sprintf("was altered: it hashes to %s, and the hash stored is %s (or records before it were deleted or inserted and the rest renumbered)", HashString(got)[:16], HashString(e.Hash)[:16])}
		}
		prev = e.Hash
		want++
	}
	last := want - 1
	switch {
	case head.Seq > last:
		return &ChainError{key, last + 1, fmt.Sprintf("is missing: the head kept beside the counter says the journal ends at record %d: records were deleted", head.Seq)}
	case head.Seq < last:
		return &ChainError{key, head.Seq + 1, fmt.Sprintf("is past the head kept beside the counter (record %d): records were inserted", head.Seq)}
	case head.Hash != prev:
		return &ChainError{key, last, "differs from the head kept beside the counter: the last record was altered, or the head"}
	}
	for _, a := range anchors {
		var i int64 = -1
		if len(events) > 0 {
			i = a.Seq - events[0].Seq
		}
		if kept != nil && a.Seq >= keptFrom && a.Seq < events[0].Seq {
			// Before the prune: the hash the signed record kept.
			k := (a.Seq - keptFrom) * keptHash
			if [keptHash]byte(kept[k:k+keptHash]) != [keptHash]byte(a.Hash[:keptHash]) {
				return &ChainError{key, a.Seq, fmt.Sprintf("is not the record anchored (hash %s): the prune signed another hash for it: the journal was rewritten before it was pruned", HashString(a.Hash)[:16])}
			}
			continue
		}
		if i < 0 || i >= int64(len(events)) {
			return &ChainError{key, a.Seq, "is an anchor the journal no longer holds"}
		}
		if events[i].Hash != a.Hash {
			return &ChainError{key, a.Seq, fmt.Sprintf("is not the record anchored (hash %s): the journal was rewritten", HashString(a.Hash)[:16])}
		}
	}
	return nil
}

// ReadJournal reads key's whole journal from j, in pages, and its head.
// The head is read after the records, and the records written meanwhile
// after it, so that the two agree; a record past the head (inserted by
// hand) is kept, for [VerifyChain] to find.
func ReadJournal(ctx context.Context, j Keeper, key string) ([]Event, Head, error) {
	const page = 1000
	var events []Event
	var after int64
	for tries := 0; ; tries++ {
		for {
			p, err := j.Events(ctx, key, after, page)
			if err != nil {
				return nil, Head{}, err
			}
			events = append(events, p...)
			if len(p) < page {
				break
			}
			after = p[len(p)-1].Seq
		}
		if len(events) > 0 {
			after = events[len(events)-1].Seq
		}
		head, err := j.Head(ctx, key)
		if err != nil {
			return nil, Head{}, err
		}
		if head.Seq <= after || tries == 10 {
			return events, head, nil
		}
	}
}

// PruneRecord returns the Pruned record that replaces events, the
// records of key from its first (or from an earlier Pruned record) to
// the one to prune through, read at now: a summary of what they said of
// each number, signed with sk ([seal.go]'s format), and keeping the
// hashes of the records it replaces. Records that do not explain every
// number ([Audit]) are not pruned: an error wrapping
// [ErrInvalid]. Verify events ([VerifySealed]) before: the
// record vouches for them.
func PruneRecord(key string, events []Event, now time.Time, sk ed25519.PrivateKey) (Event, error) {
	if len(events) == 0 {
		return Event{}, fmt.Errorf("journal: prune the journal of %q: no records: %w", key, ErrInvalid)
	}
	if len(sk) != ed25519.PrivateKeySize {
		return Event{}, fmt.Errorf("journal: prune the journal of %q: a prune is signed with an Ed25519 private key kept outside the store (sn keygen), got %d bytes: %w", key, len(sk), ErrInvalid)
	}
	last := events[len(events)-1]
	rep := Audit(key, events, Head{}, now)
	if !rep.Explained() {
		return Event{}, fmt.Errorf("journal: prune the journal of %q through record %d: it does not explain every number (a hold lapsed, a number unaccounted for, or %d problems): commit or void what is pending first: %w",
			key, last.Seq, len(rep.Problems), ErrInvalid)
	}
	count := map[State]int64{}
	var top int64
	for _, sp := range rep.Spans {
		count[sp.State] += sp.Range.Len()
		top = max(top, sp.Range.Last)
	}
	var parts []string
	for st := Issued; st <= Unaccounted; st++ {
		if count[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[st], st))
		}
	}
	first, hashes := keptHashes(events)
	s := pruneSeal{
		summary: fmt.Sprintf("records %d to %d pruned at %s: %s", first, last.Seq, now.UTC().Format(time.RFC3339), strings.Join(parts, ", ")),
		keyID:   KeyID(sk.Public().(ed25519.PublicKey)),
		first:   first, last: last.Seq, hashes: hashes,
	}
	p := Event{Seq: last.Seq, Kind: Pruned, Range: Range{First: 1, Last: top}, At: FromMicros(now.UnixMicro()), By: ProcessName(), Hash: last.Hash}
	s.sig = ed25519.Sign(sk, s.message(key, p))
	p.Reason = s.reason()
	return p, nil
}
