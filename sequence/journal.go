package sequence

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Journal is implemented by a [Gen] or [Allocator] whose store keeps, for
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
type Journal interface {
	// Note appends e to key's journal and returns the record as stored,
	// with Seq, At, By and Hash set by the store. e.Kind must be
	// Released, Closed, Voided or Lost, and e.Range at or below key's mark
	// (empty for Closed): an error wrapping [ErrInvalidArgument]
	// otherwise.
	Note(ctx context.Context, key string, e Event) (Event, error)
	// Events returns up to limit records of key's journal whose Seq is
	// greater than after, in order of Seq.
	Events(ctx context.Context, key string, after int64, limit int) ([]Event, error)
	// Head returns the Seq and Hash of key's last record, and key's mark,
	// as the store keeps them beside the counter.
	Head(ctx context.Context, key string) (Head, error)
}

// Continuous is implemented by a [Gen] that issues every number of a
// key, in order, without a gap: one at a time, each in the caller's
// transaction or held and then committed or voided, never from a block
// (sqlseq's Gapless). Continuous reports whether it does. sn's legal
// profiles that demand an unbroken series accept only such a Gen.
type Continuous interface {
	Continuous() bool
}

// Head is where a key's journal ends, as its store keeps it beside the
// counter: the Seq and Hash of the last record, and the counter's mark
// (the largest number reserved or floored). A zero Head is a key with
// no journal.
type Head struct {
	Seq  int64
	Hash [32]byte
	Mark int64
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
	// (a [Returner]); the mark went down to Range.First-1, and a later
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
	// [Expirer]) or found lower than the journal's mark, and goes on from
	// Range.Last (0 after a deletion): the records before are of its
	// earlier life.
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
	return 0, fmt.Errorf("sequence: unknown journal record kind %q: %w", s, ErrInvalidArgument)
}

// Event is one record of a key's [Journal].
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

