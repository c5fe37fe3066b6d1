package engine

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/feistel"
	"github.com/sngen/sn/internal/lang"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// Config is what [Compile] resolves the names of a template against.
type Config struct {
	// Seqs are the sequences by name.
	Seqs map[string]sequence.Gen
	// Exprs are the expression factories by name. A name is never in both.
	Exprs map[string]expression.Factory
	// Clock is read when a call gives no instant; nil means time.Now.
	Clock func() time.Time
	// Keys are the keys of obfuscate=NAME, by name.
	Keys map[string][]byte
	// Retention is how long the counter of a period of an hour or shorter
	// stays in the store after its period (see guard); 0 means
	// DefaultRetention.
	Retention time.Duration
	// Name names the template in the catalogs of its stores (its name in
	// a config file), or is "".
	Name string
	// Recorded says the template comes from a store's catalog, where it
	// was proven when it was recorded: Compile does not prove it again.
	Recorded bool
	// Unissued makes a sequence part that no Seqs entry gives (named seq,
	// or with an argument only a sequence takes) one whose sequence
	// refuses to issue, instead of an error: for a Generator that checks
	// numbers and never issues them (sn.CheckOnly).
	Unissued bool
}

// MaxVarLen is the largest maxlen= of a variable, in characters.
const MaxVarLen = 256

