package expression

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/sequence"
)

// ErrOverflow means a sequence number has more digits than its width under
// overflow=error (the default). The number is consumed: a gap, never a
// wrong-length number.
var ErrOverflow = errors.New("number does not fit its width")

// Period is a reset period of a sequence, and the finest calendar period a
// date part prints in full.
type Period int8

const (
	// Never means no reset.
	Never Period = iota
	// Year resets the counter on January 1.
	Year
	// Month resets the counter on the first of each month.
	Month
	// Day resets the counter at midnight.
	Day
)

// String returns "never", "year", "month" or "day".
func (p Period) String() string {
	switch p {
	case Year:
		return "year"
	case Month:
		return "month"
	case Day:
		return "day"
	}
	return "never"
}

// Seq is the part "@<NAME, width=N, overflow=error|grow, key=VAR,
// reset=day|month|year>" for a registered sequence generator NAME. It draws
// the next number for its counter key and prints it zero-padded to width.
//
// The counter key is [Context.Key], then, when key=VAR is given, the
// variable's name and value, then, with reset=, the period ("2017-03-04",
// "2017-03" or "2017") in the location set by [Seq.Bind]. Parts are joined
// with "|" after escaping "\" and "|" in each, so no two different inputs
// give the same key.
type Seq struct {
	Name   string
	Width  int    // 0: no padding
	Grow   bool   // overflow=grow: numbers wider than Width print in full
	KeyVar string // key=VAR
	Reset  Period // reset=

	gen     sequence.Gen
	batcher sequence.Batcher
	handle  sequence.Handle
	loc     *time.Location
	base    string // fixed key base, when known at compile time
	fixed   bool
	// fixedKey is the whole key when it never changes; handle serves it.
	fixedKey string
	cache    atomic.Pointer[keyCache]
}

type keyCache struct {
	base, val string
	bucket    int32
	key       string
}

// NewSeq returns the sequence part named name drawing from g. It takes the
// arguments width, overflow, key and reset.
func NewSeq(name string, g sequence.Gen, args Args) (*Seq, error) {
	if g == nil {
		return nil, fmt.Errorf("sequence %q is nil", name)
	}
	if err := args.Check("width", "overflow", "key", "reset"); err != nil {
		return nil, err
	}
	s := &Seq{Name: name, gen: g, loc: time.UTC}
	var err error
	if s.Width, err = args.Int("width", 0, 1, 19); err != nil {
		return nil, err
	}
	ov, err := args.OneOf("overflow", "error", "error", "grow")
	if err != nil {
		return nil, err
	}
	s.Grow = ov == "grow"
	if _, ok := args["overflow"]; ok && s.Width == 0 {
		return nil, Errorf("overflow", "overflow= needs width=")
	}
	if kv, ok := args["key"]; ok {
		if kv == "" || kv == "true" { // "true" is what a bare "key" gives
			return nil, Errorf("key", "key= needs the name of a variable, as in key=unit")
		}
		s.KeyVar = kv
	}
	r, err := args.OneOf("reset", "never", "never", "day", "month", "year")
	if err != nil {
		return nil, err
	}
	s.Reset = map[string]Period{"never": Never, "day": Day, "month": Month, "year": Year}[r]
	s.batcher, _ = g.(sequence.Batcher)
	return s, nil
}

// Bind fixes what the compiler knows before the first call: the location of
// the reset period (that of the date part that prints it) and, when fixed is
// true, the key base (the ownerKey the template sets, or the template text).
// With a fixed base, no key= and no reset=, the key never changes, and a
// generator that implements sequence.Binder is bound to it once. Bind must be
// called before the Seq is used, and not after.
func (s *Seq) Bind(loc *time.Location, base string, fixed bool) {
	if loc != nil {
		s.loc = loc
	}
	s.base, s.fixed = base, fixed
	if fixed && s.KeyVar == "" && s.Reset == Never {
		s.fixedKey = escapeKey(base)
		if b, ok := s.gen.(sequence.Binder); ok {
			s.handle = b.Bind(s.fixedKey)
		}
	}
}

// FixedKey returns the counter key when it is the same for every call (no
// key=, no reset=, and an ownerKey fixed in the template).
func (s *Seq) FixedKey() (string, bool) { return s.fixedKey, s.fixedKey != "" }

// Gen returns the generator the part draws from.
func (s *Seq) Gen() sequence.Gen { return s.gen }

