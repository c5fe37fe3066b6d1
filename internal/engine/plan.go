// Package engine compiles a template into one typed plan and runs it: it
// issues numbers, reads them back, describes them, and proves at compile
// time that no string is printed for two counter keys or two numbers.
//
// Everything that package sn's Generator does goes through a [Plan]: New
// compiles one with [Compile]; Next, NextN, Preview and AppendNext render
// it; Parse and Validate read numbers back with it; Explain, Regexp, MaxLen
// and Floor read its parts. The counter key is computed in exactly one
// place, [Plan.key].
package engine

import (
	"sync/atomic"
	"time"

	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/feistel"
	"github.com/sngen/sn/internal/lang"
	"github.com/sngen/sn/sequence"
)

// OwnerKey is the variable that, when the template prints it, is the base
// of the counter key.
const OwnerKey = "ownerKey"

// Kind is what a part of a template is.
type Kind uint8

// The kinds of parts.
const (
	Text     Kind = iota // literal text
	Setter               // @<NAME, value=V>: prints V, sets NAME
	Var                  // @<NAME>: a per-call variable
	Seq                  // @<seq ...>: a registered sequence
	Date                 // the date expression
	Checksum             // the checksum expression
	Random               // the random expression
	Custom               // any other registered expression
)

// String returns the kind as Explain prints it.
func (k Kind) String() string {
	return [...]string{"text", "setter", "variable", "sequence", "expression", "expression", "expression", "expression"}[k]
}

// Plan is a compiled template. It is immutable and safe for concurrent use.
type Plan struct {
	src       string // the template as given
	canonical string // the canonical template text
	parts     []Part
	seqs      []int // indexes of the sequence parts
	vars      []int // indexes of the variable parts
	dates     []int // indexes of the date parts
	owner     int   // index of the part printing ownerKey, or -1
	base      string
	series    string // what the template means (see meaning): its series, however spelt
	clock     func() time.Time
	needTime  bool // a part prints the instant or a key depends on it
	direct    bool // every part is built in and may be evaluated in template position
	maxLen    int
	bufSize   int // the capacity a rendered number starts with
	chain     lang.Chain
	ops       []op        // the direct renderer's steps
	simple    *simple     // the renderer of the simple form, or nil
	quoted    *simple     // simple framed as a JSON string and a comma, or nil
	pattern   string      // Regexp
	enroll    *enrollment // nil when no store keeps a catalog
}

// Part is one compiled part of a template.
type Part struct {
	Kind   Kind
	Name   string // the name in the template; "" for text
	Offset int    // byte offset in the template
	Source string // the part as canonical template text
	Lit    string // Text and Setter: what the part prints

	// Var
	chars    lang.Set   // allowed runes
	charsArg string     // chars= as written, "" for any but the separators
	seps     string     // without chars=: the template's literal text, whose characters the value may not hold
	maxBytes int        // maxlen=, 0 for none
	overAll  []allCheck // the over=all checksums after it that cannot take every character it may hold

	// Seq
	ord      int // ordinal among the sequence parts
	gen      sequence.Gen
	batcher  sequence.Batcher
	holder   sequence.Holder // nil when gen holds no numbers
	handle   sequence.Handle // for a key fixed at compile time
	Width    int
	Grow     bool
	KeyVar   string // key=
	keyPart  int    // index of the part printing KeyVar
	Reset    builtin.Period
	keyDate  int    // index of the date part giving the reset period, or -1
	fixedKey string // the key when it never varies, else ""
	cache    *atomic.Pointer[keyCache]
	// A key that varies by its reset period alone: the sequence's
	// Releaser, and the latest period drawn, whose predecessor is released
	// when it turns.
	releaser  sequence.Releaser
	period    *atomic.Int64
	guard     *guard        // for a reset of an hour or shorter on a store that keeps marks
	Obfuscate string        // obfuscate=NAME
	perm      *feistel.Perm // obfuscate=: prints 1+perm(n-1) for n
	keyCheck  string        // obfuscate=: the check value of the key, recorded in the store
	keyOK     *atomic.Bool  // obfuscate=: the store has the key's check value, or keeps no records
	maxSeq    int64         // the largest number the part prints, or 0 for no limit
	Digits    string        // radix= or alphabet=: the digits, 0 first; "" for decimal

	// Date
	date *builtin.Date
	// Checksum
	check     *builtin.Checksum
	app       checksum.Appender
	untrusted bool // an algorithm of the user's: its output is checked
	payload   int  // index of the sequence checked (over=seq), or -1 (over=all)
	// Random
	random *builtin.Random
	// Custom, and every expression
	expr    expression.Expression
	anyText bool // an expression without a Pattern: it may print any text
	order   expression.Order
	args    expression.Args // the arguments, of an expression that is not built in (see Spec)

	pattern string    // RE2 pattern of what the part prints
	nfa     *lang.NFA // its language
	marked  bool      // a counter key or a sequence value depends on the part's text
	max     int       // longest output in bytes, -1 when unbounded
	group   string    // regexp group name, "" for text
}

// keyCache is the last key a sequence part built, to spare building the same
// string again on the next call.
type keyCache struct {
	owner, val string
	bucket     int64
	key        string
}

// label names the part in messages.
func (p *Part) label() string {
	if p.Kind == Text {
		return "text"
	}
	return p.Name
}

// Parts returns the parts in template position. The slice must not be
// modified.
func (pl *Plan) Parts() []Part { return pl.parts }

// Source returns the template as given to Compile.
func (pl *Plan) Source() string { return pl.src }

// Series returns what the template means, not how it is spelt: its
// canonical text without what does not change which series a number
// belongs to (a sequence's width, a date's format; see meaning). Two
// templates the catalog continues as one series (a widening) have one
// Series.
func (pl *Plan) Series() string { return pl.series }

// String returns the canonical template text.
func (pl *Plan) String() string { return pl.canonical }

// BufSize returns the capacity a rendered number starts with: its longest
// length when that is short, else 64.
func (pl *Plan) BufSize() int { return pl.bufSize }

// MaxLen returns the longest number in bytes, or -1 when unbounded.
func (pl *Plan) MaxLen() int { return pl.maxLen }

// Regexp returns the anchored pattern of the template's numbers.
func (pl *Plan) Regexp() string { return pl.pattern }

// Order returns the part's evaluation stage.
func (p *Part) Order() expression.Order { return p.order }

// MaxLen returns the part's longest output in bytes, -1 when unbounded.
func (p *Part) MaxLen() int { return p.max }

// Pattern returns the part's RE2 pattern.
func (p *Part) Pattern() string { return p.pattern }

// Group returns the part's group name in [Plan.Regexp], "" for text.
func (p *Part) Group() string { return p.group }

// Gen returns a sequence part's generator.
func (p *Part) Gen() sequence.Gen { return p.gen }

// FixedKey returns a sequence part's counter key when it is the same for
// every call.
func (p *Part) FixedKey() (string, bool) { return p.fixedKey, p.fixedKey != "" }

// MaxSeq returns the largest number a sequence part prints within its
// width, or 0 when it has no width or grows past it.
func (p *Part) MaxSeq() int64 {
	if p.Grow {
		return 0
	}
	return p.maxSeq
}
