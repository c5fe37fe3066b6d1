package sequence

import "time"

// idleSweeps is how many checks in a row must find a key unused before it
// is released; the checks run every SegmentOptions.Idle/idleSweeps.
const idleSweeps = 4

// startSweeper starts the goroutine that releases idle keys, once.
func (s *Segment) startSweeper() {
	if s.opts.Idle < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sweeping || s.closed.Load() {
		return
	}
	s.sweeping = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(max(s.opts.Idle/idleSweeps, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.sweep()
			case <-s.ctx.Done():
				return
			}
		}
	}()
}

// sweep checks every key once and releases those found unused in
// idleSweeps checks in a row.
//
// A key is unused when its position (the next number of its current
// block) has not moved and no fetch is in flight. Releasing it takes it
// out of the table and swaps its block for spent, under the table's lock
// and its own, so a caller that still holds it either took a number of
// the old block before (reserved for this key, so unique) or finds it
// released and looks the key up again. The new state fetches a block from
// the Allocator, which starts above every number handed out, the old
// block's included.
func (s *Segment) sweep() {
	var idle []*SegmentKey
	s.keys.each(func(k *SegmentKey) {
		k.lock()
		defer k.unlock()
		if pos := k.position(); pos != k.mark || k.pinned || k.inflight() != nil {
			k.mark = pos
			k.setIdle(0)
		} else if k.setIdle(k.idle() + 1); k.idle() >= idleSweeps {
			idle = append(idle, k)
		}
	})
	if len(idle) == 0 {
		return
	}
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	for _, k := range idle {
		k.lock()
		if k.position() == k.mark {
			s.release(k)
		}
		k.unlock()
	}
	s.keys.shrink()
}

// Release drops the Segment's state for key, as [SegmentOptions.Idle]
// does for a key unused that long: the numbers left in its blocks are a
// gap, and its next call fetches a new block, above every number the
// Allocator handed out. sn releases the key of a reset= counter's past
// period when the period turns. A key bound to a Handle, or with a fetch
// in flight, is kept. Release implements [sequence.Releaser].
func (s *Segment) Release(key string) {
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	if k := s.keys.load(key); k != nil {
		k.lock()
		s.release(k)
		k.unlock()
	}
}

// release takes k out of the table unless it is bound, released,
// fetching or failed; the table's lock and k's are held. A key whose last
// fetch failed is kept: its error (a store that went backwards, above
// all) must hold until a fetch succeeds or Floor mends the key, and a new
// state would know nothing of the numbers issued.
func (s *Segment) release(k *SegmentKey) {
	if k.released || k.pinned || k.inflight() != nil || k.failed() != nil {
		return
	}
	k.released = true
	rs := []Range{seal(k.cur.Load())}
	if next := k.next(); next != nil {
		rs = append(rs, seal(next))
	}
	k.cur.Store(spent)
	k.last = nil
	s.note(k.key, released(rs, k.high, "unused when the key was released (idle, or its period over)")...)
	s.keepHigh(k.key, k.high)
	s.keys.remove(k)
	s.released.Add(1)
}

// position returns the next number of the key's current block; k's lock
// is held. It moves with every number taken and every block installed.
func (k *SegmentKey) position() int64 {
	b := k.cur.Load()
	return b.first + min(b.used.Load(), b.size)
}

// maxHighs bounds the last numbers of released keys a Segment keeps.
const maxHighs = 4096

// keepHigh keeps high, the last number of key when its state was
// released, for the Lost note of a state of key made afterwards. Past
// maxHighs keys the Segment forgets them all and starts again.
func (s *Segment) keepHigh(key string, high int64) {
	s.highs.Lock()
	defer s.highs.Unlock()
	if s.highs.m == nil || len(s.highs.m) >= maxHighs {
		s.highs.m = map[string]int64{}
	}
	s.highs.m[key] = max(s.highs.m[key], high)
}

// lostFrom returns the first number a block whose answer k lost can hold:
// above every number the Segment had for k's key, in k's state or in one
// released before it (whose blocks it received and closed). A Segment
// that forgot a released key's last number (more than maxHighs keys
// released since) may note as lost blocks it had received.
func (s *Segment) lostFrom(k *SegmentKey) int64 {
	s.highs.Lock()
	defer s.highs.Unlock()
	return max(k.high, s.highs.m[k.key]) + 1
}