// CheckNote returns an error wrapping [ErrInvalidArgument] when e cannot
// be noted in a journal whose key has mark: a kind other than Released,
// Closed or Voided, an empty range or one above the mark, a Closed range
// that does not start at 1, a void without a reason, a long reason or
// actor.
func CheckNote(key string, e Event, mark int64) error {
	switch e.Kind {
	case Released, Voided, Lost, Handed:
		if e.Kind == Handed && e.Actor == "" {
			return fmt.Errorf("sequence: journal of %q: handed %v without the process it was handed to (Actor): %w", key, e.Range, ErrInvalidArgument)
		}
		if e.Range.First < 1 || e.Range.Len() == 0 {
			return fmt.Errorf("sequence: journal of %q: %s %v: an empty range: %w", key, e.Kind, e.Range, ErrInvalidArgument)
		}
		if e.Range.Last > mark {
			return fmt.Errorf("sequence: journal of %q: %s %v: the key's numbers end at %d, and a number not reserved yet cannot be %s: %w",
				key, e.Kind, e.Range, mark, e.Kind, ErrInvalidArgument)
		}
	case Enrolled, Forgotten:
		if key != CatalogKey || e.Range != (Range{}) || e.Reason == "" {
			return fmt.Errorf("sequence: journal of %q: %s: only in the journal of %q, without a range, with the entry as the reason: %w", key, e.Kind, CatalogKey, ErrInvalidArgument)
		}
	case Closed:
		if e.Range.First != 1 || e.Range.Last < 1 || e.Range.Last > mark {
			return fmt.Errorf("sequence: journal of %q: closed %v, want [1, N] with N at most the mark %d: %w", key, e.Range, mark, ErrInvalidArgument)
		}
	default:
		return fmt.Errorf("sequence: journal of %q: a caller notes released, closed, voided, lost, handed, enrolled or forgotten, not %s: %w", key, e.Kind, ErrInvalidArgument)
	}
	if e.Kind == Voided && e.Reason == "" {
		return fmt.Errorf("sequence: journal of %q: void %v without a reason: %w", key, e.Range, ErrInvalidArgument)
	}
	if len(e.Reason) > MaxReason || len(e.Actor) > MaxReason {
		return fmt.Errorf("sequence: journal of %q: a reason of %d bytes and an actor of %d, at most %d each: %w",
			key, len(e.Reason), len(e.Actor), MaxReason, ErrInvalidArgument)
	}
	if e.Kind != Enrolled && e.Kind != Forgotten && (!printable(e.Reason) || !printable(e.Actor)) {
		// An auditor reads them in sn gaps, a record a line: a control
		// character would draw lines or move the cursor there.
		return fmt.Errorf("sequence: journal of %q: %s: a reason or an actor with a control or format character (%q, %q): %w", key, e.Kind, e.Reason, e.Actor, ErrInvalidArgument)
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
	return e, Head{Seq: e.Seq, Hash: e.Hash, Mark: head.Mark}
}

// Reconcile returns the records a store appends before the first one of
// a change to a key whose counter stood at before, when the journal's
// head does not end there: a Pruned record of [1, before] for a key used
// before the store kept journals; a Restarted record for a counter
// deleted by expiry, or found below the journal's mark; a Floored record
// for a counter raised without a record (a [Marker]'s mark).
func Reconcile(head Head, before int64) []Event {
	switch {
	case head.Seq == 0 && before > 0:
		return []Event{{Kind: Pruned, Range: Range{1, before}, Reason: "numbers reserved before the store kept a journal"}}
	case head.Seq > 0 && before < head.Mark:
		return []Event{{Kind: Restarted, Range: Range{0, before}, Reason: fmt.Sprintf("the counter stood at %d, below the journal's %d: deleted when its period expired, or lost", before, head.Mark)}}
	case head.Seq > 0 && before > head.Mark:
		return []Event{{Kind: Floored, Range: Range{head.Mark + 1, before}, Reason: "raised without a record (a mark)"}}
	}
	return nil
}

// HashString formats a hash as 64 hexadecimal digits.
func HashString(h [32]byte) string { return hex.EncodeToString(h[:]) }

type byKey struct{}

// WithBy returns a context that names the writer of the journal records
// a store writes in calls made with it: [Allocate] and the others take
// their Event.By from it. A [Segment] names itself this way, so that the
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

// ChainError is the error [VerifyChain] returns for a journal that is not
// the one its store wrote: Seq is the first record that does not hold.
type ChainError struct {
	Key    string
	Seq    int64
	Reason string
}

// Error names the key and the record, and says what is wrong with it.
func (e *ChainError) Error() string {
	return fmt.Sprintf("sequence: journal of %q: record %d: %s", e.Key, e.Seq, e.Reason)
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
// A journal pruned ([Pruner]) starts with a Pruned record signed by a
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
func ReadJournal(ctx context.Context, j Journal, key string) ([]Event, Head, error) {
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

// journals keeps the journals of a store in memory, for MemoryAllocator.
type journals struct {
	mu sync.Mutex
	m  map[string]*memJournal
}

type memJournal struct {
	events []Event
	head   Head
}

// append chains e after key's last record, for a change of the key's
// mark from before to mark. The caller holds whatever lock orders the
// key's writes.
func (j *journals) append(key string, e Event, before, mark int64) Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.m == nil {
		j.m = map[string]*memJournal{}
	}
	mj := j.m[key]
	if mj == nil {
		mj = &memJournal{}
		j.m[key] = mj
	}
	for _, r := range Reconcile(mj.head, before) {
		r.By = e.By
		r, mj.head = Chain(mj.head, key, r)
		mj.head.Mark = before
		mj.events = append(mj.events, r)
	}
	e, mj.head = Chain(mj.head, key, e)
	mj.head.Mark = mark
	mj.events = append(mj.events, e)
	return e
}

func (j *journals) events(ctx context.Context, key string, after int64, limit int) ([]Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	mj := j.m[key]
	if mj == nil {
		return nil, nil
	}
	var out []Event
	for _, e := range mj.events {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (j *journals) headOf(ctx context.Context, key string) (Head, error) {
	if err := ctx.Err(); err != nil {
		return Head{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if mj := j.m[key]; mj != nil {
		return mj.head, nil
	}
	return Head{}, nil
}

// Pruner is implemented by a store that can prune its journals, for a
// closed period whose retention is over: Prune replaces the records of
// key up to and including record p.Seq with p, a [Pruned] record made by
// [PruneRecord] from those records and signed with a key the store does
// not hold, so that the chain, and anchors taken before, still verify.
// It checks, in the transaction that writes, that record p.Seq is still
// the one sealed ([CheckPrune]), and returns p as stored. sn never
// prunes on its own.
type Pruner interface {
	Prune(ctx context.Context, key string, p Event) (Event, error)
}

// PruneRecord returns the Pruned record that replaces events, the
// records of key from its first (or from an earlier Pruned record) to
// the one to prune through, read at now: a summary of what they said of
// each number, signed with sk ([seal.go]'s format), and keeping the
// hashes of the records it replaces. Records that do not explain every
// number ([Audit]) are not pruned: an error wrapping
// [ErrInvalidArgument]. Verify events ([VerifySealed]) before: the
// record vouches for them.
func PruneRecord(key string, events []Event, now time.Time, sk ed25519.PrivateKey) (Event, error) {
	if len(events) == 0 {
		return Event{}, fmt.Errorf("sequence: prune the journal of %q: no records: %w", key, ErrInvalidArgument)
	}
	if len(sk) != ed25519.PrivateKeySize {
		return Event{}, fmt.Errorf("sequence: prune the journal of %q: a prune is signed with an Ed25519 private key kept outside the store (sn keygen), got %d bytes: %w", key, len(sk), ErrInvalidArgument)
	}
	last := events[len(events)-1]
	rep := Audit(key, events, Head{}, now)
	if !rep.Explained() {
		return Event{}, fmt.Errorf("sequence: prune the journal of %q through record %d: it does not explain every number (a hold lapsed, a number unaccounted for, or %d problems): commit or void what is pending first: %w",
			key, last.Seq, len(rep.Problems), ErrInvalidArgument)
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
	p := Event{Seq: last.Seq, Kind: Pruned, Range: Range{1, top}, At: FromMicros(now.UnixMicro()), By: ProcessName(), Hash: last.Hash}
	s.sig = ed25519.Sign(sk, s.message(key, p))
	p.Reason = s.reason()
	return p, nil
}

// prune replaces key's records through p.Seq with p.
func (j *journals) prune(ctx context.Context, key string, p Event) (Event, error) {
	if err := ctx.Err(); err != nil {
		return Event{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var mj memJournal
	if j.m[key] != nil {
		mj = *j.m[key]
	}
	var at Event
	i := 0
	for i < len(mj.events) && mj.events[i].Seq <= p.Seq {
		at = mj.events[i]
		i++
	}
	if err := CheckPrune(key, p, at, mj.head); err != nil {
		return Event{}, err
	}
	j.m[key].events = append([]Event{p}, mj.events[i:]...)
	return p, nil
}

// Prune replaces key's records through p.Seq with p (see [Pruner]).
func (a *MemoryAllocator) Prune(ctx context.Context, key string, p Event) (Event, error) {
	return a.jour.prune(ctx, key, p)
}

// eventJSON is a journal record as a store that keeps records as values
// writes it (bbolt, etcd): JSON, so that a reader of the store (bbolt's
// command, etcdctl, a script) can follow it. Its Seq is the value's key.
type eventJSON struct {
	Kind     string `json:"kind"`
	First    int64  `json:"first,omitempty"`
	Last     int64  `json:"last,omitempty"`
	At       int64  `json:"at_us"`
	By       string `json:"by"`
	Actor    string `json:"actor,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Deadline int64  `json:"deadline_us,omitempty"`
	Hash     string `json:"hash"`
}

// MarshalEvent encodes e but its Seq as the JSON a store that keeps
// records as values writes: kind, first, last, at_us, by, actor, reason,
// deadline_us and hash (hexadecimal).
func MarshalEvent(e Event) []byte {
	v, _ := json.Marshal(eventJSON{Kind: e.Kind.String(), First: e.Range.First, Last: e.Range.Last, At: micros(e.At), By: e.By,
		Actor: e.Actor, Reason: e.Reason, Deadline: micros(e.Deadline), Hash: HashString(e.Hash)})
	return v
}

// UnmarshalEvent decodes what [MarshalEvent] wrote, the record seq. A
// hash that does not decode is left zero, for [VerifyChain] to report.
func UnmarshalEvent(seq int64, v []byte) (Event, error) {
	var r eventJSON
	if err := json.Unmarshal(v, &r); err != nil {
		return Event{}, fmt.Errorf("record %d: %v", seq, err)
	}
	kind, err := ParseEventKind(r.Kind)
	if err != nil {
		return Event{}, fmt.Errorf("record %d: %v", seq, err)
	}
	e := Event{Seq: seq, Kind: kind, Range: Range{r.First, r.Last}, At: FromMicros(r.At), By: r.By,
		Actor: r.Actor, Reason: r.Reason, Deadline: FromMicros(r.Deadline)}
	if h, err := hex.DecodeString(r.Hash); err == nil && len(h) == 32 {
		copy(e.Hash[:], h)
	}
	return e, nil
}
