package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// The counter key of a sequence part is made of, joined by "|":
//
//   - the base: the value of ownerKey when the template prints it (set in the
//     template or given per call), otherwise the template's meaning (see
//     meaning);
//   - with key=VAR, "VAR=" and the variable's value;
//   - with reset=, the period (see bucketString): "2017-03-04", "2017-03",
//     "2017", "2017-W09", "FY2017-04", as the date part that tells periods
//     apart reads it.
//
// Each component has "\" and "|" escaped, so no two different inputs give
// one key. The key is built here and nowhere else: at Next from the call's
// inputs, at Parse from the text read back, at Floor and in Explain.

// keys works out the key base and the parts a key depends on, and binds the
// sequences whose key never varies.
func (c *compiler) keys() error {
	pl := c.pl
	pl.series = meaning(pl.parts)
	if pl.base == "" && pl.owner < 0 {
		pl.base = pl.series
	}
	if pl.owner >= 0 {
		pl.parts[pl.owner].marked = true
	}
	for _, i := range pl.seqs {
		s := &pl.parts[i]
		s.marked = true
		perCall := pl.owner >= 0 || s.Reset != builtin.Never
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
		if r, ok := s.gen.(sequence.Releaser); ok && s.Reset != builtin.Never && pl.owner < 0 && s.KeyVar == "" {
			s.releaser, s.period = r, new(atomic.Int64)
		}
		s.guard = newGuard(s, s.gen, pl.series, c.cfg.Retention)
		pl.limit(s)
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

// limit tells a sequence that reserves ahead (sequence.Limiter) the
// largest number part s prints, for the keys of its base: its blocks then
// never burn much of a narrow width. A per-call ownerKey has no base known
// in advance, and a part that grows past its width no limit.
func (pl *Plan) limit(s *Part) {
	l, ok := s.gen.(sequence.Limiter)
	if !ok || s.maxSeq <= 0 || s.Grow {
		return
	}
	base := pl.base
	if pl.owner >= 0 {
		o := &pl.parts[pl.owner]
		if o.Kind != Setter {
			return
		}
		base = o.Lit
	}
	_ = safe(func() { l.Limit(escapeKey(base), s.maxSeq) })
}

// meaning is the key base of a template without ownerKey: what the template
// means, not how it is spelt. It is the canonical template with what does
// not change which series a number belongs to left out: a sequence's width
// and overflow (but not its radix=, alphabet= or obfuscate=, whose numbers
// print otherwise), a variable's maxlen and chars, a date's format and time
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
			if p.Digits != "" { // radix=36 and alphabet=0-9A-Z are one series
				d.Args = append(d.Args, parser.Arg{Key: "alphabet", Value: p.Digits})
			}
			if p.Obfuscate != "" {
				d.Args = append(d.Args, parser.Arg{Key: "obfuscate", Value: p.Obfuscate})
			}
			if p.Reset != builtin.Never {
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
func (pl *Plan) key(s *Part, owner, val string, bucket int64) string {
	base := pl.base
	if pl.owner >= 0 {
		base = owner
	}
	k := escapeKey(base)
	if s.KeyVar != "" {
		k += "|" + escapeKey(s.KeyVar) + "=" + escapeKey(val)
	}
	if s.Reset != builtin.Never {
		k += "|" + bucketString(bucket, s.Reset)
	}
	return k
}

// seqKey is key with the part's one-entry cache in front.
func (pl *Plan) seqKey(s *Part, owner, val string, bucket int64) string {
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
// as date part d prints it (in its time zone, with its fiscal year): the
// period's first instant as the number yyyyMMddHHmmss, in d's wall clock.
// Periods of one kind are ordered as their numbers are. A period is
// its wall-clock time, as printed: an hour a zone repeats in the autumn
// is one period, so it shares its counter.
func bucket(t time.Time, d *builtin.Date, p builtin.Period) int64 {
	t = t.In(d.Loc)
	y, m, dd := t.Date()
	var h, mi, s int
	switch p {
	case builtin.Year:
		m, dd = 1, 1
	case builtin.FiscalYear:
		y, m, dd = d.FiscalStart(t).Date()
	case builtin.Quarter:
		m, dd = (m-1)/3*3+1, 1
	case builtin.Month:
		dd = 1
	case builtin.Week:
		wd := (int(t.Weekday()) + 6) % 7 // days since Monday
		y, m, dd = time.Date(y, m, dd-wd, 0, 0, 0, 0, time.UTC).Date()
	case builtin.Day:
	case builtin.Hour:
		h = t.Hour()
	case builtin.Minute:
		h, mi = t.Hour(), t.Minute()
	case builtin.Second:
		h, mi, s = t.Clock()
	default:
		return 0
	}
	return ((((int64(y)*100+int64(m))*100+int64(dd))*100+int64(h))*100+int64(mi))*100 + int64(s)
}

// bucketString is the key component of period b: "2017", "FY2017-04"
// (the fiscal year starting in April 2017), "2017-Q1", "2017-03",
// "2017-W09", "2017-03-04", "2017-03-04T15", "2017-03-04T15:04",
// "2017-03-04T15:04:05".
func bucketString(b int64, p builtin.Period) string {
	s, mi, h := b%100, b/100%100, b/10000%100
	d, m, y := b/1000000%100, b/100000000%100, b/10000000000
	switch p {
	case builtin.Year:
		return fmt.Sprintf("%04d", y)
	case builtin.FiscalYear:
		return fmt.Sprintf("FY%04d-%02d", y, m)
	case builtin.Quarter:
		return fmt.Sprintf("%04d-Q%d", y, (m-1)/3+1)
	case builtin.Month:
		return fmt.Sprintf("%04d-%02d", y, m)
	case builtin.Week:
		wy, w := time.Date(int(y), time.Month(m), int(d), 12, 0, 0, 0, time.UTC).ISOWeek()
		return fmt.Sprintf("%04d-W%02d", wy, w)
	case builtin.Hour:
		return fmt.Sprintf("%04d-%02d-%02dT%02d", y, m, d, h)
	case builtin.Minute:
		return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d", y, m, d, h, mi)
	case builtin.Second:
		return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", y, m, d, h, mi, s)
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
	if s.Reset != builtin.Never {
		k += "|" + periodPattern[s.Reset]
		if s.Reset == builtin.FiscalYear {
			k += fmt.Sprintf("%02d", int(pl.parts[s.keyDate].date.Fiscal))
		}
	}
	return k
}

// periodPattern is the key component of each reset period, for people.
var periodPattern = map[builtin.Period]string{
	builtin.Year:       "<yyyy>",
	builtin.FiscalYear: "FY<yyyy>-", // and the month it starts in
	builtin.Quarter:    "<yyyy>-Q<q>",
	builtin.Month:      "<yyyy-MM>",
	builtin.Week:       "<YYYY>-W<ww>",
	builtin.Day:        "<yyyy-MM-dd>",
	builtin.Hour:       "<yyyy-MM-ddTHH>",
	builtin.Minute:     "<yyyy-MM-ddTHH:mm>",
	builtin.Second:     "<yyyy-MM-ddTHH:mm:ss>",
}

// CallKey returns the counter key sequence part s draws from in a call
// at at with vars, without drawing.
func (pl *Plan) CallKey(s *Part, at time.Time, vars map[string]string) string {
	if s.fixedKey != "" {
		return s.fixedKey
	}
	owner, val := pl.keyVars(s, vars)
	var b int64
	if s.Reset != builtin.Never {
		if at.IsZero() {
			at = pl.clock()
		}
		b = bucket(at, pl.parts[s.keyDate].date, s.Reset)
	}
	return pl.key(s, owner, val, b)
}

// CheckKey reports whether key is a counter key sequence part s draws
// from for some call: its base, key= variable and period as s's keys
// have them, a variable's value within the variable's limits. It returns
// nil or an error saying which component is wrong. A server that hands
// out blocks of a template's counters checks each key a client asks for
// with it, so that a client of one template takes nothing of another's
// counters.
func (pl *Plan) CheckKey(s *Part, key string) error {
	comps, ok := splitKey(key)
	if !ok {
		return fmt.Errorf("counter key %s: a \\ escapes nothing", Quote(key))
	}
	want := 1
	if s.KeyVar != "" {
		want++
	}
	if s.Reset != builtin.Never {
		want++
	}
	if len(comps) != want {
		return fmt.Errorf("counter key %s: %d components; the template's keys have %d (%s)", Quote(key), len(comps), want, pl.KeyPattern(pl.partIndex(s)))
	}
	switch {
	case pl.owner < 0:
		if comps[0] != pl.base {
			return fmt.Errorf("counter key %s: not a key of this template, whose keys start %s", Quote(key), Quote(escapeKey(pl.base)))
		}
	case pl.parts[pl.owner].Kind == Setter:
		if comps[0] != pl.parts[pl.owner].Lit {
			return fmt.Errorf("counter key %s: not a key of this template, whose %s is %s", Quote(key), OwnerKey, Quote(pl.parts[pl.owner].Lit))
		}
	default:
		if err := pl.parts[pl.owner].checkVar(comps[0], true); err != nil {
			return fmt.Errorf("counter key %s: %w", Quote(key), err)
		}
	}
	i := 1
	if s.KeyVar != "" {
		name, val, _ := strings.Cut(comps[i], "=")
		q := &pl.parts[s.keyPart]
		switch {
		case name != s.KeyVar:
			return fmt.Errorf("counter key %s: want key=%s next, found %s", Quote(key), s.KeyVar, Quote(comps[i]))
		case q.Kind == Setter && val != q.Lit:
			return fmt.Errorf("counter key %s: %s is %s in this template", Quote(key), s.KeyVar, Quote(q.Lit))
		case q.Kind != Setter:
			if err := q.checkVar(val, true); err != nil {
				return fmt.Errorf("counter key %s: %w", Quote(key), err)
			}
		}
		i++
	}
	if s.Reset != builtin.Never {
		if !pl.period(s, comps[i]) {
			return fmt.Errorf("counter key %s: %s is not a period of reset=%s (want %s)", Quote(key), Quote(comps[i]), s.Reset, periodPattern[s.Reset])
		}
	}
	return nil
}

// partIndex returns the index of part s in pl.parts.
func (pl *Plan) partIndex(s *Part) int {
	for i := range pl.parts {
		if &pl.parts[i] == s {
			return i
		}
	}
	return 0
}

// period reports whether c is the key component of a period of part s:
// read back as an instant, that instant's period is written c.
func (pl *Plan) period(s *Part, c string) bool {
	d := pl.parts[s.keyDate].date
	var t time.Time
	var err error
	var y, n int
	// A period of a day or longer is read at noon of its first day: a
	// midnight a clock change skips (America/Santiago) would read as the
	// day before.
	noon := func(layout string) (time.Time, error) {
		u, err := time.Parse(layout, c)
		return time.Date(u.Year(), u.Month(), u.Day(), 12, 0, 0, 0, d.Loc), err
	}
	switch s.Reset {
	case builtin.Year:
		t, err = noon("2006")
	case builtin.Month:
		t, err = noon("2006-01")
	case builtin.Day:
		t, err = noon("2006-01-02")
	case builtin.Hour:
		t, err = time.ParseInLocation("2006-01-02T15", c, d.Loc)
	case builtin.Minute:
		t, err = time.ParseInLocation("2006-01-02T15:04", c, d.Loc)
	case builtin.Second:
		t, err = time.ParseInLocation("2006-01-02T15:04:05", c, d.Loc)
	case builtin.Quarter:
		if _, err = fmt.Sscanf(c, "%04d-Q%d", &y, &n); err == nil {
			t = time.Date(y, time.Month((n-1)*3+1), 1, 12, 0, 0, 0, d.Loc)
		}
	case builtin.FiscalYear:
		if _, err = fmt.Sscanf(c, "FY%04d-%02d", &y, &n); err == nil {
			t = time.Date(y, time.Month(n), 1, 12, 0, 0, 0, d.Loc)
		}
	case builtin.Week:
		if _, err = fmt.Sscanf(c, "%04d-W%02d", &y, &n); err == nil {
			jan4 := time.Date(y, 1, 4, 12, 0, 0, 0, d.Loc)
			t = jan4.AddDate(0, 0, -((int(jan4.Weekday())+6)%7)+(n-1)*7)
		}
	default:
		return false
	}
	// A period the date part cannot print (outside a two-digit year's
	// window, say) is no period any call draws from.
	return err == nil && bucketString(bucket(t, d, s.Reset), s.Reset) == c && d.Fits(t) == nil
}

// splitKey splits a counter key into its components, unescaped, and
// reports whether every \ in it escapes a \ or a |.
func splitKey(key string) ([]string, bool) {
	var out []string
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '\\':
			if i+1 == len(key) || (key[i+1] != '\\' && key[i+1] != '|') {
				return nil, false
			}
			i++
			b.WriteByte(key[i])
		case '|':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(out, b.String()), true
}
