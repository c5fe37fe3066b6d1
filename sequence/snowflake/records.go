package snowflake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
)

// RecordLeaser leases worker ids in a store's records (package record):
// the one [Leaser] of every store that keeps records, written once.
//
// Each id of a name is the record "wk/", the name's length, "/", the
// name, "/id/" and the id in ten digits, JSON: the holder's random token,
// its deadline and the bound, the last instant its holders may have
// issued at. The layout of the name's ids is the record beside them,
// "layout" in place of "id/" and the id. Deadlines are the
// store's clock ([record.Store.Now]: the database's, etcd's, the Redis
// server's) plus the ttl, never a client's, so that machines whose
// clocks disagree agree on who holds an id; bounds are the holders' own
// instants, so their clocks must still agree within TTL/2. An id is free
// when it has no record or its deadline has passed. Taking one, renewing
// and releasing are each one [record.Update] that the id's record did
// not change under: of two processes that try at once, one gets it.
//
// A renewal extends the deadline only while the token still holds the id
// and the deadline has not passed: a lease that expired is lost, even
// when no one took its id since. The bound is raised by each renewal and
// never lowered, except by Release, which sets it to the end of the
// holder's last id, and never below the bound the holder found. A new
// holder issues only after the bound, so the ids of two holders of one
// id never meet. The bound is as durable as the store's commits.
type RecordLeaser struct {
	s       record.Store
	name    string
	earlier *Earlier
}

// Earlier is where the leaser of an earlier release kept a name's ids, in
// records of the same store, for a RecordLeaser that leases beside it
// ([RecordLeaser.Beside]) while processes of that release still run.
type Earlier struct {
	// Layout is the record of the name's layout.
	Layout string
	// Holder is the record present while a process of that release holds
	// id: it takes an id only where the record is absent.
	Holder func(id int64) string
	// Bound is the record of id's bound, in decimal nanoseconds.
	Bound func(id int64) string
}

// Beside makes l lease beside e, and returns l: a Lease takes an id only
// while e's holder record of it is absent, and puts it, with a value no
// token has, in the commit that takes the id, so that a process of that
// release never takes it after; it issues above e's bound of the id too;
// and it records its layout in e's layout record as well, refusing
// another. Ids and processes of the two releases then never meet,
// whatever the order of their steps: the condition and the write are one
// commit of the store.
func (l *RecordLeaser) Beside(e Earlier) *RecordLeaser {
	l.earlier = &e
	return l
}

// upgraded is what an earlier holder record holds once a RecordLeaser
// took its id.
const upgraded = "leased by a later release of sn: upgrade every process"

// NewRecordLeaser returns a Leaser of the series name (1 to 255 bytes)
// over s.
func NewRecordLeaser(s record.Store, name string) (*RecordLeaser, error) {
	if s == nil || name == "" || len(name) > 255 {
		return nil, fmt.Errorf("snowflake: NewRecordLeaser of name %.40q (%d bytes): want a store and a name of 1 to 255 bytes: %w", name, len(name), sequence.ErrInvalidArgument)
	}
	return &RecordLeaser{s: s, name: name}, nil
}

// Name returns the name of the series of ids.
func (l *RecordLeaser) Name() string { return l.name }

func (l *RecordLeaser) base() string { return "wk/" + strconv.Itoa(len(l.name)) + "/" + l.name + "/" }

func (l *RecordLeaser) prefix() string { return l.base() + "id/" }

func (l *RecordLeaser) key(id int64) string { return fmt.Sprintf("%s%010d", l.prefix(), id) }

// held is an id's record.
type held struct {
	Token    string `json:"token"`
	Deadline int64  `json:"deadline_us"` // the store's clock
	Bound    int64  `json:"bound_ns,omitempty"`
}

// read returns id's record in tx; the zero held (free, no bound) for
// none.
func (l *RecordLeaser) read(tx *record.Tx, id int64) (held, error) {
	r, err := tx.Get1(l.key(id))
	if err != nil || !r.Exists() {
		return held{}, err
	}
	return l.decode(r)
}

// write puts h as id's record in tx.
func (l *RecordLeaser) write(tx *record.Tx, id int64, h held) error {
	v, err := json.Marshal(h)
	if err != nil {
		return err
	}
	tx.Put(l.key(id), v)
	return nil
}

func (l *RecordLeaser) decode(r record.Record) (held, error) {
	var h held
	if err := json.Unmarshal(r.Value, &h); err != nil {
		return held{}, fmt.Errorf("snowflake: the worker lease %q holds %.80q: %v: %w", r.Key, r.Value, err, record.ErrInvalid)
	}
	return h, nil
}

