package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// The counter key of a sequence part is made of, joined by "|":
//
//   - the base: the value of ownerKey when the template prints it (set in the
//     template or given per call), otherwise the template's meaning (see
//     meaning);
//   - with key=VAR, "VAR=" and the variable's value;
//   - with reset=, the period: "2017-03-04", "2017-03" or "2017", as the
//     date part that tells periods apart prints it.
//
// Each component has "\" and "|" escaped, so no two different inputs give
// one key. The key is built here and nowhere else: at Next from the call's
// inputs, at Parse from the text read back, at Floor and in Explain.

// keys works out the key base and the parts a key depends on, and binds the
// sequences whose key never varies.
func (c *compiler) keys() error {
	pl := c.pl
	if pl.base == "" && pl.owner < 0 {
		pl.base = meaning(pl.parts)
	}
	if pl.owner >= 0 {
		pl.parts[pl.owner].marked = true
	}
	for _, i := range pl.seqs {
		s := &pl.parts[i]
		s.marked = true
		perCall := pl.owner >= 0 || s.Reset != expression.Never
		if s.KeyVar != "" {
			for j := range pl.parts {
				if q := &pl.parts[j]; q.Kind == Var && q.Name == s.KeyVar {
					q.marked, perCall = true, true
				}
			}
		}
		if s.keyDate >= 0 {
			pl.parts[s.keyDate].marked = true
		}
		if r, ok := s.gen.(sequence.Releaser); ok && s.Reset != expression.Never && pl.owner < 0 && s.KeyVar == "" {
			s.releaser, s.period = r, new(atomic.Int32)
		}
		if perCall {
			continue
		}
		val := ""
		if s.KeyVar != "" {
			val = pl.parts[s.keyPart].Lit // a setter's value
		}
		s.fixedKey = pl.key(s, "", val, 0)
		if b, ok := s.gen.(sequence.Binder); ok {
			if err := safe(func() { s.handle = b.Bind(s.fixedKey) }); err != nil {
				return c.causeAt(s.Offset, s.Name, fmt.Errorf("binding the counter key: %w", err))
			}
		}
	}
	return nil
}

// meaning is the key base of a template without ownerKey: what the template
// means, not how it is spelt. It is the canonical template with what does
// not change which series a number belongs to left out: a sequence's width
// and overflow, a variable's maxlen and chars, a date's format and time
// zone (the period of a reset is in the key on its own), checksums and
// random filler. Arguments are in a fixed order and values canonically
// quoted, so argument order, spelled-out defaults, number spellings and
// whitespace never change it.
func meaning(parts []Part) string {
	var b strings.Builder
	for i := range parts {
		p := &parts[i]
		switch p.Kind {
		case Text:
			b.WriteString(p.Source)
		case Setter:
			b.WriteString((&parser.Dynamic{Name: p.Name, Args: []parser.Arg{{Key: "value", Value: p.Lit}}}).String())
		case Var, Date:
			b.WriteString("@<" + p.Name + ">")
		case Seq:
			d := &parser.Dynamic{Name: p.Name}
			if p.KeyVar != "" {
				d.Args = append(d.Args, parser.Arg{Key: "key", Value: p.KeyVar})
			}
			if p.Reset != expression.Never {
				d.Args = append(d.Args, parser.Arg{Key: "reset", Value: p.Reset.String()})
			}
			b.WriteString(d.String())
		case Custom:
			d, _ := parser.Parse(p.Source)
			dyn := d.Nodes[0].(*parser.Dynamic)
			slices.SortFunc(dyn.Args, func(x, y parser.Arg) int { return strings.Compare(x.Key, y.Key) })
			for j := range dyn.Args {
				dyn.Args[j].Bare = false
			}
			b.WriteString(dyn.String())
		}
	}
	return b.String()
}

// key returns the counter key of sequence part s for the given ownerKey
// (when given per call), key= value and period bucket.
func (pl *Plan) key(s *Part, owner, val string, bucket int32) string {
	base := pl.base
	if pl.owner >= 0 {
		base = owner
	}
	k := escapeKey(base)
	if s.KeyVar != "" {
		k += "|" + escapeKey(s.KeyVar) + "=" + escapeKey(val)
	}
	if s.Reset != expression.Never {
		k += "|" + bucketString(bucket, s.Reset)
	}
	return k
}

// seqKey is key with the part's one-entry cache in front.
func (pl *Plan) seqKey(s *Part, owner, val string, bucket int32) string {
	if s.fixedKey != "" {
		return s.fixedKey
	}
	if kc := s.cache.Load(); kc != nil && kc.bucket == bucket && kc.owner == owner && kc.val == val {
		return kc.key
	}
	k := pl.key(s, owner, val, bucket)
	s.cache.Store(&keyCache{owner: owner, val: val, bucket: bucket, key: k})
	return k
}

// bucket returns the period of t for a sequence that resets every p, read
// in the time zone of the date part that prints it: yyyymmdd with the
// finer fields zero.
func bucket(t time.Time, loc *time.Location, p expression.Period) int32 {
	y, m, d := t.In(loc).Date()
	switch p {
	case expression.Year:
		return int32(y) * 10000
	case expression.Month:
		return int32(y)*10000 + int32(m)*100
	case expression.Day:
		return int32(y)*10000 + int32(m)*100 + int32(d)
	}
	return 0
}

func bucketString(b int32, p expression.Period) string {
	y, m, d := b/10000, b/100%100, b%100
	switch p {
	case expression.Year:
		return fmt.Sprintf("%04d", y)
	case expression.Month:
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

// KeyPattern describes the counter key of sequence part i for people, with
// placeholders for what varies per call: "SN|unit=<unit>|<yyyy-MM-dd>".
func (pl *Plan) KeyPattern(i int) string {
	s := &pl.parts[i]
	k := escapeKey(pl.base)
	if pl.owner >= 0 {
		k = "<" + OwnerKey + ">"
	}
	if s.KeyVar != "" {
		v := "<" + s.KeyVar + ">"
		if q := &pl.parts[s.keyPart]; q.Kind == Setter {
			v = escapeKey(q.Lit)
		}
		k += "|" + escapeKey(s.KeyVar) + "=" + v
	}
	switch s.Reset {
	case expression.Day:
		k += "|<yyyy-MM-dd>"
	case expression.Month:
		k += "|<yyyy-MM>"
	case expression.Year:
		k += "|<yyyy>"
	}
	return k
}
