package journal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Keeper is implemented by a [sequence.Gen] or [sequence.Allocator] whose store keeps, for
// each counter key, a journal of what became of its numbers: the blocks
// reserved, the unused ends handed back or left unused, the numbers
// voided, the floors raised. It is written where the numbers are reserved,
// in the same transaction, so that it costs one record per block, not per
// number, and no block exists without its record. Each record carries the
// hash of the one before it ([Event.Hash]), and the store keeps the hash
// of the last beside the counter ([Head]), so that a record edited,
// deleted or inserted by hand shows ([VerifyChain]). [Audit] reads a
// journal back and explains every number that was not issued.
//
// Allocate, Return and Floor write their own records ([Reserved],
// [Returned], [Floored]). Note appends the records only a caller knows of:
// numbers it will never issue ([Released]), that it holds none of a key
// any more ([Closed]), numbers it voids ([Voided]). A wrapper passes Note
// on to its store; one whose store keeps no journal returns an error
// wrapping errors.ErrUnsupported.
type Keeper interface {
	// Note appends e to key's journal and returns the record as stored,
	// with Seq, At, By and Hash set by the store. e.Kind must be
	// Released, Closed, Voided or Lost, and e.Range at or below key's mark
	// (empty for Closed): an error wrapping [ErrInvalid]
	// otherwise.
	Note(ctx context.Context, key string, e Event) (Event, error)
	// Events returns up to limit records of key's journal whose Seq is
	// greater than after, in order of Seq.
	Events(ctx context.Context, key string, after int64, limit int) ([]Event, error)
	// Head returns the Seq and Hash of key's last record, and key's mark,
	// as the store keeps them beside the counter.
	Head(ctx context.Context, key string) (Head, error)
	// Prune replaces the records of key up to and including record p.Seq
	// with p, a [Pruned] record made by [PruneRecord] from those records
	// and signed with a key the store does not hold, so that the chain,
	// and anchors taken before, still verify, for a closed period whose
	// retention is over. It checks, in the transaction that writes, that
	// record p.Seq is still the one sealed ([CheckPrune]), and returns p
	// as stored; a Keeper that cannot prune returns an error wrapping
	// errors.ErrUnsupported. sn never prunes on its own.
	Prune(ctx context.Context, key string, p Event) (Event, error)
}

// Range is an inclusive block of numbers [First, Last]: what a record
// is about. It is [Range], the block an allocator reserves.
type Range struct {
	First, Last int64
}

// Len returns the number of numbers in r, or 0 when r is empty.
func (r Range) Len() int64 {
	if r.Last < r.First {
		return 0
	}
	return r.Last - r.First + 1
}

// String formats r as "[First, Last]".
func (r Range) String() string { return fmt.Sprintf("[%d, %d]", r.First, r.Last) }

// Head is where a key's journal ends, as its store keeps it beside the
// counter: the Seq and Hash of the last record, the counter's mark (the
// largest number reserved or floored), and the largest number voided. A
// zero Head is a key with no journal.
type Head struct {
	Seq  int64
	Hash [32]byte
	Mark int64
	// Void is the largest number a Voided record names: a void holds,
	// and no Returned record takes back a range that starts at or below
	// it ([ErrVoid]), so that no Return gives a voided number back to be
	// issued again. Every store keeps it alike, in the transaction that
	// appends the record.
	Void int64
}

// EventKind says what a journal record records.
type EventKind uint8