// Compile compiles template. Every name, argument and algorithm is resolved
// and every rule that keeps numbers from repeating is checked here; the
// errors are *TemplateError values (an ambiguous template's wraps an
// *Ambiguity).
func Compile(template string, cfg Config) (*Plan, error) {
	tpl, err := parser.Parse(template)
	if err != nil {
		var pe *parser.Error
		if errors.As(err, &pe) {
			return nil, &TemplateError{At: pe}
		}
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	// A variable without chars= first keeps out only the characters of the
	// literal text right after it, which ends it: "INV-@<company>-..."
	// takes INITECH. When the proof finds that ambiguous, it keeps out
	// every character of the template's literal text, as it always did.
	c := &compiler{cfg: cfg, tpl: tpl, pl: &Plan{src: template, canonical: tpl.String(), clock: cfg.Clock, owner: -1}, narrow: true}
	err = c.compile()
	var amb *Ambiguity
	if err != nil && c.narrowed && errors.As(err, &amb) {
		c = &compiler{cfg: cfg, tpl: tpl, pl: &Plan{src: template, canonical: tpl.String(), clock: cfg.Clock, owner: -1}}
		if err = c.compile(); err == nil && !cfg.Recorded {
			err = c.ordinary()
		}
	}
	if err != nil {
		return nil, err
	}
	return c.pl, nil
}

// ordinary refuses, at New, a variable without chars= whose characters
// keep out letters or digits for the literal text around it (the narrow
// rule was ambiguous): values of ordinary codes would otherwise be refused
// one by one, at the first number of each, in production. It names the
// characters and the chars= that keeps them out knowingly.
func (c *compiler) ordinary() error {
	letters := lang.NewSet(lang.Range{Lo: '0', Hi: '9'}, lang.Range{Lo: 'A', Hi: 'Z'}, lang.Range{Lo: 'a', Hi: 'z'})
	for i := range c.pl.parts {
		p := &c.pl.parts[i]
		if p.Kind != Var || p.charsArg != "" {
			continue
		}
		if out := letters.Minus(p.chars); len(out) > 0 {
			return c.errAt(c.nodes[i].NameOffset, "variable %s: the template is proven only if %s keeps out the characters %s of its literal text, so a value with one of them would be refused at its first number: give chars= the characters its values take, or chars=^%s to keep them out knowingly",
				p.Name, p.Name, out.String(), lang.Runes(p.seps).String())
		}
	}
	return nil
}

type compiler struct {
	cfg   Config
	tpl   *parser.Template
	pl    *Plan
	nodes []*parser.Dynamic // per part; nil for text
	// century lists the sequences whose reset period is read from a yy
	// date without a window, with that date.
	century [][2]int
	// narrow keeps out of a variable without chars= only the characters of
	// the literal text right after it (see separators); narrowed says
	// that a variable took more characters for it.
	narrow, narrowed bool
}

func (c *compiler) errAt(off int, format string, a ...any) error {
	return errAt(c.pl.src, off, format, a...)
}

// causeAt is an error at off about part name, caused by err: its message
// follows the name, and errors.Is finds err's sentinels (ErrPanic,
// expression.ErrBadArg).
func (c *compiler) causeAt(off int, name string, err error) error {
	e := errAt(c.pl.src, off, "%s: %s", name, strings.TrimPrefix(err.Error(), "sn: ")).(*TemplateError)
	e.Err = err
	return e
}

func (c *compiler) compile() error {
	pl := c.pl
	if len(c.tpl.Nodes) == 0 {
		return c.errAt(0, "empty template")
	}
	for _, n := range c.tpl.Nodes {
		switch n := n.(type) {
		case *parser.Text:
			if !utf8.ValidString(n.Text) {
				return c.errAt(n.Offset, "literal text is not valid UTF-8")
			}
			pl.parts = append(pl.parts, Part{Kind: Text, Offset: n.Offset, Source: n.String(), Lit: n.Text, order: expression.Before})
			c.nodes = append(c.nodes, nil)
		case *parser.Dynamic:
			p, err := c.dynamic(n)
			if err != nil {
				return err
			}
			pl.parts = append(pl.parts, p)
			c.nodes = append(c.nodes, n)
		}
	}
	for i := range pl.parts {
		switch pl.parts[i].Kind {
		case Seq:
			pl.parts[i].ord = len(pl.seqs)
			pl.seqs = append(pl.seqs, i)
		case Var:
			pl.vars = append(pl.vars, i)
		case Date:
			pl.dates = append(pl.dates, i)
		}
	}
	c.separators()
	steps := []func() error{c.names, c.sequences, c.languages, c.checksums, c.keys}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	for _, sd := range c.century {
		return c.centuryWitness(sd[0], sd[1])
	}
	pl.chain = pl.langChain()
	if !c.cfg.Recorded {
		if err := c.prove(); err != nil {
			return err
		}
		c.catalogs()
	}
	c.finish()
	return nil
}

// dynamic resolves one "@<...>" part.
func (c *compiler) dynamic(d *parser.Dynamic) (Part, error) {
	args := expression.Args{}
	for _, a := range d.Args {
		args[a.Key] = a.Value
	}
	p := Part{Name: d.Name, Offset: d.Offset, Source: d.String(), payload: -1, keyPart: -1, keyDate: -1}
	var err error
	if g, ok := c.cfg.Seqs[d.Name]; ok {
		err = c.seqPart(&p, g, args)
	} else if f, ok := c.cfg.Exprs[d.Name]; ok {
		err = c.exprPart(&p, f, args)
	} else {
		if _, explicit := args["var"]; !explicit {
			if m := parser.Closest(d.Name, c.vocabulary()); m != "" {
				return p, c.errAt(d.NameOffset, "unknown name %q: did you mean %s? (to print a per-call variable named %s, write @<%s, var>)", d.Name, m, d.Name, d.Name)
			}
		}
		_, setter := args["value"]
		if _, explicit := args["var"]; !explicit && !setter && (d.Name == "seq" || hasSeqArg(args)) && c.cfg.Unissued {
			if err := c.seqPart(&p, unissued(d.Name), args); err != nil {
				return p, c.causeAt(d.NameOffset, d.Name, err)
			}
			return p, nil
		}
		if _, explicit := args["var"]; !explicit && (d.Name == "seq" || hasSeqArg(args)) {
			if _, setter := args["value"]; !setter {
				return p, c.errAt(d.NameOffset, "no sequence %q: forgotten sn.WithSequence(%q, ...)? Every sequence is given by name: sequence.NewMemory() in tests, a durable store (boltseq, sqlseq, redisseq) for real numbers (to print a per-call variable named %s, write @<%s, var>)",
					d.Name, d.Name, d.Name, d.Name)
			}
		}
		if _, ok := args["value"]; ok {
			err = setterPart(&p, args)
		} else {
			err = varPart(&p, args)
		}
	}
	if err != nil {
		off := d.NameOffset
		var ae *expression.ArgError
		if errors.As(err, &ae) && ae.Arg != "" {
			if a, ok := d.Arg(ae.Arg); ok {
				off = a.Offset
			}
		}
		return p, c.causeAt(off, d.Name, err)
	}
	return p, nil
}

// unissued is the sequence of a part that Config.Unissued made: it
// refuses to issue.
type unissued string

// Next refuses, wrapping errors.ErrUnsupported.
func (u unissued) Next(context.Context, string) (int64, error) {
	return 0, fmt.Errorf("sn: sequence %q: this Generator was made with sn.CheckOnly: it checks, parses and explains numbers, and issues none: %w", string(u), errors.ErrUnsupported)
}

// hasSeqArg reports whether args hold an argument only a sequence takes.
func hasSeqArg(args expression.Args) bool {
	for _, k := range []string{"width", "overflow", "key", "reset", "obfuscate", "radix", "alphabet"} {
		if _, ok := args[k]; ok {
			return true
		}
	}
	return false
}

// vocabulary lists the names a variable's name could be a typo of.
func (c *compiler) vocabulary() []string {
	names := []string{OwnerKey}
	for n := range c.cfg.Seqs {
		names = append(names, n)
	}
	for n := range c.cfg.Exprs {
		names = append(names, n)
	}
	slices.Sort(names[1:])
	return names
}

func (c *compiler) seqPart(p *Part, g sequence.Gen, args expression.Args) error {
	p.Kind, p.gen, p.order = Seq, g, expression.Normal
	p.cache = new(atomic.Pointer[keyCache])
	if g == nil {
		return fmt.Errorf("sequence %q is nil", p.Name)
	}
	if err := args.Check("width", "overflow", "key", "reset", "obfuscate", "radix", "alphabet"); err != nil {
		return err
	}
	if err := digitsOf(p, args); err != nil {
		return err
	}
	maxWidth := len(p.appendDigits(nil, math.MaxInt64, 0))
	var err error
	if p.Width, err = args.Int("width", 0, 1, maxWidth); err != nil {
		return err
	}
	if p.Width > 0 {
		p.maxSeq = math.MaxInt64
		if p.Width < maxWidth {
			p.maxSeq = ipow(int64(p.radix()), p.Width) - 1
		}
	}
	ov, err := args.OneOf("overflow", "error", "error", "grow")
	if err != nil {
		return err
	}
	p.Grow = ov == "grow"
	if _, ok := args["overflow"]; ok && p.Width == 0 {
		return expression.Errorf("overflow", "overflow= needs width=")
	}
	if kv, ok := args["key"]; ok {
		if kv == "true" || !parser.IsName(kv) { // "true" is what a bare "key" gives
			return expression.Errorf("key", "key= needs the name of a variable, as in key=unit")
		}
		p.KeyVar = kv
	}
	r, err := args.OneOf("reset", "never", "never", "year", "fiscal-year", "quarter", "month", "week", "day", "hour", "minute", "second")
	if err != nil {
		return err
	}
	p.Reset, _ = builtin.ParsePeriod(r)
	p.batcher, _ = g.(sequence.Batcher)
	p.holder, _ = g.(sequence.Holder)
	if name, ok := args["obfuscate"]; ok {
		return c.obfuscate(p, name)
	}
	return nil
}

// digitAlphabet is the digits of radix=N: 0-9, then A-Z, then a-z.
const digitAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// digitsOf sets the digits of sequence part p from radix= or alphabet=.
func digitsOf(p *Part, args expression.Args) error {
	_, hasRadix := args["radix"]
	spec, hasAlpha := args["alphabet"]
	switch {
	case hasRadix && hasAlpha:
		return expression.Errorf("alphabet", "radix= and alphabet= both give the digits: use one")
	case hasRadix:
		n, err := args.Int("radix", 10, 2, len(digitAlphabet))
		if err != nil {
			return err
		}
		if n != 10 {
			p.Digits = digitAlphabet[:n]
		}
	case hasAlpha:
		d, ok := builtin.ExpandAlphabet(spec)
		if !ok {
			return expression.Errorf("alphabet", "alphabet=%q: want printable ASCII characters, each once, at least two (ranges such as 0-9A-Z allowed); the first is the digit for 0", spec)
		}
		if d != digitAlphabet[:10] {
			p.Digits = d
		}
	}
	return nil
}

// radix returns the number of digits of p.
func (p *Part) radix() int {
	if p.Digits == "" {
		return 10
	}
	return len(p.Digits)
}

// ipow returns b^e, which must fit.
func ipow(b int64, e int) int64 {
	n := int64(1)
	for range e {
		n *= b
	}
	return n
}

// obfuscate gives sequence part p the keyed permutation of its width
// named name.
func (c *compiler) obfuscate(p *Part, name string) error {
	key, ok := c.cfg.Keys[name]
	if !ok {
		names := slices.Sorted(maps.Keys(c.cfg.Keys))
		hint := "give its key with sn.WithObfuscation or in the config's obfuscation section"
		if m := parser.Closest(name, names); m != "" {
			hint = "did you mean " + m + "?"
		}
		return expression.Errorf("obfuscate", "obfuscate=%s: no key of that name (%s)", name, hint)
	}
	if p.Width == 0 || p.Grow || p.maxSeq > 1<<62 {
		return expression.Errorf("obfuscate", "obfuscate= needs width= and overflow=error, and at most 2^62 numbers of that width (width=1..18 in decimal): it permutes the numbers of exactly width digits")
	}
	perm, err := feistel.New(key, uint64(p.maxSeq))
	if err != nil {
		return expression.Errorf("obfuscate", "obfuscate=%s: %v", name, err)
	}
	p.perm, p.Obfuscate = perm, name
	p.keyCheck, p.keyOK = keyCheck(key), new(atomic.Bool)
	return nil
}

// keyCheck returns the check value of an obfuscation key: what the store
// records of it.
func keyCheck(key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("sn obfuscation key check"))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

func (c *compiler) exprPart(p *Part, f expression.Factory, args expression.Args) error {
	e, err := callFactory(f, args)
	if err != nil {
		return err
	}
	if e == nil {
		return errors.New("factory returned a nil expression")
	}
	p.expr, p.Kind, p.args = e, Custom, args
	switch e := e.(type) {
	case *builtin.Date:
		if e.Loc == nil {
			return errors.New("date without a time zone (Loc)")
		}
		p.Kind, p.date = Date, e
	case *builtin.Checksum:
		if e.Algo == nil {
			return errors.New("checksum without an algorithm")
		}
		p.Kind, p.check = Checksum, e
		p.app, _ = e.Algo.(checksum.Appender)
		p.untrusted = !checksum.Builtin(e.Algo)
	case *builtin.Random:
		if e.Width < 1 || e.Width > 64 || len(e.Alphabet) < 2 || len(e.Alphabet) > 256 {
			return fmt.Errorf("random: width %d and an alphabet of %d characters: want 1 to 64 and 2 to 256", e.Width, len(e.Alphabet))
		}
		p.Kind, p.random = Random, e
	}
	return safe(func() { p.order = e.Order() })
}

// callFactory runs a user's factory, turning a panic into an error.
func callFactory(f expression.Factory, args expression.Args) (e expression.Expression, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("%w in factory: %v", ErrPanic, r)
		}
	}()
	return f(args)
}

