package journal

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// State is what became of a number, as its key's journal tells it.
type State uint8

// The states of a number in an [Audit].
const (
	// Issued: the number was issued.
	Issued State = iota + 1
	// Open: the number is in a block whose process has not closed the
	// key: issued, about to be, or never printed if the process ended
	// without closing (a crash). The journal cannot tell which; the
	// block bounds it.
	Open
	// Unused: the number was reserved and will never be issued
	// ([Released]).
	Unused
	// Skipped: a floor passed over the number ([Floored]).
	Skipped
	// Void: the number was voided, with a reason ([Voided]).
	Void
	// Pending: the number is held for a gapless series, before its
	// deadline ([Held]).
	Pending
	// Lapsed: the number was held for a gapless series and its deadline
	// passed with neither a commit nor a void: someone must commit or
	// void it.
	Lapsed
	// Summed: the journal records about the number were removed by
	// retention; the record that replaced them ([Pruned]) sums
	// them up.
	Summed
	// Unaccounted: no record of the journal accounts for the number.
	Unaccounted
)

var stateNames = [...]string{
	Issued: "issued", Open: "open", Unused: "unused", Skipped: "skipped", Void: "void",
	Pending: "pending", Lapsed: "lapsed", Summed: "summed", Unaccounted: "unaccounted",
}

// String returns the state's name: "issued", "open" and so on.
func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Explained reports whether a number in state s needs no one's action:
// every state but Lapsed and Unaccounted.
func (s State) Explained() bool { return s != Lapsed && s != Unaccounted }

// Span is a run of consecutive numbers in one state, with the journal
// record that put them there.
type Span struct {
	Range Range
	State State
	Event Event // the record that explains it; zero for Unaccounted
}

// Cause says in a sentence why the numbers of s are in their state.
func (s Span) Cause() string {
	e := s.Event
	at := e.At.UTC().Format(time.RFC3339)
	switch s.State {
	case Issued:
		if e.Kind == Drawn {
			return fmt.Sprintf("drawn and issued at once by %s at %s (record %d)", e.By, at, e.Seq)
		}
		if e.Kind == Committed {
			return fmt.Sprintf("committed by %s at %s (record %d)", e.By, at, e.Seq)
		}
		if e.Kind == Handed {
			return fmt.Sprintf("issued from the block handed to %s (record %d, at %s)", e.Actor, e.Seq, at)
		}
		return fmt.Sprintf("issued from the block reserved by %s at %s (record %d)", e.By, at, e.Seq)
	case Open:
		switch e.Kind {
		case Cached:
			return fmt.Sprintf("held by %s since %s (record %d): not handed to a process yet, or handed to one whose record the cache lost with its data", e.By, at, e.Seq)
		case Handed:
			return fmt.Sprintf("in the block handed to %s (record %d, at %s), which has not closed the key since: issued, or never printed if the process ended without closing", e.Actor, e.Seq, at)
		}
		return fmt.Sprintf("in the block reserved by %s at %s (record %d), which has not closed the key since: issued, or never printed if the process ended without closing", e.By, at, e.Seq)
	case Unused:
		if e.Kind == Lost {
			return fmt.Sprintf("reserved for %s, which never received the block (record %d, at %s): %s", e.By, e.Seq, at, e.Reason)
		}
		return fmt.Sprintf("released unused by %s at %s (record %d): %s", e.By, at, e.Seq, e.Reason)
	case Skipped:
		return fmt.Sprintf("skipped by a floor raised by %s at %s (record %d)", e.By, at, e.Seq)
	case Void:
		who := e.By
		if e.Actor != "" {
			who = e.Actor + " (" + e.By + ")"
		}
		return fmt.Sprintf("voided by %s at %s (record %d): %s", who, at, e.Seq, e.Reason)
	case Pending:
		return fmt.Sprintf("held by %s at %s (record %d) until %s, to be committed or voided", e.By, at, e.Seq, e.Deadline.UTC().Format(time.RFC3339))
	case Lapsed:
		return fmt.Sprintf("held by %s at %s (record %d) until %s, and neither committed nor voided since: commit or void it", e.By, at, e.Seq, e.Deadline.UTC().Format(time.RFC3339))
	case Summed:
		return fmt.Sprintf("its records were pruned at %s (record %d): %s", at, e.Seq, e.Reason)
	}
	return "no record of the journal accounts for it"
}