// The kinds of journal records.
const (
	// Reserved: Allocate reserved Range for By. Its numbers are By's to
	// issue; By issues them in order, and holds at most its last two
	// blocks of a key (the current one and the one fetched ahead).
	Reserved EventKind = iota + 1
	// Returned: By handed Range, the unused top of its blocks, back
	// (a [sequence.Returner]); the mark went down to Range.First-1, and a later
	// Reserved takes the numbers again.
	Returned
	// Released: By will never issue Range, which it reserved: the
	// unused end of its blocks at Close (when another process had
	// reserved above it, so that they could not go back), at the turn of
	// a period, under a floor. Reason says which.
	Released
	// Closed: By holds no number of the key up to Range.Last (Range is
	// [1, N]); every number of its blocks there not released or returned
	// was issued.
	Closed
	// Voided: Range was issued, or reserved, and is void: it stays used.
	// Reason and Actor say why and who.
	Voided
	// Floored: a floor raised the mark from Range.First-1 to Range.Last;
	// Range was skipped and never issued.
	Floored
	// Drawn: Range was drawn in a caller's transaction (a gapless
	// series) and committed with it.
	Drawn
	// Held: Range was reserved for a gapless series, to be committed or
	// voided by Deadline.
	Held
	// Committed: Range, held, is final.
	Committed
	// Lost: By never received the blocks it reserved in Range: a
	// reservation whose answer was lost (a timeout, a connection cut at
	// the commit). Those of By's blocks there were never issued.
	Lost
	// Restarted: the counter was deleted (its period expired, see
	// [sequence.Expirer]) or found lower than the journal's mark, and went
	// on from Range.Last (0 after a deletion): the records before are of
	// its earlier life. Earlier releases wrote it; a store now refuses
	// such a counter ([ErrBehind]), and [Audit] reports the record as a
	// problem.
	Restarted
	// Enrolled: a template was registered in the store's catalog; Reason
	// says which (its ID and name). In the journal of [CatalogKey] only.
	Enrolled
	// Forgotten: a template was removed from the store's catalog, on an
	// administrator's request; Reason says which. In the journal of
	// [CatalogKey] only.
	Forgotten
	// Pruned: the records before this one were removed by retention.
	// Range covers the numbers they were about, Reason sums them up, and
	// Hash is the hash of the last record removed, so that the chain goes
	// on from it.
	Pruned
	// Cached: Allocate reserved Range for By, a cache (Redis in front of
	// the ledger) that hands blocks of it to the processes it serves: its
	// numbers are the cache's, open, until a [Handed] record names the
	// process that took them. Allocate writes it under [WithCache].
	Cached
	// Handed: the cache handed Range, of a range it holds, to the process
	// Actor names (the cache itself, for numbers a process gave back to
	// it); By is the process that recorded it. Actor holds the numbers
	// as if it had reserved them: until it notes Closed above them, or
	// takes two more blocks.
	Handed
)

var kindNames = [...]string{
	Reserved: "reserved", Returned: "returned", Released: "released", Closed: "closed",
	Voided: "voided", Floored: "floored", Drawn: "drawn", Held: "held", Committed: "committed",
	Pruned: "pruned", Restarted: "restarted", Lost: "lost", Enrolled: "enrolled", Forgotten: "forgotten",
	Cached: "cached", Handed: "handed",
}