// safe runs f, turning a panic into an error.
func safe(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = recovered(r)
		}
	}()
	f()
	return nil
}

func setterPart(p *Part, args expression.Args) error {
	p.Kind, p.order = Setter, expression.Before
	if err := args.Check("value", "var"); err != nil {
		return err
	}
	p.Lit = args["value"]
	if !utf8.ValidString(p.Lit) {
		return expression.Errorf("value", "value= is not valid UTF-8")
	}
	if p.Name == OwnerKey && p.Lit == "" {
		return expression.Errorf("value", "ownerKey needs a value: it names the counter")
	}
	return nil
}

func varPart(p *Part, args expression.Args) error {
	p.Kind, p.order, p.chars = Var, expression.Normal, lang.Any
	if err := args.Check("maxlen", "chars", "var"); err != nil {
		return err
	}
	var err error
	if p.maxBytes, err = args.Int("maxlen", 0, 1, MaxVarLen); err != nil {
		return err
	}
	if cs, ok := args["chars"]; ok {
		if cs == "" || cs == "true" || strings.ContainsAny(cs, "[]") {
			return expression.Errorf("chars", "chars=%q: want the inside of a character class, such as 0-9A-Z", cs)
		}
		n, err := lang.Regexp("[" + cs + "]")
		if err != nil {
			return expression.Errorf("chars", "chars=%q: not a character class", cs)
		}
		p.chars, p.charsArg = n.Alphabet(), cs
	}
	return nil
}

