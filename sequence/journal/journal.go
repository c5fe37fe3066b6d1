// Package journal is what sn records of each counter key: a journal of
// what became of its numbers, hash-chained so that an edit shows, and the
// analysis that explains every number not issued.
//
// The vocabulary is [Event] and its kinds ([Reserved], [Voided] and the
// others), [Head] and [Range]. A store that keeps journals gives them as
// a [Keeper], most through a Journal method ([Holder]) that returns
// [InRecords]; a wrapper of one forwards that method alone, and callers
// ask [Of]. [Audit] explains a journal's numbers,
// [VerifyChain] and [VerifySealed] check its chain, [PruneRecord] sums up
// the records of a closed period in one signed record.
//
// The journals are kept in a store's records (package record), written
// once for every store: the layout, the chain's appends under a head, the
// reads and the prune. A key's records are under "j/", the length of the
// key, "/", the key, "/" and the record's number in 20 digits, as JSON
// ([MarshalEvent]); the head, "seq hash mark" and the largest number
// voided when there is one, is under "jh/" and the
// key. A key longer than [MaxPlain] bytes is named by the SHA-256 of its
// bytes instead, in hexadecimal: its records under "j/#/", the hash, "/"
// and the number, its head under "jhx/" and the hash, so that every
// record key stays within [record.MaxKey]. A store appends in the
// transaction that changes the key's counter (its allocator's, seen as
// records through [record.In]), so that no block is reserved without its
// record; reading and pruning go through the records alone.
package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sngen/sn/sequence/record"
)

// ErrCorrupt is wrapped by the error for a head or a record that does
// not decode: written by hand, or by something other than sn.
var ErrCorrupt = errors.New("journal: corrupt record")

// ErrBehind is wrapped by the error of a change to a counter that stands
// below the mark its journal recorded, or is gone (see [Append]): the
// store would reserve numbers it reserved before.
var ErrBehind = errors.New("journal: the counter is behind its journal")

// ErrVoid is wrapped by the error of an append of a Returned record
// whose range starts at or below a number voided ([Head.Void]): a store's
// Return refuses it, and takes nothing back.
var ErrVoid = errors.New("journal: a void holds: nothing at or below it goes back")

// ErrInvalid is wrapped by the error of a record a journal does not take
// ([CheckNote]), and of a prune it refuses. It is the sequence layer's one
// error for a bad argument: package sequence's ErrInvalidArgument is this
// error, so that a caller tells a refused void from a refused floor with
// either name.
var ErrInvalid = errors.New("sequence: invalid argument")

// MaxPlain is the longest key whose journal's record keys hold it as it
// is.
const MaxPlain = 1500

// Prefix is the prefix of the keys of key's records.
func Prefix(key string) string {
	if len(key) > MaxPlain {
		return "j/#/" + hashed(key) + "/"
	}
	return "j/" + strconv.Itoa(len(key)) + "/" + key + "/"
}

func hashed(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// Key is the record key of record seq of key's journal.
func Key(key string, seq int64) string { return fmt.Sprintf("%s%020d", Prefix(key), seq) }

// HeadKey is the record key of the head of key's journal.
func HeadKey(key string) string {
	if len(key) > MaxPlain {
		return "jhx/" + hashed(key)
	}
	return "jh/" + key
}

// EncodeHead is the value of a head record: "seq hash mark", and
// " void" when a number was voided.
func EncodeHead(h Head) []byte {
	b := fmt.Appendf(nil, "%d %s %d", h.Seq, hex.EncodeToString(h.Hash[:]), h.Mark)
	if h.Void > 0 {
		b = fmt.Appendf(b, " %d", h.Void)
	}
	return b
}

// DecodeHead decodes the head record of key's journal; an absent or
// empty one is the zero Head.
func DecodeHead(key string, v []byte) (Head, error) {
	var h Head
	if len(v) == 0 {
		return h, nil
	}
	f := strings.Fields(string(v))
	var err1, err2, err3, err4 error
	if len(f) == 4 {
		h.Void, err4 = strconv.ParseInt(f[3], 10, 64)
	}
	if len(f) == 3 || len(f) == 4 {
		h.Seq, err1 = strconv.ParseInt(f[0], 10, 64)
		var b []byte
		b, err2 = hex.DecodeString(f[1])
		if len(b) != 32 {
			err2 = fmt.Errorf("a hash of %d bytes", len(b))
		}
		copy(h.Hash[:], b)
		h.Mark, err3 = strconv.ParseInt(f[2], 10, 64)
	}
	if len(f) < 3 || len(f) > 4 || err1 != nil || err2 != nil || err3 != nil || err4 != nil || h.Seq < 0 || h.Mark < 0 || h.Void < 0 || (len(f) == 4 && h.Void == 0) {
		return Head{}, fmt.Errorf("%w: the journal head of %q holds %.60q", ErrCorrupt, key, v)
	}
	return h, nil
}

// decode decodes record r of key's journal.
func decode(key string, r record.Record) (Event, error) {
	p := Prefix(key)
	seq, err := strconv.ParseInt(strings.TrimPrefix(r.Key, p), 10, 64)
	if err != nil || !strings.HasPrefix(r.Key, p) || len(r.Key) != len(p)+20 {
		return Event{}, fmt.Errorf("%w: the journal of %q holds a record under %.80q, not a 20-digit number", ErrCorrupt, key, r.Key)
	}
	e, err := UnmarshalEvent(seq, r.Value)
	if err != nil {
		return Event{}, fmt.Errorf("%w: the journal of %q: %v", ErrCorrupt, key, err)
	}
	return e, nil
}