// String returns the kind's name: "reserved", "returned" and so on.
func (k EventKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// ParseEventKind returns the kind named s (see [EventKind.String]).
func ParseEventKind(s string) (EventKind, error) {
	for k, name := range kindNames {
		if name != "" && name == s {
			return EventKind(k), nil
		}
	}
	return 0, fmt.Errorf("journal: unknown journal record kind %q: %w", s, ErrInvalid)
}

// Event is one record of a key's [Keeper].
type Event struct {
	Seq      int64     // its place in the key's journal, from 1
	Kind     EventKind // what happened
	Range    Range     // to which numbers
	At       time.Time // when, by the writer's clock, to the microsecond
	By       string    // the process that wrote it: see [ProcessName]
	Actor    string    // who asked, for a void: a person or a token's name
	Reason   string    // why, for a void or a release
	Deadline time.Time // for Held: when the hold lapses
	Hash     [32]byte  // the chain: see [ChainHash]
}

// String formats e for a log or a report.
func (e Event) String() string {
	s := fmt.Sprintf("#%d %s", e.Seq, e.Kind)
	if e.Range.Len() > 0 {
		s += " " + e.Range.String()
	}
	s += " at " + e.At.UTC().Format(time.RFC3339) + " by " + e.By
	if e.Actor != "" {
		s += " for " + e.Actor
	}
	if e.Reason != "" {
		s += fmt.Sprintf(": %q", e.Reason)
	}
	if !e.Deadline.IsZero() {
		s += " until " + e.Deadline.UTC().Format(time.RFC3339)
	}
	return s
}

// CatalogKey is the key of the journal of a store's catalog: the
// templates registered and forgotten ([Enrolled], [Forgotten]). No
// counter key sn makes starts with "|" (its parts escape it).
const CatalogKey = "|catalog"

// MaxReason is the longest Event.Reason, Actor or By a store takes, in
// bytes.
const MaxReason = 1024

// CheckNote returns an error wrapping [ErrInvalid] when e cannot
// be noted in a journal whose key has mark: a kind other than Released,
// Closed or Voided, an empty range or one above the mark, a Closed range
// that does not start at 1, a void without a reason, a long reason or
// actor.
func CheckNote(key string, e Event, mark int64) error {
	switch e.Kind {
	case Released, Voided, Lost, Handed:
		if e.Kind == Handed && e.Actor == "" {
			return fmt.Errorf("journal of %q: handed %v without the process it was handed to (Actor): %w", key, e.Range, ErrInvalid)
		}
		if e.Range.First < 1 || e.Range.Len() == 0 {
			return fmt.Errorf("journal of %q: %s %v: an empty range: %w", key, e.Kind, e.Range, ErrInvalid)
		}
		if e.Range.Last > mark {
			return fmt.Errorf("journal of %q: %s %v: the key's numbers end at %d, and a number not reserved yet cannot be %s: %w",
				key, e.Kind, e.Range, mark, e.Kind, ErrInvalid)
		}
	case Enrolled, Forgotten:
		if key != CatalogKey || e.Range != (Range{}) || e.Reason == "" {
			return fmt.Errorf("journal of %q: %s: only in the journal of %q, without a range, with the entry as the reason: %w", key, e.Kind, CatalogKey, ErrInvalid)
		}
	case Closed:
		if e.Range.First != 1 || e.Range.Last < 1 || e.Range.Last > mark {
			return fmt.Errorf("journal of %q: closed %v, want [1, N] with N at most the mark %d: %w", key, e.Range, mark, ErrInvalid)
		}
	default:
		return fmt.Errorf("journal of %q: a caller notes released, closed, voided, lost, handed, enrolled or forgotten, not %s: %w", key, e.Kind, ErrInvalid)
	}
	if e.Kind == Voided && e.Reason == "" {
		return fmt.Errorf("journal of %q: void %v without a reason: %w", key, e.Range, ErrInvalid)
	}
	if len(e.Reason) > MaxReason || len(e.Actor) > MaxReason {
		return fmt.Errorf("journal of %q: a reason of %d bytes and an actor of %d, at most %d each: %w",
			key, len(e.Reason), len(e.Actor), MaxReason, ErrInvalid)
	}
	if e.Kind != Enrolled && e.Kind != Forgotten && (!printable(e.Reason) || !printable(e.Actor)) {
		// An auditor reads them in sn gaps, a record a line: a control
		// character would draw lines or move the cursor there.
		return fmt.Errorf("journal of %q: %s: a reason or an actor with a control or format character (%q, %q): %w", key, e.Kind, e.Reason, e.Actor, ErrInvalid)
	}
	return nil
}

// printable reports whether s has no control or format character.
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ChainHash returns the hash of e, the record after one whose hash was
// prev, in key's journal: SHA-256 over a fixed prefix, prev, the key and
// every field of e but Hash, each length-prefixed or of fixed size, times
// to the microsecond. The first record of a journal follows the zero
// hash. A store sets e.Hash to it when it appends e; [VerifyChain]
// recomputes it.
func ChainHash(prev [32]byte, key string, e Event) [32]byte {
	b := append([]byte("sn journal 1\n"), prev[:]...)
	b = appendFields(b, key, e, e.Reason)
	b = binary.BigEndian.AppendUint64(b, uint64(micros(e.Deadline)))
	return sha256.Sum256(b)
}

// appendFields appends to b what the chain and a prune's seal hash of
// record e of key's journal, with reason for its reason: the key, Seq,
// Kind, Range, At, By, Actor and reason, each length-prefixed or of fixed
// size.
func appendFields(b []byte, key string, e Event, reason string) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(v int64) { b = binary.BigEndian.AppendUint64(b, uint64(v)) }
	str(key)
	num(e.Seq)
	b = append(b, byte(e.Kind))
	num(e.Range.First)
	num(e.Range.Last)
	num(micros(e.At))
	str(e.By)
	str(e.Actor)
	str(reason)
	return b
}