// separators keeps the template's literal characters out of the variables
// that do not say which characters they take (chars=): so that
// "@<area>-@<unit>" cannot read "a-b-c" two ways. Narrow, it keeps out only
// those of the literal text right after each variable, which ends it, and
// the proof decides whether that is enough. Such variables take
// printable characters only (lang.Printable): no newline, NUL or bidi
// override in a number.
func (c *compiler) separators() {
	var lits strings.Builder
	for i := range c.pl.parts {
		if p := &c.pl.parts[i]; p.Kind == Text {
			lits.WriteString(p.Lit)
		}
	}
	seps := lang.Runes(lits.String())
	for i := range c.pl.parts {
		p := &c.pl.parts[i]
		if p.Kind != Var || p.charsArg != "" {
			continue
		}
		p.chars, p.seps = lang.Printable.Minus(seps), lits.String()
		if !c.narrow {
			continue
		}
		next := ""
		if i+1 < len(c.pl.parts) && c.pl.parts[i+1].Kind == Text {
			next = c.pl.parts[i+1].Lit
		}
		if next != lits.String() {
			p.chars, p.seps = lang.Printable.Minus(lang.Runes(next)), next
			c.narrowed = true
		}
	}
}

// names checks the variables and setters: one name is either set or given
// per call, and set once.
func (c *compiler) names() error {
	kinds := map[string]*Part{}
	for i := range c.pl.parts {
		p := &c.pl.parts[i]
		if p.Kind != Setter && p.Kind != Var {
			continue
		}
		if q, ok := kinds[p.Name]; ok {
			if q.Kind == Setter || p.Kind == Setter {
				return c.errAt(p.Offset, "%s is set at offset %d and cannot be set or given again", p.Name, q.Offset)
			}
			// Two places that must print one value are beyond what the
			// proof can tell apart from two values.
			return c.errAt(p.Offset, "%s is printed at offset %d already: print a variable once", p.Name, q.Offset)
		}
		kinds[p.Name] = p
		if p.Name == OwnerKey {
			if p.Kind == Setter {
				c.pl.base = p.Lit
			} else {
				c.pl.owner = i
			}
		}
	}
	return nil
}

