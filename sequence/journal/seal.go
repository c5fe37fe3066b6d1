package journal

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// A prune is sealed: the [Pruned] record that replaces a journal's first
// records carries an Ed25519 signature, made with a key that does not
// live in the store (the service's, or the auditor's), over the record
// and the hashes of every record it replaces. Whoever can write the
// store can delete records, and can compute hashes; without the private
// key they cannot make a Pruned record that verifies, so they cannot
// hide a void, a block or a release behind a summary. The hashes kept
// let an anchor taken before the prune (at any record it replaced) still
// verify.
//
// A sealed Pruned record's Reason is its summary followed by
//
//	; signed KEYID SIGNATURE; hashes FIRST-LAST HASHES
//
// KEYID names the public key ([KeyID]); SIGNATURE and HASHES are in
// base64 (standard, unpadded); HASHES are the first 16 bytes of the hash
// of each record from FIRST to LAST (the record itself).

const (
	signedMark = "; signed "
	hashesMark = "; hashes "
	// legacySealMark ends the reason of a Pruned record sealed by an
	// earlier release with a bare hash, which anyone can compute.
	legacySealMark = "; seal "
	// keptHash is how much of each record's hash a seal keeps: 128
	// bits, as hard to match by a record made on purpose as the key.
	keptHash = 16
)

// KeyID names an Ed25519 public key in a seal, and to an auditor: the
// first 8 bytes of its SHA-256, in hexadecimal.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// pruneSeal is what a Pruned record's reason says beyond its summary.
type pruneSeal struct {
	summary     string
	keyID       string
	sig         []byte
	first, last int64
	hashes      []byte // keptHash bytes per record from first to last
	legacy      bool   // sealed by a bare hash (an earlier release)
	bad         string // why the seal does not parse, or ""
}

// parseSeal reads the seal of Pruned record p. ok is false for a
// Pruned record without one (the summary of numbers reserved before the
// store kept a journal, written as an ordinary record of the chain).
func parseSeal(p Event) (s pruneSeal, ok bool) {
	if i := strings.LastIndex(p.Reason, signedMark); i >= 0 {
		s.summary = p.Reason[:i]
		rest := p.Reason[i+len(signedMark):]
		sig, hashes, found := strings.Cut(rest, hashesMark)
		id, sig64, found2 := strings.Cut(sig, " ")
		span, list, found3 := strings.Cut(hashes, " ")
		first, last, found4 := strings.Cut(span, "-")
		if !found || !found2 || !found3 || !found4 {
			s.bad = "its seal is not KEYID SIGNATURE; hashes FIRST-LAST HASHES"
			return s, true
		}
		var err1, err2, err3, err4 error
		s.keyID = id
		s.sig, err1 = base64.RawStdEncoding.DecodeString(sig64)
		s.hashes, err2 = base64.RawStdEncoding.DecodeString(list)
		s.first, err3 = strconv.ParseInt(first, 10, 64)
		s.last, err4 = strconv.ParseInt(last, 10, 64)
		switch {
		case err1 != nil || err2 != nil || err3 != nil || err4 != nil:
			s.bad = "its seal does not decode"
		case s.first < 1 || s.last != p.Seq || int64(len(s.hashes)) != (s.last-s.first+1)*keptHash:
			s.bad = fmt.Sprintf("its seal keeps the hashes of records %d to %d in %d bytes, for a record numbered %d", s.first, s.last, len(s.hashes), p.Seq)
		case [keptHash]byte(s.hashes[len(s.hashes)-keptHash:]) != [keptHash]byte(p.Hash[:keptHash]):
			s.bad = "the last hash its seal keeps is not the record's"
		}
		return s, true
	}
	if i := strings.LastIndex(p.Reason, legacySealMark); i >= 0 {
		return pruneSeal{summary: p.Reason[:i], legacy: true}, true
	}
	return pruneSeal{}, false
}