// Lease takes a free worker id below layout.Workers() for ttl: one a
// holder released (its bound is known, so a Gen issues with it at once)
// if there is one, else the first free one from a random id on. The first
// Lease of a name records its layout; a Lease with another layout returns
// an error wrapping [ErrLayout]. Lease returns an error wrapping
// [sequence.ErrUnavailable] when every id is held, and one wrapping
// [sequence.ErrInvalidArgument] for a ttl under 1ms.
func (l *RecordLeaser) Lease(ctx context.Context, layout Layout, ttl time.Duration) (Lease, error) {
	if layout.WorkerBits < 0 || layout.WorkerBits > 30 || ttl < time.Millisecond {
		return nil, fmt.Errorf("snowflake: Lease(%d worker bits, ttl %v) of %q: want 0 to 30 worker bits and a ttl of at least 1ms: %w",
			layout.WorkerBits, ttl, l.name, sequence.ErrInvalidArgument)
	}
	workers := layout.Workers()
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	out := &recordLease{l: l, token: hex.EncodeToString(tok[:]), ttl: ttl}
	start, _ := rand.Int(rand.Reader, big.NewInt(workers))
	full := false
	err := record.Update(ctx, l.s, func(tx *record.Tx) error {
		full = false
		lk := l.base() + "layout"
		lr, err := tx.Get1(lk)
		if err != nil {
			return err
		}
		switch {
		case !lr.Exists():
			tx.Put(lk, []byte(layout.String()))
		case string(lr.Value) != layout.String():
			return fmt.Errorf("snowflake: Lease: the worker ids of %q were leased with the layout %q; this Gen's is %q. Ids of two layouts can meet: give this one a name of its own: %w",
				l.name, lr.Value, layout.String(), ErrLayout)
		}
		if e := l.earlier; e != nil {
			er, err := tx.Get1(e.Layout)
			if err != nil {
				return err
			}
			switch v := string(er.Value); {
			case !er.Exists():
				tx.Put(e.Layout, []byte(layout.String()))
			case v != layout.String() && v != movedLayout:
				return fmt.Errorf("snowflake: Lease: the worker ids of %q were leased by an earlier release with the layout %q; this Gen's is %q. Ids of two layouts can meet: give this one a name of its own: %w",
					l.name, v, layout.String(), ErrLayout)
			}
		}
		now, err := tx.Now()
		if err != nil {
			return err
		}
		rs, err := tx.Scan(l.prefix(), record.PrefixEnd(l.prefix()), 0)
		if err != nil {
			return err
		}
		taken := map[int64]bool{}
		released := int64(-1)
		for _, r := range rs {
			id, err := strconv.ParseInt(strings.TrimPrefix(r.Key, l.prefix()), 10, 64)
			if err != nil || id >= workers {
				continue
			}
			h, err := l.decode(r)
			if err != nil {
				return err
			}
			switch {
			case h.Deadline > now.UnixMicro():
				taken[id] = true
			case h.Token == "" && h.Bound > 0 && released < 0:
				released = id
			}
		}
		// The candidates, a released id first; each read again as the
		// commit's condition, for the scan is not one: an id taken since
		// it is passed over.
		for k := int64(-1); k < workers; k++ {
			id := released
			if k >= 0 {
				id = (start.Int64() + k) % workers
			}
			if id < 0 || (k >= 0 && id == released) || taken[id] {
				continue
			}
			h, err := l.read(tx, id)
			if err != nil {
				return err
			}
			if h.Deadline > now.UnixMicro() {
				taken[id] = true
				continue
			}
			if held, err := l.besideEarlier(tx, id, &h); err != nil {
				return err
			} else if held {
				taken[id] = true
				continue
			}
			out.id, out.bound = id, h.Bound
			return out.put(tx, now, h.Bound)
		}
		full = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if full {
		return nil, fmt.Errorf("snowflake: Lease: all %d worker ids of %q are held: %w", workers, l.name, sequence.ErrUnavailable)
	}
	return out, nil
}

// besideEarlier reports whether a process of the earlier release holds
// id; if not, it raises h's bound to the earlier bound of id, and puts
// the earlier holder record so that no such process takes id after.
func (l *RecordLeaser) besideEarlier(tx *record.Tx, id int64, h *held) (bool, error) {
	e := l.earlier
	if e == nil {
		return false, nil
	}
	rs, err := tx.Get(e.Holder(id), e.Bound(id))
	if err != nil {
		return false, err
	}
	if rs[0].Exists() && string(rs[0].Value) != upgraded {
		return true, nil // held: the earlier store deletes it when it lapses
	}
	if rs[1].Exists() {
		b, err := strconv.ParseInt(string(rs[1].Value), 10, 64)
		if err != nil || b < 0 {
			return false, fmt.Errorf("snowflake: the earlier bound %q holds %.40q: %w", rs[1].Key, rs[1].Value, record.ErrInvalid)
		}
		h.Bound = max(h.Bound, b)
	}
	if !rs[0].Exists() {
		tx.Put(e.Holder(id), []byte(upgraded))
	}
	return false, nil
}

// Adopt records in tx a lease of id taken elsewhere (in the layout of an
// earlier release): the id is held until deadline, by the store's clock,
// and its bound is at least bound. A holder whose lease ends before
// deadline loses it: its renewals fail. A store moving its leases into
// the records adopts each before any process leases from them. Adopting
// a lease twice changes nothing.
func (l *RecordLeaser) Adopt(tx *record.Tx, id int64, deadline, bound time.Time) error {
	h, err := l.read(tx, id)
	if err != nil {
		return err
	}
	now, err := tx.Now()
	if err != nil {
		return err
	}
	if us := deadline.UnixMicro(); us > h.Deadline && us > now.UnixMicro() {
		h.Token, h.Deadline = "adopted", us // held: nobody takes it before
	}
	if !bound.IsZero() {
		h.Bound = max(h.Bound, bound.UnixNano())
	}
	return l.write(tx, id, h)
}

// movedLayout is what [MoveLayouts] leaves in a layout record of an
// earlier release.
const movedLayout = "moved to the records: upgrade every process of sn"

// MoveLayouts moves the layouts the leasers of earlier releases kept (the
// records "r/snowflake layout " and a name, see [sequence.Remember]) to
// the RecordLeaser's own, and leaves in their place a value that is no
// layout: a process of an earlier release, whose Lease reads it as the
// name's layout, refuses to lease (ErrLayout) and says to upgrade. A
// store moving its leases into the records calls it before adopting
// them; calling it again changes nothing.
func MoveLayouts(ctx context.Context, s record.Store) error {
	const p = "r/snowflake layout "
	return record.Update(ctx, s, func(tx *record.Tx) error {
		rs, err := tx.Scan(p, record.PrefixEnd(p), 0)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if string(r.Value) == movedLayout {
				continue
			}
			l := RecordLeaser{name: strings.TrimPrefix(r.Key, p)}
			lr, err := tx.Get1(l.base() + "layout")
			if err != nil {
				return err
			}
			if !lr.Exists() {
				tx.Put(l.base()+"layout", r.Value)
			}
			tx.Put(r.Key, []byte(movedLayout))
		}
		return nil
	})
}

// recordLease is one holding of a worker id.
type recordLease struct {
	l     *RecordLeaser
	id    int64
	token string
	ttl   time.Duration
	bound int64 // the bound the id had when taken, in nanoseconds; 0 for none
}

func (r *recordLease) Worker() int64 { return r.id }

func (r *recordLease) Bound() time.Time {
	if r.bound == 0 {
		return time.Time{}
	}
	return time.Unix(0, r.bound)
}

// put writes the lease as this holder's until now plus its ttl, with
// bound.
func (r *recordLease) put(tx *record.Tx, now time.Time, bound int64) error {
	return r.l.write(tx, r.id, held{Token: r.token, Deadline: now.Add(r.ttl).UnixMicro(), Bound: bound})
}

// Renew extends the lease by its ttl from the store's now and raises the
// recorded bound to bound, if the lease is still this holder's and its
// deadline has not passed; otherwise it returns an error wrapping
// [sequence.ErrLeaseLost].
func (r *recordLease) Renew(ctx context.Context, bound time.Time) error {
	return r.change(ctx, "Renew", func(tx *record.Tx, now time.Time, h held) error {
		if !bound.IsZero() {
			h.Bound = max(h.Bound, bound.UnixNano())
		}
		return r.put(tx, now, h.Bound)
	})
}

// Release records bound, which may be lower than the bounds renewals
// recorded but is never taken below the bound the id had when leased (a
// zero bound, from a holder that issued nothing, keeps that one), and
// frees the id, if the lease is still this holder's and its deadline has
// not passed; otherwise it returns an error wrapping
// [sequence.ErrLeaseLost].
func (r *recordLease) Release(ctx context.Context, bound time.Time) error {
	return r.change(ctx, "Release", func(tx *record.Tx, now time.Time, _ held) error {
		b := r.bound
		if !bound.IsZero() {
			b = max(b, bound.UnixNano())
		}
		return r.l.write(tx, r.id, held{Deadline: now.UnixMicro(), Bound: b})
	})
}

// change runs fn on the id's record if the lease still holds it.
func (r *recordLease) change(ctx context.Context, op string, fn func(tx *record.Tx, now time.Time, h held) error) error {
	return record.Update(ctx, r.l.s, func(tx *record.Tx) error {
		now, err := tx.Now()
		if err != nil {
			return err
		}
		h, err := r.l.read(tx, r.id)
		if err != nil {
			return err
		}
		if h.Token != r.token || h.Deadline <= now.UnixMicro() {
			return fmt.Errorf("snowflake: %s: worker %d of %q: the lease expired or is another holder's: %w", op, r.id, r.l.name, sequence.ErrLeaseLost)
		}
		return fn(tx, now, h)
	})
}

var _ Leaser = (*RecordLeaser)(nil)
