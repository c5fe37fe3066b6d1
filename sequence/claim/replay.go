package claim

import (
	"context"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// Replayer is implemented by a [sequence.Gen] or [sequence.Allocator] whose store
// remembers the answers of idempotent calls, so that a caller that did
// not hear back (a timeout, a cut connection) can ask again and get the
// numbers it was given, not new ones. Every process sharing the store
// sees the same answers.
//
// sn calls Claim before it issues the numbers of a request with an
// idempotency key, and Settle after. A wrapper passes both on to its
// store; one whose store cannot returns an error wrapping
// errors.ErrUnsupported.
type Replayer interface {
	// Claim looks up id. With an answer recorded and not forgotten
	// (Settle's keep), it returns it. With a claim under way (a call
	// between its Claim and its Settle, within lease), it returns that
	// claim, not Mine. Otherwise it records a claim by token for a
	// request whose digest is digest, until lease has passed, and returns
	// it as Mine. Of two processes that claim one id at once, one gets
	// it.
	Claim(ctx context.Context, id, digest, token string, lease time.Duration) (Claim, error)
	// Settle records answer as id's, kept for keep, if token still holds
	// the claim; otherwise (the lease passed and another took it over) it
	// records nothing and returns an error wrapping [ErrLost]. A
	// Settle of the answer token recorded already succeeds.
	Settle(ctx context.Context, id, token, answer string, keep time.Duration) error
}

// Claim is what [Replayer.Claim] found or recorded for an idempotency
// key.
type Claim struct {
	Mine   bool      // the caller's claim: issue, then Settle
	Digest string    // the digest of the request the key was first used with
	Answer string    // the answer recorded, or "" while a call is under way
	Until  time.Time // when the claim lapses, or the answer is forgotten
}

// ErrLost means a call settled an idempotency key that another had
// taken over after the call's lease passed: its answer is not recorded.
var ErrLost = fmt.Errorf("claim: the idempotency key's claim lapsed and was taken over")

// MaxKey is the longest idempotency key a store takes, in
// bytes, and MaxAnswer the longest answer.
const (
	MaxKey    = 255
	MaxAnswer = 4 << 20
)

// checkClaim returns an error wrapping [sequence.ErrInvalidArgument] for an id or
// answer a store does not take.
func checkClaim(id, answer string) error {
	if id == "" || len(id) > MaxKey+1024 || len(answer) > MaxAnswer {
		return fmt.Errorf("claim: an idempotency key of %d bytes (1 to %d) and an answer of %d (at most %d): %w",
			len(id), MaxKey+1024, len(answer), MaxAnswer, sequence.ErrInvalidArgument)
	}
	return nil
}

// Memo is a recorded claim as a store keeps it; stores that keep claims
// in memory or as values use it, with [Memo.Claim] and [Memo.Settle] for
// the rules.
type Memo struct {
	Digest string `json:"digest"`
	Token  string `json:"token"`
	Answer string `json:"answer,omitempty"`
	Until  int64  `json:"until_us"`
	Done   bool   `json:"done,omitempty"`
}

// Claim applies [Replayer.Claim]'s rules to m, the memo recorded (nil
// for none) at now: it returns the claim, and the memo to record when it
// is the caller's.
func (m *Memo) Claim(now time.Time, digest, token string, lease time.Duration) (Claim, *Memo) {
	if m != nil && now.UnixMicro() < m.Until {
		return Claim{Mine: !m.Done && m.Token == token, Digest: m.Digest, Answer: m.Answer, Until: journal.FromMicros(m.Until)}, nil
	}
	next := &Memo{Digest: digest, Token: token, Until: now.Add(lease).UnixMicro()}
	return Claim{Mine: true, Digest: digest, Until: journal.FromMicros(next.Until)}, next
}

// Settle applies [Replayer.Settle]'s rules to m: the memo to record, or
// an error wrapping ErrLost.
func (m *Memo) Settle(now time.Time, token, answer string, keep time.Duration) (*Memo, error) {
	if m != nil && m.Done && m.Token == token && m.Answer == answer {
		return m, nil // settled already: a retry of a Settle whose answer was lost
	}
	if m == nil || m.Done || m.Token != token {
		return nil, ErrLost
	}
	return &Memo{Digest: m.Digest, Token: token, Answer: answer, Until: now.Add(keep).UnixMicro(), Done: true}, nil
}