// micros returns t in microseconds since 1970, 0 for the zero time.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// FromMicros is the inverse of the times a journal stores: 0 is the zero
// time.
func FromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// Chain sets e.Seq and e.Hash for the record after head in key's
// journal, and e.At to the microsecond (to now when it is zero): what a
// store does to a record before it writes it. It returns e and the new
// head, whose Mark the caller sets.
func Chain(head Head, key string, e Event) (Event, Head) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	e.At = FromMicros(e.At.UnixMicro())
	if !e.Deadline.IsZero() {
		e.Deadline = FromMicros(e.Deadline.UnixMicro())
	}
	if e.By == "" {
		e.By = ProcessName()
	}
	e.By, e.Actor, e.Reason = strings.ToValidUTF8(e.By, "?"), strings.ToValidUTF8(e.Actor, "?"), strings.ToValidUTF8(e.Reason, "?")
	e.Seq = head.Seq + 1
	e.Hash = ChainHash(head.Hash, key, e)
	return e, Head{Seq: e.Seq, Hash: e.Hash, Mark: head.Mark, Void: head.Void}
}

// Reconcile returns the records a store appends before the first one of
// a change to a key whose counter stood at before, when the journal's
// head does not end there and above it: a Pruned record of [1, before]
// for a key used before the store kept journals; a Floored record for a
// counter raised without a record (an earlier release's mark). A counter
// below the journal's mark is refused by [Append] ([ErrBehind]), not
// reconciled.
func Reconcile(head Head, before int64) []Event {
	switch {
	case head.Seq == 0 && before > 0:
		return []Event{{Kind: Pruned, Range: Range{1, before}, Reason: "numbers reserved before the store kept a journal"}}
	case head.Seq > 0 && before > head.Mark:
		return []Event{{Kind: Floored, Range: Range{head.Mark + 1, before}, Reason: "raised without a record (a mark)"}}
	}
	return nil
}

type byKey struct{}

// WithBy returns a context that names the writer of the journal records
// a store writes in calls made with it: [sequence.Allocator.Allocate] and the others take
// their Event.By from it. A [sequence.Segment] names itself this way, so that the
// records of two Segments in one process tell them apart. Without it, a
// store names the process ([ProcessName]).
func WithBy(ctx context.Context, by string) context.Context {
	return context.WithValue(ctx, byKey{}, by)
}

// ByOf returns the writer ctx names ([WithBy]), or [ProcessName].
func ByOf(ctx context.Context) string {
	if by, ok := ctx.Value(byKey{}).(string); ok && by != "" {
		return by
	}
	return ProcessName()
}

type drawnKey struct{}

// WithDrawn returns a context under which Allocate records its block as
// [Drawn], issued whole by the caller at once, rather than [Reserved]
// (or, with drawn false, as Reserved again): a caller that prints every
// number it reserves, such as the command line's single draws, leaves no
// block open. A layer that reserves for others (a cache refilling from
// its ledger) takes it back.
func WithDrawn(ctx context.Context, drawn bool) context.Context {
	return context.WithValue(ctx, drawnKey{}, drawn)
}

type cacheKey struct{}

// WithCache returns a context under which Allocate records its block as
// [Cached]: reserved for a cache that hands it out to other processes in
// blocks, and records to whom ([Handed]).
func WithCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheKey{}, true)
}

// AllocateKind returns the kind of the record Allocate writes under ctx:
// Drawn under [WithDrawn], Cached under [WithCache], Reserved otherwise.
func AllocateKind(ctx context.Context) EventKind {
	if d, _ := ctx.Value(drawnKey{}).(bool); d {
		return Drawn
	}
	if c, _ := ctx.Value(cacheKey{}).(bool); c {
		return Cached
	}
	return Reserved
}

var process struct {
	once sync.Once
	name string
}

// ProcessName names this process in the journals it writes: host,
// program, process id and a random tag drawn at start, so that two runs
// of one program, even with the same process id, have different names:
// "build-7 orders[4127] 3f9a2c1e". A journal's analysis ([Audit]) takes a
// block's writer to hold it until the writer notes [Closed] or reserves
// past it.
func ProcessName() string {
	process.once.Do(func() {
		host, _ := os.Hostname()
		var tag [4]byte
		_, _ = rand.Read(tag[:])
		process.name = fmt.Sprintf("%s %s[%d] %x", host, filepath.Base(os.Args[0]), os.Getpid(), tag)
	})
	return process.name
}