// message is what the seal of Pruned record p, of key's journal, signs:
// a fixed prefix, then the key, every field of p but its reason's seal,
// and the hashes kept, each length-prefixed or of fixed size.
func (s pruneSeal) message(key string, p Event) []byte {
	b := appendFields([]byte("sn prune seal 2\n"), key, p, s.summary)
	b = append(b, p.Hash[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(s.first))
	b = binary.BigEndian.AppendUint64(b, uint64(s.last))
	b = binary.AppendUvarint(b, uint64(len(s.hashes)))
	return append(b, s.hashes...)
}

// reason writes the seal after the summary.
func (s pruneSeal) reason() string {
	return fmt.Sprintf("%s%s%s %s%s%d-%d %s", s.summary, signedMark, s.keyID, base64.RawStdEncoding.EncodeToString(s.sig),
		hashesMark, s.first, s.last, base64.RawStdEncoding.EncodeToString(s.hashes))
}

// keptHashes returns the hashes the journal events keeps of its records,
// from the first one on: those a sealed Pruned record first in events
// kept, then each record's own. first is the record the list starts at.
func keptHashes(events []Event) (first int64, hashes []byte) {
	first = 1
	if len(events) > 0 && events[0].Kind == Pruned {
		if s, ok := parseSeal(events[0]); ok {
			switch {
			case s.legacy || s.bad != "":
				// An earlier release kept no hashes: the list starts at
				// the record it left.
				first = events[0].Seq
			default:
				first, hashes = s.first, append(hashes, s.hashes[:len(s.hashes)-keptHash]...)
			}
		}
	}
	for _, e := range events {
		hashes = append(hashes, e.Hash[:keptHash]...)
	}
	return first, hashes
}

// sealedPrune reports whether Pruned record p carries a seal (signed, or
// by an earlier release's bare hash), unlike the record of numbers
// reserved before the store kept a journal.
func sealedPrune(p Event) bool {
	_, ok := parseSeal(p)
	return ok
}

// PruneSummary returns the summary a Pruned record's reason gives,
// without its seal: what a report prints.
func PruneSummary(p Event) string {
	if s, ok := parseSeal(p); ok {
		return s.summary
	}
	return p.Reason
}

// SealedBy returns the [KeyID] of the key that signed Pruned record p,
// or "" when it is not signed.
func SealedBy(p Event) string {
	if s, ok := parseSeal(p); ok && !s.legacy {
		return s.keyID
	}
	return ""
}

// checkPruned checks Pruned record p, the first of key's journal,
// against the public keys trusted, and returns the hashes it keeps and
// the record they start at, or what is wrong with it.
func checkPruned(key string, p Event, keys []ed25519.PublicKey) (first int64, hashes []byte, problem string) {
	s, _ := parseSeal(p)
	switch {
	case s.legacy:
		return 0, nil, "is a pruned record sealed without a signature (by a release before prunes were signed, or by hand): anyone who can write the store can make one; if the journal was pruned by you, sign it again (sn prune --seal-key)"
	case s.bad != "":
		return 0, nil, "is a pruned record whose seal does not hold: " + s.bad
	}
	for _, pub := range keys {
		if KeyID(pub) != s.keyID {
			continue
		}
		if !ed25519.Verify(pub, s.message(key, p), s.sig) {
			return 0, nil, fmt.Sprintf("is a pruned record whose signature by key %s does not hold: it was altered, or made by hand", s.keyID)
		}
		return s.first, s.hashes, ""
	}
	if len(keys) == 0 {
		return 0, nil, fmt.Sprintf("is a pruned record signed by key %s: give its public key to check it (sn verify --public-key; VerifySealed)", s.keyID)
	}
	ids := make([]string, len(keys))
	for i, pub := range keys {
		ids[i] = KeyID(pub)
	}
	return 0, nil, fmt.Sprintf("is a pruned record signed by key %s, not one of the keys trusted (%s): made by hand, or by another key", s.keyID, strings.Join(ids, ", "))
}

// CheckPrune returns an error wrapping [ErrInvalid] when p cannot
// replace the records of key's journal through p.Seq, whose record
// p.Seq is at (zero when the journal has none) and whose head is head:
// what a [Keeper] checks before it writes. p must be a Pruned record
// sealed by [PruneRecord] from those records; the store cannot check the
// signature (it has no key), only that p ends the chain where the
// journal does.
func CheckPrune(key string, p Event, at Event, head Head) error {
	s, ok := parseSeal(p)
	switch {
	case p.Kind != Pruned || !ok || s.legacy:
		return fmt.Errorf("journal: prune the journal of %q: a Pruned record signed by PruneRecord, not %s %q: %w", key, p.Kind, p.Reason, ErrInvalid)
	case s.bad != "":
		return fmt.Errorf("journal: prune the journal of %q: %s: %w", key, s.bad, ErrInvalid)
	case p.Seq < 1 || p.Seq > head.Seq:
		return fmt.Errorf("journal: prune the journal of %q through record %d: it has records to %d: %w", key, p.Seq, head.Seq, ErrInvalid)
	case at.Seq != p.Seq || at.Hash != p.Hash:
		return fmt.Errorf("journal: prune the journal of %q through record %d: the record there is not the one sealed (the journal changed since it was read): %w", key, p.Seq, ErrInvalid)
	}
	return nil
}
