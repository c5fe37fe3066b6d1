package snowflake

import (
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
)

// Layout is how an id's 63 bits are shared: the time since Epoch in units
// of Unit, the worker id and a sequence within one unit. The sign bit is
// always 0, so ids are positive int64s that sort by time.
type Layout struct {
	TimeBits, WorkerBits, SeqBits int
	Epoch                         time.Time
	Unit                          time.Duration
	// SeqBeforeWorker puts the sequence above the worker id, as sonyflake
	// does: time | sequence | worker. The default is time | worker |
	// sequence, as Twitter's snowflake.
	SeqBeforeWorker bool
}

// The presets match the ids of two common libraries bit for bit, given the
// same worker id.
var (
	// Twitter is bwmarrin/snowflake's layout: 41 bits of milliseconds
	// since 2010-11-04 01:42:54.657 UTC, 10 bits of worker, 12 of
	// sequence: 4,096,000 ids per second per worker, until 2080.
	Twitter = Layout{TimeBits: 41, WorkerBits: 10, SeqBits: 12, Epoch: time.UnixMilli(1288834974657).UTC(), Unit: time.Millisecond}

	// Sonyflake is sonyflake v2's default layout: 39 bits of 10 ms units
	// since 2025-01-01 UTC, 8 bits of sequence above 16 bits of worker:
	// 25,600 ids per second per worker, until 2199.
	Sonyflake = Layout{TimeBits: 39, WorkerBits: 16, SeqBits: 8, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Unit: 10 * time.Millisecond, SeqBeforeWorker: true}
)

// MinLife is the least time a Layout must still have before its End when a
// Gen is made with it: a layout that runs out sooner is refused.
const MinLife = 10 * 365 * 24 * time.Hour

// End returns the last instant the layout can represent: after it, every
// Next fails.
func (l Layout) End() time.Time {
	return l.Epoch.Add(time.Duration(l.maxTick()) * l.Unit)
}

// String returns the layout in one line, all of what decides which bits
// an id gets: "41/10/12 time|worker|seq unit=1ms epoch=2010-11-04T01:42:54.657Z".
// A [Leaser] records it with its name, so that two layouts never share
// worker ids: 41/2/11 with worker 2 and 41/1/12 with worker 1 put the
// same bits in the same place.
func (l Layout) String() string {
	order := "time|worker|seq"
	if l.SeqBeforeWorker {
		order = "time|seq|worker"
	}
	return fmt.Sprintf("%d/%d/%d %s unit=%v epoch=%s", l.TimeBits, l.WorkerBits, l.SeqBits, order, l.Unit, l.Epoch.UTC().Format(time.RFC3339Nano))
}

// Workers returns how many worker ids the layout has.
func (l Layout) Workers() int64 { return 1 << l.WorkerBits }

// Limit returns the most ids one worker can issue per second.
func (l Layout) Limit() float64 {
	return float64(int64(1)<<l.SeqBits) / l.Unit.Seconds()
}

// maxTick returns the largest time value, capped so that it times Unit
// fits a time.Duration.
func (l Layout) maxTick() int64 {
	max := int64(1)<<l.TimeBits - 1
	if limit := int64(1<<63-1) / int64(l.Unit); max > limit {
		max = limit
	}
	return max
}

// Validate reports what is wrong with l at the instant now, or nil. Every
// part needs at least one bit, the three together at most 63, the unit at
// least a microsecond, the epoch no later than now, and the end at least
// [MinLife] after now.
func (l Layout) Validate(now time.Time) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: snowflake layout: %s", sequence.ErrInvalidArgument, fmt.Sprintf(format, args...))
	}
	switch {
	case l.TimeBits < 1 || l.WorkerBits < 1 || l.SeqBits < 1:
		return bad("every part needs at least one bit; got time %d, worker %d, sequence %d", l.TimeBits, l.WorkerBits, l.SeqBits)
	case l.TimeBits+l.WorkerBits+l.SeqBits > 63:
		return bad("time %d + worker %d + sequence %d = %d bits; an id has 63 (the sign bit stays 0)", l.TimeBits, l.WorkerBits, l.SeqBits, l.TimeBits+l.WorkerBits+l.SeqBits)
	case l.Unit < time.Microsecond:
		return bad("unit %v; want at least 1µs", l.Unit)
	case l.Epoch.IsZero():
		return bad("no epoch; set one shortly before the first id, such as the day the system goes live")
	case l.Epoch.After(now):
		return bad("epoch %v is after now (%v)", l.Epoch.UTC(), now.UTC())
	}
	if end := l.End(); end.Before(now.Add(MinLife)) {
		return bad("%d bits of %v since %s end on %s, less than %v from now: give time more bits, a longer unit or a later epoch", l.TimeBits, l.Unit, l.Epoch.UTC().Format(time.DateOnly), end.UTC().Format(time.DateOnly), "10 years")
	}
	return nil
}

// ID is an id read back by [Layout.Decompose].
type ID struct {
	Time   time.Time // the start of the unit the id was issued in
	Worker int64
	Seq    int64
}

// compose returns the id of tick (units since the epoch), worker and seq.
// It does not check their ranges.
func (l Layout) compose(tick, worker, seq int64) int64 {
	if l.SeqBeforeWorker {
		return tick<<(l.SeqBits+l.WorkerBits) | seq<<l.WorkerBits | worker
	}
	return tick<<(l.WorkerBits+l.SeqBits) | worker<<l.SeqBits | seq
}

// Decompose reads an id back into its time, worker and sequence. It
// returns an error wrapping [sequence.ErrInvalidArgument] for a negative
// id or one whose time is past the layout's end.
func (l Layout) Decompose(id int64) (ID, error) {
	if id < 0 {
		return ID{}, fmt.Errorf("%w: snowflake id %d is negative", sequence.ErrInvalidArgument, id)
	}
	tick := id >> (l.WorkerBits + l.SeqBits)
	if tick > l.maxTick() {
		return ID{}, fmt.Errorf("%w: snowflake id %d is past the layout's end", sequence.ErrInvalidArgument, id)
	}
	low := id & (1<<(l.WorkerBits+l.SeqBits) - 1)
	var worker, seq int64
	if l.SeqBeforeWorker {
		worker, seq = low&(1<<l.WorkerBits-1), low>>l.WorkerBits
	} else {
		worker, seq = low>>l.SeqBits, low&(1<<l.SeqBits-1)
	}
	return ID{Time: l.Epoch.Add(time.Duration(tick) * l.Unit), Worker: worker, Seq: seq}, nil
}

// tick returns the units from the epoch to t, and -1 before the epoch.
func (l Layout) tick(t time.Time) int64 {
	d := t.Sub(l.Epoch)
	if d < 0 {
		return -1
	}
	return int64(d / l.Unit)
}

// start returns when tick begins.
func (l Layout) start(tick int64) time.Time {
	return l.Epoch.Add(time.Duration(tick) * l.Unit)
}