// Report is what a key's journal says of its numbers: [Audit]'s answer.
type Report struct {
	Key  string
	Head Head
	// Spans cover every number from 1 to the journal's mark, in order,
	// each run of numbers in one state by one record.
	Spans []Span
	// Problems are records that contradict the ones before them: a block
	// reserved below the mark (its numbers reserved twice), a return or a
	// floor not at the mark, a mark the counter does not have.
	Problems []string
}

// Explained reports whether every number of the report is in an
// explained state and the journal has no problems.
func (r *Report) Explained() bool {
	if len(r.Problems) > 0 {
		return false
	}
	for _, s := range r.Spans {
		if !s.State.Explained() {
			return false
		}
	}
	return true
}

// Within returns the spans of r that meet [from, to], cut to it. Numbers
// above the journal's mark are not in any span: they are not reserved
// yet.
func (r *Report) Within(from, to int64) []Span {
	var out []Span
	for _, s := range r.Spans {
		if s.Range.Last < from || s.Range.First > to {
			continue
		}
		s.Range.First, s.Range.Last = max(s.Range.First, from), min(s.Range.Last, to)
		out = append(out, s)
	}
	return out
}

// Gaps returns the spans of r that were not issued: every span but the
// Issued ones.
func (r *Report) Gaps() []Span {
	var out []Span
	for _, s := range r.Spans {
		if s.State != Issued {
			out = append(out, s)
		}
	}
	return out
}

// Audit replays key's journal, events in order of Seq as [ReadJournal]
// reads them, and says what became of every number up to its mark. now
// decides which holds have lapsed.
//
// A block is Open while the process that reserved it has not closed the
// key; it is Issued once that process noted [Closed] above it, or reserved two
// more blocks of the key after it (a [sequence.Segment] takes a block only when
// the one before it is used up, and holds two at most). Returned numbers
// leave the block, to be reserved again; released, voided and skipped
// ones take the state their record gives.
func Audit(key string, events []Event, head Head, now time.Time) *Report {
	a := &auditor{events: events, blocks: map[string][]Range{}}
	r := &Report{Key: key, Head: head}
	for i, e := range events {
		if msg := a.replay(i, now); msg != "" {
			r.Problems = append(r.Problems, fmt.Sprintf("record %d: %s", e.Seq, msg))
		}
	}
	if a.mark != head.Mark && !(head.Mark == 0 && head.Seq == 0) {
		r.Problems = append(r.Problems, fmt.Sprintf("the head says the journal's mark is %d, and its records %d", head.Mark, a.mark))
		if head.Mark > a.mark {
			a.paint(Range{First: a.mark + 1, Last: head.Mark}, Unaccounted, -1)
		}
	}
	for _, s := range a.spans {
		if n := len(r.Spans); n > 0 && r.Spans[n-1].State == s.state && r.Spans[n-1].Range.Last+1 == s.r.First &&
			(s.ev < 0 && r.Spans[n-1].Event.Seq == 0 || s.ev >= 0 && r.Spans[n-1].Event.Seq == events[s.ev].Seq) {
			r.Spans[n-1].Range.Last = s.r.Last
			continue
		}
		sp := Span{Range: s.r, State: s.state}
		if s.ev >= 0 {
			sp.Event = events[s.ev]
		}
		r.Spans = append(r.Spans, sp)
	}
	return r
}

// span is a run of numbers in one state, by the record events[ev] (-1
// for none).
type span struct {
	r     Range
	state State
	ev    int
}

type auditor struct {
	events []Event
	spans  []span
	mark   int64
	blocks map[string][]Range // per process, its blocks not settled, in order
	caches map[string]bool    // the writers of Cached records
}

// holder returns the process that holds the numbers of record e: the one
// a Handed record names, or its writer.
func holder(e Event) string {
	if e.Kind == Handed {
		return e.Actor
	}
	return e.By
}