// sequences checks the sequence parts: there is one at least; key=
// names a variable the template prints; reset= has a date that tells its
// periods apart.
func (c *compiler) sequences() error {
	pl := c.pl
	if len(pl.seqs) == 0 {
		return c.errAt(0, "the template has no sequence part (such as @<seq>), so every number would be the same")
	}
	for _, i := range pl.seqs {
		s := &pl.parts[i]
		if s.KeyVar != "" {
			for j := range pl.parts {
				if q := &pl.parts[j]; (q.Kind == Var || q.Kind == Setter) && q.Name == s.KeyVar {
					s.keyPart = j
					break
				}
			}
			if s.keyPart < 0 {
				a, _ := c.nodes[i].Arg("key")
				return c.errAt(a.Offset, "%s: key=%s needs @<%s> printed in the template; otherwise numbers of different %ss would print alike", s.Name, s.KeyVar, s.KeyVar, s.KeyVar)
			}
		}
		if s.Reset == builtin.Never {
			continue
		}
		pl.needTime = true
		century := -1
		for _, j := range pl.dates {
			printed, full := pl.parts[j].date.Tells(s.Reset)
			if !printed {
				continue
			}
			if full {
				s.keyDate = j
				break
			}
			if century < 0 {
				century = j
			}
		}
		if s.keyDate >= 0 {
			continue
		}
		if century >= 0 {
			s.keyDate = century // refused with a witness once keys are known
			c.century = append(c.century, [2]int{i, century})
			continue
		}
		a, _ := c.nodes[i].Arg("reset")
		return c.errAt(a.Offset, "%s: reset=%s needs a date that tells %ss apart (such as %s); otherwise numbers would repeat after each reset",
			s.Name, s.Reset, s.Reset.String(), periodExample[s.Reset])
	}
	if len(pl.dates) > 0 {
		pl.needTime = true
	}
	return nil
}

