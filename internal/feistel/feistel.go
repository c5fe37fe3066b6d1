// Package feistel is a keyed permutation of the numbers 0 to n-1: a
// balanced Feistel network over the smallest even number of bits that
// holds n, with AES as its round function, and cycle walking to stay
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
)

// Rounds is the number of Feistel rounds.
const Rounds = 10

// MinKeyLen is the shortest key, in bytes.
const MinKeyLen = 16

// Perm is a permutation of [0, n). It is safe for concurrent use.
type Perm struct {
	n     uint64
	half  uint   // bits in each half
	mask  uint64 // half's mask
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
	b := uint(bits.Len64(n - 1))
	b += b & 1
	if b < 2 {
		b = 2
	}
	return &Perm{n: n, half: b / 2, mask: 1<<(b/2) - 1, block: block}, nil
}

// N returns the size of the domain.
func (p *Perm) N() uint64 { return p.n }

// round is the round function: AES of the round number and the half.
func (p *Perm) round(i int, x uint64) uint64 {
	var in, out [16]byte
	in[0] = byte(i)
	binary.BigEndian.PutUint64(in[8:], x)
	p.block.Encrypt(out[:], in[:])
	return binary.BigEndian.Uint64(out[:8]) & p.mask
}

// once is one pass of the network over the bits of x.
func (p *Perm) once(x uint64) uint64 {
	l, r := x>>p.half, x&p.mask
	for i := range Rounds {
		l, r = r, l^p.round(i, r)
	}
	return l<<p.half | r
}

// onceInverse undoes once.
func (p *Perm) onceInverse(x uint64) uint64 {
	l, r := x>>p.half, x&p.mask
	for i := Rounds - 1; i >= 0; i-- {
		l, r = r^p.round(i, l), l
	}
	return l<<p.half | r
}

// Apply returns the image of x, which must be below N. Values outside
// [0, 2^bits) that the network reaches are walked on until one is below N
// (cycle walking): at most four passes are expected, since N is more than
// a quarter of 2^bits.
func (p *Perm) Apply(x uint64) uint64 {
	for {
		x = p.once(x)
		if x < p.n {
			return x
		}
	}
}

// Invert returns the x whose image is y, which must be below N.
func (p *Perm) Invert(y uint64) uint64 {
	for {
		y = p.onceInverse(y)
		if y < p.n {
			return y
		}
	}
}