// replay applies events[i], and returns what is wrong with it, or "".
func (a *auditor) replay(i int, now time.Time) string {
	e := &a.events[i]
	r := e.Range
	switch e.Kind {
	case Pruned:
		a.paint(Range{First: 1, Last: r.Last}, Summed, i)
		a.mark = r.Last
	case Restarted:
		// A new life: what the report says is of this one. sn never
		// draws again from a counter that expired (the period is over),
		// so a counter that went back was deleted or lowered by hand, or
		// restored from an old copy: its numbers above r.Last may be
		// issued twice.
		msg := fmt.Sprintf("the counter went back from %d to %d (deleted, lowered by hand, or restored from an old copy): numbers %d to %d may be issued twice", a.mark, r.Last, r.Last+1, a.mark)
		a.spans, a.blocks, a.mark = nil, map[string][]Range{}, r.Last
		if r.Last > 0 {
			a.paint(Range{First: 1, Last: r.Last}, Summed, i)
		}
		return msg
	case Reserved, Floored, Drawn, Held, Cached:
		if r.Len() == 0 || r.First < 1 {
			return fmt.Sprintf("%s an empty range %v", e.Kind, r)
		}
		var msg string
		if r.First <= a.mark {
			msg = fmt.Sprintf("%s %v, at or below the mark %d: numbers %v were reserved twice", e.Kind, r, a.mark, Range{First: r.First, Last: min(r.Last, a.mark)})
		} else if r.First > a.mark+1 {
			a.paint(Range{First: a.mark + 1, Last: r.First - 1}, Unaccounted, -1)
		}
		a.mark = max(a.mark, r.Last)
		switch e.Kind {
		case Reserved:
			a.paint(r, Open, i)
			bs := append(a.blocks[e.By], r)
			for len(bs) > 2 {
				a.settle(e.By, bs[0])
				bs = bs[1:]
			}
			a.blocks[e.By] = bs
		case Cached:
			// The cache's until it hands them out: open, and never taken
			// to be issued (a cache that lost its data, and the records
			// of what it handed out, cannot say more).
			a.paint(r, Open, i)
			if a.caches == nil {
				a.caches = map[string]bool{}
			}
			a.caches[e.By] = true
		case Floored:
			a.paint(r, Skipped, i)
		case Drawn:
			a.paint(r, Issued, i)
		case Held:
			st := Pending
			if !now.Before(e.Deadline) {
				st = Lapsed
			}
			a.paint(r, st, i)
		}
		return msg
	case Returned:
		if r.Last != a.mark || r.Len() == 0 || r.First < 1 {
			return fmt.Sprintf("returned %v, not the top of the numbers reserved (the mark is %d)", r, a.mark)
		}
		a.paint(r, 0, -2)
		a.mark = r.First - 1
		bs := a.blocks[e.By]
		for j := len(bs) - 1; j >= 0; j-- {
			if bs[j].First >= r.First {
				bs = bs[:j]
			} else if bs[j].Last >= r.First {
				bs[j].Last = r.First - 1
			}
		}
		a.blocks[e.By] = bs
	case Handed:
		if r.Len() == 0 || r.First < 1 || r.Last > a.mark {
			return fmt.Sprintf("handed %v, numbers not reserved (the mark is %d)", r, a.mark)
		}
		a.paint(r, Open, i)
		// Whoever held them before (a process that gave them back to
		// the cache, the cache) holds them no more.
		for h, bs := range a.blocks {
			a.blocks[h] = cut(bs, r)
		}
		if h := e.Actor; !a.caches[h] {
			bs := append(a.blocks[h], r)
			for len(bs) > 2 {
				a.settle(h, bs[0])
				bs = bs[1:]
			}
			a.blocks[h] = bs
		}
	case Released, Voided, Committed:
		if r.Len() == 0 || r.First < 1 || r.Last > a.mark {
			return fmt.Sprintf("%s %v, numbers not reserved (the mark is %d)", e.Kind, r, a.mark)
		}
		st := map[EventKind]State{Released: Unused, Voided: Void, Committed: Issued}[e.Kind]
		var msg string
		if e.Kind == Released {
			// A number voided, then released unused by the process that
			// held it: it was never issued, and the void was of a number
			// on no document.
			for j := a.find(r.First); j < len(a.spans) && a.spans[j].r.First <= r.Last; j++ {
				if sp := a.spans[j]; sp.state == Void {
					v := a.events[sp.ev]
					msg = fmt.Sprintf("released %v unused, and numbers %v of it were voided by %s at %s (record %d) while %s held them unissued: the void was of numbers never issued",
						r, Range{First: max(sp.r.First, r.First), Last: min(sp.r.Last, r.Last)}, cmp.Or(v.Actor, v.By), v.At.UTC().Format(time.RFC3339), v.Seq, e.By)
					break
				}
			}
		}
		a.paint(r, st, i)
		return msg
	case Enrolled, Forgotten:
		// The catalog's history: no numbers.
	case Lost:
		if r.Len() == 0 || r.First < 1 || r.Last > a.mark {
			return fmt.Sprintf("lost %v, numbers not reserved (the mark is %d)", r, a.mark)
		}
		// By's blocks there never reached it: open, or settled since by
		// a later Closed or by blocks reserved after them, they are
		// unused.
		for j := a.find(r.First); j < len(a.spans) && a.spans[j].r.First <= r.Last; j++ {
			sp := a.spans[j]
			if sp.ev < 0 || (sp.state != Open && sp.state != Issued) {
				continue
			}
			if rec := a.events[sp.ev]; rec.Kind != Reserved && rec.Kind != Handed || holder(rec) != e.By {
				continue
			}
			part := Range{First: max(sp.r.First, r.First), Last: min(sp.r.Last, r.Last)}
			a.paint(part, Unused, i)
			j = a.find(part.Last+1) - 1
		}
		bs := a.blocks[e.By][:0]
		for _, b := range a.blocks[e.By] {
			if b.Last < r.First || b.First > r.Last {
				bs = append(bs, b)
			}
		}
		a.blocks[e.By] = bs
	case Closed:
		bs := a.blocks[e.By]
		for len(bs) > 0 && bs[0].Last <= r.Last {
			a.settle(e.By, bs[0])
			bs = bs[1:]
		}
		a.blocks[e.By] = bs
	default:
		return fmt.Sprintf("a record of unknown kind %s", e.Kind)
	}
	return ""
}

