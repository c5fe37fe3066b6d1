package sequence

import (
	"hash/maphash"
	"math/bits"
	"sync"
	"sync/atomic"
)

// keyTable maps a Segment's keys to their state. It is read on every call
// of [Segment.Next] and written only when a key is added or released, so
// it is built for reads: a lookup is one hash, one atomic load of the slot
// array and a probe, with no lock and no write to shared memory. Writers
// hold mu.
//
// The slots are an open-addressing table with linear probing, at most
// three quarters full and rebuilt half full: each holds
// nil (never used), tomb (a released key's slot) or a key's state, and the
// key is the state's own string. That costs one pointer per slot, which
// keeps a Segment with a hundred thousand keys small; a sync.Map costs
// about 130 bytes per key.
//
// A writer stores slots with atomic stores, so a reader sees each slot
// either before or after a write; a reader that probes while a key is
// added may miss it and then looks again under mu. A table that grows is
// built anew and published whole.
type keyTable struct {
	slots atomic.Pointer[slotArray]
	seed  maphash.Seed

	mu   sync.Mutex
	live int // keys in the table
	used int // slots that are not nil: live keys and tombs
}

// slotArray is one generation of the table.
type slotArray struct {
	s []atomic.Pointer[SegmentKey]
}

// home returns the slot where the probe for a key with hash h starts.
func (a *slotArray) home(h uint64) int {
	hi, _ := bits.Mul64(h, uint64(len(a.s)))
	return int(hi)
}

// after returns the slot probed after i.
func (a *slotArray) after(i int) int {
	if i++; i == len(a.s) {
		return 0
	}
	return i
}

// tomb marks the slot of a released key, so that probes go on past it.
var tomb = new(SegmentKey)

// minSlots is the size of the first slot array.
const minSlots = 16

// init prepares an empty table.
func (t *keyTable) init() {
	t.seed = maphash.MakeSeed()
	t.slots.Store(newSlotArray(minSlots))
}

func newSlotArray(n int) *slotArray {
	return &slotArray{s: make([]atomic.Pointer[SegmentKey], n)}
}

// load returns the state of key, or nil. It takes no lock.
func (t *keyTable) load(key string) *SegmentKey {
	a, h := t.slots.Load(), maphash.String(t.seed, key)
	for i := a.home(h); ; i = a.after(i) {
		k := a.s[i].Load()
		if k == nil {
			return nil
		}
		// The stripe is the hash's low byte: most other keys differ
		// there, and their strings are not compared.
		if k.stripe == uint8(h) && k != tomb && k.key == key {
			return k
		}
	}
}

// loadOrAdd returns the state of key, adding the one that newKey returns
// if the table has none. newKey runs under t.mu.
func (t *keyTable) loadOrAdd(key string, newKey func() *SegmentKey) *SegmentKey {
	if k := t.load(key); k != nil {
		return k
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if k := t.load(key); k != nil {
		return k
	}
	k := newKey()
	if 4*(t.used+1) > 3*len(t.slots.Load().s) {
		t.rebuild(t.live + 1)
	}
	a := t.slots.Load()
	for i := a.home(maphash.String(t.seed, key)); ; i = a.after(i) {
		switch a.s[i].Load() {
		case nil:
			t.used++
			fallthrough
		case tomb:
			a.s[i].Store(k)
			t.live++
			return k
		}
	}
}

// remove takes k out of the table; t.mu is held.
func (t *keyTable) remove(k *SegmentKey) {
	a := t.slots.Load()
	for i := a.home(maphash.String(t.seed, k.key)); ; i = a.after(i) {
		switch a.s[i].Load() {
		case nil:
			return
		case k:
			a.s[i].Store(tomb)
			t.live--
			return
		}
	}
}

// shrink rebuilds the table when released keys left it mostly empty;
// t.mu is held.
func (t *keyTable) shrink() {
	if n := len(t.slots.Load().s); n > minSlots && 8*t.live < n {
		t.rebuild(t.live)
	}
}

// rebuild publishes a new slot array holding the live keys and no tombs,
// half full once it holds n keys; t.mu is held.
func (t *keyTable) rebuild(n int) {
	old, a := t.slots.Load(), newSlotArray(max(minSlots, 2*n))
	for i := range old.s {
		k := old.s[i].Load()
		if k == nil || k == tomb {
			continue
		}
		j := a.home(maphash.String(t.seed, k.key))
		for a.s[j].Load() != nil {
			j = a.after(j)
		}
		a.s[j].Store(k)
	}
	t.used = t.live
	t.slots.Store(a)
}

// each calls f on every key in the table, without a lock: a key added or
// removed meanwhile may or may not be seen.
func (t *keyTable) each(f func(*SegmentKey)) {
	a := t.slots.Load()
	for i := range a.s {
		if k := a.s[i].Load(); k != nil && k != tomb {
			f(k)
		}
	}
}

// len returns the number of keys in the table.
func (t *keyTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live
}
