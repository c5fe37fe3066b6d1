// Package feistel is a keyed permutation of the numbers 0 to n-1: a
// Feistel network over the fewest bits that hold n, with AES as its round function, and cycle walking to stay
// below n. It is format-preserving in the sense sn needs (a number of w
// digits maps to a number of w digits), and it is obfuscation: it hides
// the order and the volume of consecutive numbers from someone who does
// not hold the key, and it is not a vetted cipher such as NIST's FF1.
package feistel

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// Rounds is the number of Feistel rounds.
const Rounds = 10

// MinKeyLen is the shortest key, in bytes.
const MinKeyLen = 16

// Perm is a permutation of [0, n). It is safe for concurrent use.
type Perm struct {
	n     uint64
	u, v  uint // the bits of the two halves: u high, v low; u is v or v+1
	block cipher.Block
}

// New returns the permutation of [0, n) under key, which is at least
// MinKeyLen bytes. n must be at least 2 and at most 2^62. The key is
// hashed with n, so one key gives unrelated permutations for different n.
func New(key []byte, n uint64) (*Perm, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("feistel: a key of %d bytes: want at least %d", len(key), MinKeyLen)
	}
	if n < 2 || n > 1<<62 {
		return nil, errors.New("feistel: the domain must have between 2 and 2^62 numbers")
	}
	var nb [8]byte
	binary.BigEndian.PutUint64(nb[:], n)
	h := sha256.New()
	h.Write([]byte("sn feistel v1\x00"))
	h.Write(nb[:])
	h.Write(key)
	k := h.Sum(nil)[:16]
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	b := max(uint(bits.Len64(n-1)), 2)
	return &Perm{n: n, u: b - b/2, v: b / 2, block: block}, nil
}

// N returns the size of the domain.
func (p *Perm) N() uint64 { return p.n }

// buffers are the round function's input and output blocks: the cipher
// is an interface, so blocks passed to it are on the heap.
var buffers = sync.Pool{New: func() any { return new([32]byte) }}

// round is the round function: AES of the round number and the half,
// cut to bits bits.
func (p *Perm) round(buf *[32]byte, i int, x uint64, bits uint) uint64 {
	clear(buf[:16])
	buf[0] = byte(i)
	binary.BigEndian.PutUint64(buf[8:16], x)
	p.block.Encrypt(buf[16:], buf[:16])
	return binary.BigEndian.Uint64(buf[16:24]) & (1<<bits - 1)
}

// once is one pass of the network over the bits of x: a Feistel network
// whose halves may differ by a bit, so that the domain is at most twice n
// and cycle walking takes fewer than two passes on average. Each round
// maps (a, b) to (b, a ^ F(b)), where a is as wide as the round's first
// half; Rounds is even, so the halves end as wide as they began.
func (p *Perm) once(buf *[32]byte, x uint64) uint64 {
	a, b := x>>p.v, x&(1<<p.v-1)
	wa := p.u
	for i := range Rounds {
		a, b = b, a^p.round(buf, i, b, wa)
		if wa == p.u {
			wa = p.v
		} else {
			wa = p.u
		}
	}
	return a<<p.v | b
}

// onceInverse undoes once.
func (p *Perm) onceInverse(buf *[32]byte, x uint64) uint64 {
	a, b := x>>p.v, x&(1<<p.v-1)
	// Round i's first half was u bits wide for even i, v for odd.
	for i := Rounds - 1; i >= 0; i-- {
		wa := p.u
		if i%2 == 1 {
			wa = p.v
		}
		a, b = b^p.round(buf, i, a, wa), a
	}
	return a<<p.v | b
}

// Apply returns the image of x, which must be below N. Images at or above
// N are passed through the network again until one is below (cycle
// walking): fewer than two passes on average, since N is more than half
// the network's domain.
func (p *Perm) Apply(x uint64) uint64 {
	buf := buffers.Get().(*[32]byte)
	defer buffers.Put(buf)
	for {
		x = p.once(buf, x)
		if x < p.n {
			return x
		}
	}
}

// Invert returns the x whose image is y, which must be below N.
func (p *Perm) Invert(y uint64) uint64 {
	buf := buffers.Get().(*[32]byte)
	defer buffers.Put(buf)
	for {
		y = p.onceInverse(buf, y)
		if y < p.n {
			return y
		}
	}
}