// periodExample is, for each reset period, a date part that tells its
// periods apart.
var periodExample = map[builtin.Period]string{
	builtin.Year:       "@<date, format=yyyy>",
	builtin.FiscalYear: "@<date, format='FY'ff, fiscal=4> with the month the fiscal year starts in",
	builtin.Quarter:    "@<date, format=yyyy'Q'Q>",
	builtin.Month:      "@<date, format=yyyyMM>",
	builtin.Week:       "@<date, format=YYYY'W'ww>, the ISO week-based year and week",
	builtin.Day:        "@<date, format=yyyyMMdd> or @<date, format=yyyyDDD>",
	builtin.Hour:       "@<date, format=yyyyMMddHH>",
	builtin.Minute:     "@<date, format=yyyyMMddHHmm>",
	builtin.Second:     "@<date, format=yyyyMMddHHmmss>",
}

// checksums binds each over=seq checksum to its sequence and computes each
// algorithm over sample text, so that one that cannot take the template's
// text fails here and not at Next.
func (c *compiler) checksums() error {
	pl := c.pl
	for i := range pl.parts {
		k := &pl.parts[i]
		if k.Kind != Checksum {
			continue
		}
		fail := func(err error) error {
			off := c.nodes[i].NameOffset
			if a, ok := c.nodes[i].Arg("algo"); ok {
				off = a.Offset
			}
			return c.errAt(off, "%v", err)
		}
		if !k.check.All {
			k.payload = pl.seqs[0]
			for _, j := range pl.seqs {
				if j < i {
					k.payload = j
				}
			}
			s := &pl.parts[k.payload]
			widths := []int{max(s.Width, 1)}
			if s.Width == 0 || s.Grow {
				widths = append(widths, 19)
			}
			digits := "123456789"
			if s.Digits != "" {
				digits = s.Digits
			}
			for _, w := range widths {
				for _, d := range digits {
					if err := probe(k.check.Algo, strings.Repeat(string(d), w)); err != nil {
						return fail(fmt.Errorf("%w (over=seq, a %d-digit sequence)", err, w))
					}
				}
			}
			continue
		}
		if err := c.overAll(i, fail); err != nil {
			return err
		}
	}
	return nil
}

