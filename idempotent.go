package sn

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
)

// IdempotencyWindow is how long a store remembers the numbers a request
// with an IdempotencyKey was given: a retry within it gets them again.
// IdempotencyLease is how long a call holds its key before it has
// recorded its numbers: a call that died is taken over after it.
const (
	IdempotencyWindow = 24 * time.Hour
	IdempotencyLease  = 30 * time.Second
)

// idempotent is the first link of every Generator's chain, outside the
// middleware: a request with an IdempotencyKey is issued once per key
// (see [Request.IdempotencyKey]) and its numbers appended to b; others go
// on to next as they are.
func (g *Generator) idempotent(next IssueFunc) IssueFunc {
	return func(ctx context.Context, b *Batch, r Request) error {
		if r.IdempotencyKey == "" {
			return next(ctx, b, r)
		}
		holds := engine.HoldsOf(ctx)
		nums, err := g.replay(ctx, r, func(ctx context.Context, r Request) ([]string, error) {
			var nb Batch
			err := next(ctx, &nb, r)
			nums := nb.Strings()
			if holds != nil && err == nil {
				// A hold's answer is its number and its deadline.
				nums = append(nums, holds.Deadline.UTC().Format(time.RFC3339Nano))
			}
			return nums, err
		})
		if holds != nil && len(nums) == 2 {
			d, derr := time.Parse(time.RFC3339Nano, nums[1])
			if derr != nil {
				return fmt.Errorf("sn: idempotency key %q: the hold recorded has no deadline: %v", r.IdempotencyKey, derr)
			}
			holds.Deadline, nums = d, nums[:1]
		}
		for _, s := range nums {
			b.buf = append(b.buf, s...)
			b.ends = append(b.ends, len(b.buf))
		}
		return err
	}
}

// replay issues r, whose IdempotencyKey is set, once per key, through
// issue: it claims the key in the store, issues, and records the
// numbers; or returns the numbers recorded.
func (g *Generator) replay(ctx context.Context, r Request, issue func(ctx context.Context, r Request) ([]string, error)) ([]string, error) {
	if len(r.IdempotencyKey) > claim.MaxKey {
		return nil, fmt.Errorf("sn: an idempotency key of %d bytes, at most %d: %w", len(r.IdempotencyKey), claim.MaxKey, sequence.ErrInvalidArgument)
	}
	if _, err := r.count(); err != nil {
		return nil, err
	}
	rp := g.replayer()
	key := r.IdempotencyKey
	// The key belongs to the series, not to the template's spelling: a
	// retry after an edit the catalog continues as the same series (a
	// widening) gets the first answer.
	id := g.plan.Series() + "\x00" + key
	// legacy is the key as releases before keyed it, by the template's
	// canonical text: a call answers under both, so that a retry that
	// crosses an upgrade, either way, finds its numbers.
	legacy := g.plan.String() + "\x00" + key
	// The digest says who asked, and through which entry, beside what:
	// the key used by another caller (another token), or for another
	// entry of one series, is another request, refused, not answered
	// with the first one's numbers. A claim an earlier release recorded
	// has the digest of what alone (legacy), and still answers.
	legacyDigest := requestDigest(r)
	if h := engine.HoldsOf(ctx); h != nil {
		// A hold is another request than a draw under the same key.
		id += "\x00hold"
		legacy = id
		legacyDigest = "hold " + h.TTL.String() + " " + legacyDigest
	}
	digest := scopedDigest(legacyDigest, g.name, ActorOf(ctx))
	var tb [16]byte
	_, _ = rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	c, err := rp.Claim(ctx, id, digest, token, IdempotencyLease)
	if errors.Is(err, errors.ErrUnsupported) {
		rp = &g.memos
		c, err = rp.Claim(ctx, id, digest, token, IdempotencyLease)
	}
	if err != nil {
		return nil, fmt.Errorf("sn: idempotency key %q: %w", r.IdempotencyKey, err)
	}
	if !c.Mine {
		return replayed(r.IdempotencyKey, c, digest, legacyDigest)
	}
	if legacy != id {
		old, err := rp.Claim(ctx, legacy, digest, token, IdempotencyLease)
		if err != nil {
			return nil, fmt.Errorf("sn: idempotency key %q: %w", r.IdempotencyKey, err)
		}
		if !old.Mine {
			nums, err := replayed(r.IdempotencyKey, old, digest, legacyDigest)
			if err == nil {
				// Answered before the upgrade: the same answer under
				// the series' key.
				_ = rp.Settle(ctx, id, token, old.Answer, IdempotencyWindow)
			}
			return nums, err
		}
	}
	r.IdempotencyKey = ""
	nums, err := issue(ctx, r)
	if err != nil {
		// What was issued is not recorded: the claim lapses, and a retry
		// issues anew. Those numbers are void.
		g.voidLost(ctx, nums, "issued to a call with an idempotency key that failed: "+err.Error())
		return nil, err
	}
	answer, _ := json.Marshal(nums)
	if legacy != id {
		// Best effort: the answer that counts is the series' own.
		_ = rp.Settle(ctx, legacy, token, string(answer), IdempotencyWindow)
	}
	if err := rp.Settle(ctx, id, token, string(answer), IdempotencyWindow); err != nil {
		// The Settle may have been recorded all the same (its answer was
		// lost): then a retry gets these numbers, and they stand.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		c, cerr := rp.Claim(cctx, id, digest, token, IdempotencyLease)
		cancel()
		if cerr == nil && c.Answer == string(answer) {
			return nums, nil
		}
		if cerr == nil {
			// Not recorded, and the store says so: the claim lapses (or
			// another call took it over), and these numbers reach no one.
			g.voidLost(ctx, nums, "issued to a call with an idempotency key whose numbers could not be recorded: "+err.Error())
			return nil, fmt.Errorf("sn: idempotency key %q: the numbers could not be recorded, and are void: %w", key, err)
		}
		// The store does not answer: whether a retry gets these numbers
		// is not known, so they are not voided.
		return nil, fmt.Errorf("sn: idempotency key %q: the numbers could not be recorded: %w", key, err)
	}
	return nums, nil
}