// cut returns bs without the numbers of r.
func cut(bs []Range, r Range) []Range {
	var out []Range
	for _, b := range bs {
		if b.Last < r.First || b.First > r.Last {
			out = append(out, b)
			continue
		}
		if b.First < r.First {
			out = append(out, Range{First: b.First, Last: r.First - 1})
		}
		if b.Last > r.Last {
			out = append(out, Range{First: r.Last + 1, Last: b.Last})
		}
	}
	return out
}

// settle makes the numbers of b still Open by by Issued.
func (a *auditor) settle(by string, b Range) {
	for i := a.find(b.First); i < len(a.spans) && a.spans[i].r.First <= b.Last; i++ {
		s := a.spans[i]
		if s.state != Open || holder(a.events[s.ev]) != by {
			continue
		}
		if s.r.First >= b.First && s.r.Last <= b.Last {
			a.spans[i].state = Issued
			continue
		}
		part := Range{First: max(s.r.First, b.First), Last: min(s.r.Last, b.Last)}
		a.paint(part, Issued, s.ev)
		i = a.find(part.Last+1) - 1
	}
}

// find returns the index of the first span that ends at or after v.
func (a *auditor) find(v int64) int {
	return sort.Search(len(a.spans), func(i int) bool { return a.spans[i].r.Last >= v })
}

// paint puts the numbers of r in state st by the record events[ev],
// splitting the spans it covers in part; ev -2 takes them out of every
// span.
func (a *auditor) paint(r Range, st State, ev int) {
	i := a.find(r.First)
	if i == len(a.spans) && ev != -2 {
		a.spans = append(a.spans, span{r, st, ev})
		return
	}
	j := i
	var mid []span
	for ; j < len(a.spans) && a.spans[j].r.First <= r.Last; j++ {
		if s := a.spans[j]; s.r.First < r.First {
			s.r.Last = r.First - 1
			mid = append(mid, s)
		}
	}
	if ev != -2 {
		mid = append(mid, span{r, st, ev})
	}
	if j > i {
		if s := a.spans[j-1]; s.r.Last > r.Last {
			s.r.First = r.Last + 1
			mid = append(mid, s)
		}
	}
	a.spans = slices.Replace(a.spans, i, j, mid...)
}