// overAll checks the over=all checksum at part i against every character
// the parts before it can print. It computes the algorithm over a sample of
// the template's text, and again with each character of each part in that
// part's place: an algorithm that cannot take one fails here, naming the
// part, and not at Next after the draw. A variable without chars= may be
// given any character, and it is checked per call, before the draw
// ([Part.checkVar]).
func (c *compiler) overAll(i int, fail func(error) error) error {
	pl := c.pl
	k := &pl.parts[i]
	segs := make([]string, i)
	for j := range segs {
		segs[j] = sampleText(&pl.parts[j])
	}
	text := strings.Join(segs, "")
	err := probe(k.check.Algo, text)
	if err != nil && !errors.Is(err, checksum.ErrLength) {
		return fail(fmt.Errorf("%w (over=all, the template's text)", err))
	}
	if err != nil || oneLength(k.check.Algo, text) {
		// The algorithm takes payloads of some lengths only: the text
		// before it must always have one length, and that one.
		for j := range segs {
			if q := &pl.parts[j]; !fixedLength(q) {
				return fail(fmt.Errorf("%s takes a payload of one length only, and %s prints text of varying length (over=all: give it a fixed width, or use over=seq)", k.check.Algo.Name(), q.Source))
			}
		}
		if err != nil {
			return fail(fmt.Errorf("%w (over=all, the template's text)", err))
		}
	}
	for j := range segs {
		q := &pl.parts[j]
		if q.nfa == nil || q.Kind == Text || q.Kind == Setter {
			continue
		}
		// r replaces the first character of the part's sample, so that the
		// text keeps its length.
		_, n := utf8.DecodeRuneInString(segs[j])
		at := allCheck{algo: k.check.Algo, before: strings.Join(segs[:j], ""), after: segs[j][n:] + strings.Join(segs[j+1:], "")}
		set := q.nfa.Alphabet()
		r, whole := at.untaken(set)
		switch {
		case q.Kind == Var && r >= 0 && q.charsArg == "", q.Kind == Var && r < 0 && !whole:
			at.learnASCII()
			q.overAll = append(q.overAll, at) // checked per call, before the draw
		case r >= 0 && q.anyText:
			return fail(fmt.Errorf("%s cannot take every character, and %s gives no Pattern, so it may print any (over=all: give its expression a Pattern of characters the algorithm takes, or use over=seq)", k.check.Algo.Name(), q.Source))
		case r >= 0:
			return fail(fmt.Errorf("%s cannot take %q, which %s prints (over=all: every character before the checksum is checked; give %s characters the algorithm takes, or use over=seq)", k.check.Algo.Name(), r, q.Source, q.Source))
		}
	}
	return nil
}

// sampleText returns text that part p prints, for computing a checksum
// over at New.
func sampleText(p *Part) string {
	switch p.Kind {
	case Text, Setter:
		return p.Lit
	case Seq:
		digit := "1"
		if p.Digits != "" {
			digit = string([]rune(p.Digits)[1])
		}
		return strings.Repeat(digit, max(p.Width, 1))
	case Date:
		return string(p.date.AppendTime(nil, time.Date(2017, 3, 4, 10, 20, 30, 0, p.date.Loc)))
	case Checksum:
		return strings.Repeat("1", p.check.Algo.Len())
	case Var:
		return string(p.chars.Pick())
	}
	if p.nfa != nil {
		t, _ := p.nfa.Shortest()
		return t
	}
	return ""
}

// allCheck is an over=all checksum seen from one part before it: the
// sample text before the part's first character and after it.
type allCheck struct {
	algo          checksum.Algorithm
	before, after string
	ascii         *[2]uint64 // the ASCII runes it takes, learnt once: a call's check computes nothing for them
}