// replayed answers a call whose key another call claimed: with the
// numbers it recorded, or the error that says why not.
func replayed(key string, c claim.Claim, digest, legacy string) ([]string, error) {
	switch {
	case c.Digest != digest && c.Digest != legacy:
		return nil, fmt.Errorf("%w: key %q was first used at most %v ago for another count, instant or variables, by another caller, or through another entry of the series", ErrIdempotencyConflict, key, IdempotencyWindow)
	case c.Answer == "":
		return nil, fmt.Errorf("%w: key %q, until %s at the latest", ErrInProgress, key, c.Until.UTC().Format(time.RFC3339))
	}
	var nums []string
	if err := json.Unmarshal([]byte(c.Answer), &nums); err != nil {
		return nil, fmt.Errorf("sn: idempotency key %q: the answer recorded is not a list of numbers: %v", key, err)
	}
	return nums, nil
}

// voidLost voids nums, which no caller received, where the store keeps a
// journal: the best it can, with a context of its own, for ctx may be
// what failed.
func (g *Generator) voidLost(ctx context.Context, nums []string, reason string) {
	if len(nums) == 0 {
		return
	}
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	g.VoidNumbers(vctx, nums, reason) // a record per run of numbers
}

// scopedDigest is the digest of a request whose digest is what (see
// requestDigest), made through the Generator named name, by actor.
func scopedDigest(what, name, actor string) string {
	h := sha256.Sum256([]byte("sn request 2\x00" + what + "\x00" + strconv.Quote(name) + "\x00" + strconv.Quote(actor)))
	return hex.EncodeToString(h[:])
}

// requestDigest is what makes two requests one: the count, the instant
// and the variables.
func requestDigest(r Request) string {
	h := sha256.New()
	n, _ := r.count()
	h.Write([]byte(strconv.Itoa(n) + "\x00"))
	if !r.At.IsZero() {
		h.Write([]byte(strconv.FormatInt(r.At.UnixNano(), 10)))
	}
	h.Write([]byte{0})
	keys := make([]string, 0, len(r.Vars))
	for k := range r.Vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		h.Write([]byte(strconv.Quote(k) + "=" + strconv.Quote(r.Vars[k]) + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// replayer returns the store that remembers the idempotency keys of the
// Generator: that of its first sequence part, or, when it cannot, the
// Generator itself.
func (g *Generator) replayer() claim.Replayer {
	parts := g.plan.Parts()
	for i := range parts {
		if parts[i].Kind == engine.Seq {
			var rp claim.Replayer
			sequence.Walk(parts[i].Gen(), func(in sequence.Gen) {
				if rp == nil {
					// A Gen with a store of its own, or over one that
					// keeps records (a snowflake Gen without a Leaser
					// keeps none).
					rp = claim.Of(in)
				}
			})
			if rp != nil {
				return rp
			}
			break
		}
	}
	return &g.memos
}

// SharedIdempotency reports whether g keeps the idempotency keys of its
// calls ([Request.IdempotencyKey]) in its store, where every process
// sharing the store finds them (true), or in the Generator, for this
// process only (false): a template without a sequence part, or whose
// generator keeps no store (a snowflake Gen with a fixed worker, a
// generator of your own).
// sn serve refuses keyed requests for a template without it: a retry
// that reached another replica would be given new numbers.
func (g *Generator) SharedIdempotency() bool {
	_, local := g.replayer().(*localMemos)
	return !local
}

// localMemos keeps idempotency keys in the Generator, for a store that
// cannot: they hold in this process only.
type localMemos struct {
	mu sync.Mutex
	m  map[string]*claim.Memo
}

// Claim claims id in the Generator's memory (see claim.Replayer).
func (l *localMemos) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (claim.Claim, error) {
	if err := ctx.Err(); err != nil {
		return claim.Claim{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if len(l.m) > 1<<16 {
		for k, m := range l.m {
			if m.Until <= now.UnixMicro() {
				delete(l.m, k)
			}
		}
	}
	c, next := l.m[id].Claim(now, digest, token, lease)
	if next != nil {
		if l.m == nil {
			l.m = map[string]*claim.Memo{}
		}
		l.m[id] = next
	}
	return c, nil
}

// Settle records id's answer in the Generator's memory.
func (l *localMemos) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	next, err := l.m[id].Settle(time.Now(), token, answer, keep)
	if err != nil {
		return err
	}
	l.m[id] = next
	return nil
}