// KeyPattern describes the counter key for humans, for example
// "SN|unit=<unit>|<yyyy-MM-dd>".
func (s *Seq) KeyPattern(base string) string {
	k := escapeKey(base)
	if s.KeyVar != "" {
		k += "|" + escapeKey(s.KeyVar) + "=<" + s.KeyVar + ">"
	}
	switch s.Reset {
	case Day:
		k += "|<yyyy-MM-dd>"
	case Month:
		k += "|<yyyy-MM>"
	case Year:
		k += "|<yyyy>"
	}
	return k
}

// key returns the counter key for the call.
func (s *Seq) key(c *Context) (string, error) {
	if s.fixedKey != "" {
		return s.fixedKey, nil
	}
	base := s.base
	if !s.fixed {
		base = c.Key()
	}
	var val string
	if s.KeyVar != "" {
		v, ok := c.Var(s.KeyVar)
		if !ok || v == "" {
			return "", fmt.Errorf("%w: key=%s: %q was not given", ErrVarMissing, s.KeyVar, s.KeyVar)
		}
		val = v
	}
	var bucket int32
	if s.Reset != Never {
		y, m, d := c.Time().In(s.loc).Date()
		switch s.Reset {
		case Year:
			bucket = int32(y) * 10000
		case Month:
			bucket = int32(y)*10000 + int32(m)*100
		case Day:
			bucket = int32(y)*10000 + int32(m)*100 + int32(d)
		}
	}
	if kc := s.cache.Load(); kc != nil && kc.bucket == bucket && kc.base == base && kc.val == val {
		return kc.key, nil
	}
	k := escapeKey(base)
	if s.KeyVar != "" {
		k += "|" + escapeKey(s.KeyVar) + "=" + escapeKey(val)
	}
	if s.Reset != Never {
		k += "|" + bucketString(bucket, s.Reset)
	}
	s.cache.Store(&keyCache{base: base, val: val, bucket: bucket, key: k})
	return k, nil
}

func bucketString(b int32, p Period) string {
	y, m, d := b/10000, b/100%100, b%100
	switch p {
	case Year:
		return fmt.Sprintf("%04d", y)
	case Month:
		return fmt.Sprintf("%04d-%02d", y, m)
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

func escapeKey(s string) string {
	if !strings.ContainsAny(s, `\|`) {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `|`, `\|`).Replace(s)
}

// Append draws the next number and prints it.
func (s *Seq) Append(dst []byte, c *Context) ([]byte, error) {
	var n int64
	if s.handle != nil && c.mode == modeRender && c.batch.want == 0 {
		var err error
		if n, err = s.handle.Next(c.ctx); err != nil {
			return dst, err
		}
	} else if c.mode == modePreview {
		n = c.sample
	} else {
		key, err := s.key(c)
		if err != nil {
			return dst, err
		}
		if n, err = c.draw(s, key); err != nil {
			return dst, err
		}
		if n < 0 {
			return dst, fmt.Errorf("sequence %q returned negative number %d", s.Name, n)
		}
	}
	start := len(dst)
	dst = appendInt(dst, n, s.Width)
	if s.Width > 0 && !s.Grow && len(dst)-start > s.Width {
		return dst[:start], fmt.Errorf("%w: %d has more than %d digits (use overflow=grow to allow it)", ErrOverflow, n, s.Width)
	}
	if c.prog != nil {
		c.setSeqAt(n, start, len(dst))
	} else {
		c.SetSeq(n, dst[start:])
	}
	return dst, nil
}

// Order returns Normal.
func (*Seq) Order() Order { return Normal }

// MaxLen returns the width, or 19 (the digits of the largest int64) when
// numbers may be wider.
func (s *Seq) MaxLen() int {
	if s.Width > 0 && !s.Grow {
		return s.Width
	}
	return 19
}

// Pattern matches the printed number.
func (s *Seq) Pattern() string {
	w := strconv.Itoa(s.Width)
	switch {
	case s.Width == 0:
		return `[0-9]{1,19}`
	case s.Grow:
		return `[0-9]{` + w + `}|[1-9][0-9]{` + w + `,18}`
	}
	return `[0-9]{` + w + `}`
}

var seqDigits = regexp.MustCompile(`^[0-9]+$`)

// Check checks the digits read back.
func (s *Seq) Check(part string, c *Context) error {
	if !seqDigits.MatchString(part) {
		return fmt.Errorf("%q is not a number", part)
	}
	if _, err := strconv.ParseInt(part, 10, 64); err != nil {
		return fmt.Errorf("%q is out of range", part)
	}
	return nil
}

func (s *Seq) readBack(part string, c *Context) {
	n, err := strconv.ParseInt(part, 10, 64)
	if err == nil {
		c.SetSeq(n, []byte(part))
	}
}