// learnASCII tries every ASCII rune once, so that a per-call check of a
// value in ASCII ([allCheck.admits]) allocates and computes nothing.
func (a *allCheck) learnASCII() {
	a.ascii = new([2]uint64)
	for r := range rune(128) {
		if a.takes(r) {
			a.ascii[r/64] |= 1 << (r % 64)
		}
	}
}

// admits reports whether the algorithm takes r in the part's place, as
// takes does, from what learnASCII learnt for an ASCII rune.
func (a allCheck) admits(r rune) bool {
	if r < 128 && a.ascii != nil {
		return a.ascii[r/64]&(1<<(r%64)) != 0
	}
	return a.takes(r)
}

// maxProbe is how many characters of a part's alphabet overAll tries at
// New; a larger alphabet is sampled.
const maxProbe = 1024

// untaken returns a rune of set that the algorithm cannot take in the
// part's place, or -1, and whether every rune of set was tried.
func (a allCheck) untaken(set lang.Set) (rune, bool) {
	n, whole := set.Size(), true
	if n > maxProbe {
		n, whole = maxProbe, false
		for _, r := range readableProbe {
			if set.Has(r) && !a.takes(r) {
				return r, false
			}
		}
	}
	for x := range n {
		if r := set.Nth(x); !a.takes(r) {
			return r, whole
		}
	}
	return -1, whole
}

// readableProbe are the runes tried first in a large alphabet.
const readableProbe = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_./ "

// takes reports whether the algorithm can compute a check over the sample
// with r in the part's place. The sample has a length the algorithm takes
// (see [compiler.overAll]), so a length refused is r's: a character
// longer in UTF-8 than the one it replaces.
func (a allCheck) takes(r rune) bool {
	return probe(a.algo, a.before+string(r)+a.after) == nil
}

// oneLength reports whether the algorithm refuses a payload one character
// longer than text, which it takes: it fixes the payload's length (s10).
func oneLength(a checksum.Algorithm, text string) bool {
	last, _ := utf8.DecodeLastRuneInString(text)
	return errors.Is(probe(a, text+string(last)), checksum.ErrLength)
}

// fixedLength reports whether every text p can print has one length.
func fixedLength(p *Part) bool {
	switch p.Kind {
	case Text, Setter, Checksum:
		return true
	}
	if p.nfa == nil || p.max <= 0 {
		return false
	}
	if p.Kind == Var && !p.chars.ASCII() {
		return false // its maxlen counts characters, of 1 to 4 bytes
	}
	short, ok := p.nfa.Shortest()
	return ok && len(short) == p.max
}

// probe computes a check over payload, turning a panic in an algorithm of
// the user's into an error.
func probe(a checksum.Algorithm, payload string) (err error) {
	if perr := safe(func() { _, err = a.Compute(payload) }); perr != nil {
		return perr
	}
	return err
}

// finish computes what rendering needs: whether the fast path applies and
// how big a number gets.
func (c *compiler) finish() {
	pl := c.pl
	// Literal text takes the Order of the part before it, so that the
	// usual templates evaluate in template position.
	prev := expression.Before
	for i := range pl.parts {
		if p := &pl.parts[i]; p.Kind == Text || p.Kind == Setter {
			p.order = prev
		} else {
			prev = p.order
		}
	}
	pl.direct = true
	for i := range pl.parts {
		p := &pl.parts[i]
		if p.Kind == Custom || p.Kind == Checksum && (p.payload > i || p.untrusted) {
			pl.direct = false
		}
	}
	if pl.direct {
		pl.compileOps()
		pl.compileSimple()
	}
	pl.maxLen = 0
	for i := range pl.parts {
		if m := pl.parts[i].max; m < 0 || pl.maxLen < 0 {
			pl.maxLen = -1
		} else {
			pl.maxLen += m
		}
	}
	pl.bufSize = pl.maxLen
	if pl.bufSize <= 0 || pl.bufSize > 256 {
		pl.bufSize = 64
	}
	pl.pattern = c.regexp()
}
