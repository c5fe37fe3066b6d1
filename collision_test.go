package sn_test

// The adversary's harness for "no string printed for two counters": random
// templates over the built-in parts, each accepted one brute-forced over small
// inputs (variables, instants, sequence values), and any string printed by two
// different (counter key, sequence value) combinations reported as a
// collision. See DESIGN.md, "Unambiguous by proof".
//
//	go test -race -run Collision -count=1 -v .                        # default run, with Parse and witness checks
//	go test -run TestCollision -collision.n=20000 -collision.seed=7 .  # more, other templates
//	go test -run '^$' -fuzz FuzzCollision -fuzztime 5m .               # keep searching
//
// Template number i of a run is collRandomTemplate(seed, i); a failure names
// it as "seed S/i" and prints it, and FuzzCollision(S, i) runs it alone.
// Hand-written templates are read from testdata/collision/templates.txt.
// collision_api_test.go adds the checks of Parse and of the ambiguity
// witness through collParseHook and collRefuseHook.
//
// A collision is a string printed for two inputs whose sequence draws, the
// (counter key, number) of each sequence part in order, differ. The same
// draws printed with different variables (two splits of variables that are
// not part of a key) is not one.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/parser"
)

var (
	collisionN      = flag.Int("collision.n", 300, "TestCollision: number of random templates to generate")
	collisionSeed   = flag.Uint64("collision.seed", 1, "TestCollision: seed of the random template generator")
	collisionBudget = flag.Int("collision.budget", 3000, "TestCollision, FuzzCollision: at most this many numbers rendered per template")
)

// Set by collision_api_test.go.
var (
	// collParseHook checks Parse on one number that g printed for in.
	collParseHook func(g *sn.Generator, t *collTemplate, number string, in *collInput) error
	// collRefuseHook inspects the error of a template that New refused.
	collRefuseHook func(t *collTemplate, err error) collRefusal
)

// collRefusal is what collRefuseHook says about a refused template.
type collRefusal struct {
	ambiguous bool // errors.Is(err, sn.ErrAmbiguous)
	simple    bool // the template has no date, checksum or random part
	checked   bool // both inputs of the witness render back to its Number
	// unrendered: what is wrong with an unverified witness of a template
	// with dates or check characters (its inputs may be readings of Number
	// that the dates or checks rule out): counted and logged, not a failure.
	unrendered string
	problem    string // what is wrong with the error or its witness; "" if nothing
}

// ---------------------------------------------------------------------------
// The template model: what the harness knows about a template it wrote.

type collKind uint8

const (
	collText collKind = iota
	collVar
	collSetter
	collDate
	collChecksum
	collSeq
)

type collPart struct {
	kind   collKind
	text   string // collText: the text as printed ("@", not "@@")
	name   string // collVar, collSetter
	value  string // collSetter
	chars  string // collVar: character class body; "" for any character
	maxlen int    // collVar: 0 for unbounded
	format string // collDate
	tz     string // collDate: "" for UTC
	algo   string // collChecksum
	all    bool   // collChecksum: over=all
	width  int    // collSeq: 0 for no padding
	grow   bool   // collSeq: overflow=grow
	keyVar string // collSeq: key=
	reset  string // collSeq: reset=; "" for never
}

type collTemplate struct {
	parts  []collPart
	origin string // "seed S/I" or "testdata line N"
}

func collDyn(name string, args ...string) string {
	if len(args) == 0 {
		return "@<" + name + ">"
	}
	return "@<" + name + ", " + strings.Join(args, ", ") + ">"
}

func collQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\r\n,>\"=<\\") {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

func (p *collPart) source() string {
	switch p.kind {
	case collText:
		return strings.ReplaceAll(p.text, "@", "@@")
	case collVar:
		var args []string
		if p.chars != "" {
			args = append(args, "chars="+p.chars)
		}
		if p.maxlen > 0 {
			args = append(args, "maxlen="+strconv.Itoa(p.maxlen))
		}
		return collDyn(p.name, args...)
	case collSetter:
		return collDyn(p.name, "value="+collQuote(p.value))
	case collDate:
		args := []string{"format=" + p.format}
		if p.tz != "" {
			args = append(args, "tz="+p.tz)
		}
		return collDyn("date", args...)
	case collChecksum:
		args := []string{"algo=" + p.algo}
		if p.all {
			args = append(args, "over=all")
		}
		return collDyn("checksum", args...)
	case collSeq:
		var args []string
		if p.width > 0 {
			args = append(args, "width="+strconv.Itoa(p.width))
		}
		if p.grow {
			args = append(args, "overflow=grow")
		}
		if p.keyVar != "" {
			args = append(args, "key="+p.keyVar)
		}
		if p.reset != "" {
			args = append(args, "reset="+p.reset)
		}
		return collDyn("seq", args...)
	}
	panic("unknown part kind")
}

func (t *collTemplate) String() string {
	var b strings.Builder
	for i := range t.parts {
		b.WriteString(t.parts[i].source())
	}
	return b.String()
}

func (t *collTemplate) count(k collKind) int {
	n := 0
	for i := range t.parts {
		if t.parts[i].kind == k {
			n++
		}
	}
	return n
}

// timeDependent reports whether the instant can change the number or its key.
func (t *collTemplate) timeDependent() bool {
	for _, p := range t.parts {
		if p.kind == collDate || p.kind == collSeq && p.reset != "" {
			return true
		}
	}
	return false
}

// varNames returns the per-call variables, in order of first appearance.
func (t *collTemplate) varNames() []string {
	var out []string
	for _, p := range t.parts {
		if p.kind == collVar && !slices.Contains(out, p.name) {
			out = append(out, p.name)
		}
	}
	return out
}

// keyVars returns the per-call variables that are part of a counter key: a
// per-call ownerKey and the per-call variables named by key=.
func (t *collTemplate) keyVars() []string {
	perCall := t.varNames()
	var out []string
	add := func(n string) {
		if slices.Contains(perCall, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	add("ownerKey")
	for _, p := range t.parts {
		if p.kind == collSeq && p.keyVar != "" {
			add(p.keyVar)
		}
	}
	return out
}

var collCharRes sync.Map // chars -> *regexp.Regexp

// allows reports whether the variable part takes v (by its maxlen and chars;
// the engine may refuse more, such as separators).
func (p *collPart) allows(v string) bool {
	if v == "" || p.maxlen > 0 && len(v) > p.maxlen {
		return false
	}
	if p.chars == "" {
		return true
	}
	re, ok := collCharRes.Load(p.chars)
	if !ok {
		re, _ = collCharRes.LoadOrStore(p.chars, regexp.MustCompile(`^[`+p.chars+`]*$`))
	}
	return re.(*regexp.Regexp).MatchString(v)
}

// allows reports whether every part printing variable name takes v.
func (t *collTemplate) allows(name, v string) bool {
	for i := range t.parts {
		if p := &t.parts[i]; p.kind == collVar && p.name == name && !p.allows(v) {
			return false
		}
	}
	return v != ""
}

var errCollRender = errors.New("reference render")

// render prints the template by hand: variables by value, sequences by
// their value zero-padded, dates formatted, checks computed. It is checked
// against the engine on every number the harness renders, and used to
// re-check ambiguity witnesses.
func (t *collTemplate) render(vars map[string]string, at time.Time, seqs []int64) (string, error) {
	if n := t.count(collSeq); len(seqs) != n {
		return "", fmt.Errorf("%w: %d sequence values for %d sequence parts", errCollRender, len(seqs), n)
	}
	texts := make([]string, len(t.parts))
	si := 0
	for i := range t.parts {
		p := &t.parts[i]
		switch p.kind {
		case collText:
			texts[i] = p.text
		case collSetter:
			texts[i] = p.value
		case collVar:
			v := vars[p.name]
			if !p.allows(v) {
				return "", fmt.Errorf("%w: %s=%q not allowed", errCollRender, p.name, v)
			}
			texts[i] = v
		case collDate:
			s, err := collFormatDate(p, at)
			if err != nil {
				return "", err
			}
			texts[i] = s
		case collSeq:
			n := seqs[si]
			si++
			if n <= 0 {
				return "", fmt.Errorf("%w: sequence value %d", errCollRender, n)
			}
			s := strconv.FormatInt(n, 10)
			if len(s) < p.width {
				s = strings.Repeat("0", p.width-len(s)) + s
			}
			if p.width > 0 && !p.grow && len(s) > p.width {
				return "", fmt.Errorf("%w: %d overflows width %d", errCollRender, n, p.width)
			}
			texts[i] = s
		}
	}
	var b strings.Builder
	for i := range t.parts {
		if p := &t.parts[i]; p.kind == collChecksum {
			alg, err := checksum.Lookup(p.algo)
			if err != nil {
				return "", err
			}
			// over=seq: the nearest sequence before the checksum, or else
			// the first one after it.
			payload := ""
			for j := range t.parts {
				if t.parts[j].kind == collSeq && (j < i || payload == "") {
					payload = texts[j]
				}
				if j > i && payload != "" {
					break
				}
			}
			if p.all {
				payload = b.String()
			}
			if texts[i], err = alg.Compute(payload); err != nil {
				return "", fmt.Errorf("%w: %s over %q: %v", errCollRender, p.algo, payload, err)
			}
		}
		b.WriteString(texts[i])
	}
	return b.String(), nil
}

var collLocs sync.Map // tz -> *time.Location

func collFormatDate(p *collPart, at time.Time) (string, error) {
	loc := time.UTC
	if p.tz != "" {
		l, ok := collLocs.Load(p.tz)
		if !ok {
			ll, err := time.LoadLocation(p.tz)
			if err != nil {
				return "", err
			}
			l, _ = collLocs.LoadOrStore(p.tz, ll)
		}
		loc = l.(*time.Location)
	}
	at = at.In(loc)
	var b strings.Builder
	f := p.format
	for i := 0; i < len(f); {
		j := i + 1
		for j < len(f) && f[j] == f[i] {
			j++
		}
		switch run := f[i:j]; run {
		case "yyyy":
			if at.Year() < 0 || at.Year() > 9999 {
				return "", fmt.Errorf("%w: year %d", errCollRender, at.Year())
			}
			b.WriteString(collPad(at.Year(), 4))
		case "yy":
			b.WriteString(collPad(at.Year()%100, 2))
		case "MM":
			b.WriteString(collPad(int(at.Month()), 2))
		case "dd":
			b.WriteString(collPad(at.Day(), 2))
		case "YYYY":
			wy, _ := at.ISOWeek()
			b.WriteString(collPad(wy, 4))
		case "YY":
			wy, _ := at.ISOWeek()
			b.WriteString(collPad(wy%100, 2))
		case "ww":
			_, w := at.ISOWeek()
			b.WriteString(collPad(w, 2))
		case "Q":
			b.WriteString(collPad((int(at.Month())+2)/3, 1))
		case "DDD":
			b.WriteString(collPad(at.YearDay(), 3))
		case "HH":
			b.WriteString(collPad(at.Hour(), 2))
		case "mm":
			b.WriteString(collPad(at.Minute(), 2))
		case "ss":
			b.WriteString(collPad(at.Second(), 2))
		default:
			if f[i] >= 'a' && f[i] <= 'z' || f[i] >= 'A' && f[i] <= 'Z' {
				return "", fmt.Errorf("%w: date field %q", errCollRender, run)
			}
			b.WriteString(run)
		}
		i = j
	}
	return b.String(), nil
}

func collPad(n, width int) string {
	s := strconv.Itoa(n)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// collParse reads a template written in the subset the harness models:
// text, "@@", and @<...> parts named seq, date, checksum, or variables and
// setters, with unquoted arguments or value="...".
func collParse(src string) (*collTemplate, error) {
	t := &collTemplate{}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			t.parts = append(t.parts, collPart{kind: collText, text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "@@"):
			text.WriteByte('@')
			i += 2
			continue
		case !strings.HasPrefix(src[i:], "@<"):
			text.WriteByte(src[i])
			i++
			continue
		}
		end := strings.IndexByte(src[i:], '>')
		if end < 0 {
			return nil, fmt.Errorf("unclosed @< at byte %d", i)
		}
		fields := strings.Split(src[i+2:i+end], ",")
		i += end + 1
		flush()
		name := strings.TrimSpace(fields[0])
		args := map[string]string{}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if strings.HasPrefix(v, `"`) {
				u, err := strconv.Unquote(v)
				if err != nil {
					return nil, fmt.Errorf("%s: %s=%s: %v", name, k, v, err)
				}
				v = u
			}
			args[k] = v
		}
		take := func(k string) string { v := args[k]; delete(args, k); return v }
		var p collPart
		switch {
		case name == "seq":
			p.kind = collSeq
			if w := take("width"); w != "" {
				n, err := strconv.Atoi(w)
				if err != nil {
					return nil, err
				}
				p.width = n
			}
			p.grow = take("overflow") == "grow"
			p.keyVar, p.reset = take("key"), take("reset")
		case name == "date":
			p.kind, p.format, p.tz = collDate, take("format"), take("tz")
			if p.format == "" {
				p.format = "yyyyMMdd"
			}
		case name == "checksum":
			p.kind, p.algo, p.all = collChecksum, take("algo"), take("over") == "all"
		default:
			if v, ok := args["value"]; ok {
				p.kind, p.name, p.value = collSetter, name, v
				delete(args, "value")
				break
			}
			p.kind, p.name, p.chars = collVar, name, take("chars")
			if m := take("maxlen"); m != "" {
				n, err := strconv.Atoi(m)
				if err != nil {
					return nil, err
				}
				p.maxlen = n
			}
		}
		if len(args) > 0 {
			return nil, fmt.Errorf("%s: arguments the harness does not model: %v", name, args)
		}
		t.parts = append(t.parts, p)
	}
	flush()
	return t, nil
}

// ---------------------------------------------------------------------------
// The random template generator.

var (
	collTextTokens = []string{"0", "1", "5", "9", "A", "B", "-", "_", "@"}
	collVarSpecs   = []collPart{
		{kind: collVar, name: "area"},
		{kind: collVar, name: "area", maxlen: 2},
		{kind: collVar, name: "unit", chars: "0-9"},
		{kind: collVar, name: "unit", chars: "0-9", maxlen: 3},
		{kind: collVar, name: "code", chars: "A-Z", maxlen: 2},
		{kind: collVar, name: "code", chars: "A-Z"},
		{kind: collVar, name: "x", maxlen: 1},
		{kind: collVar, name: "x", chars: "0-9A-Z", maxlen: 1},
		{kind: collVar, name: "ownerKey"},
		{kind: collVar, name: "ownerKey", chars: "A-Z0-9"},
	}
	collSetterNames  = []string{"ownerKey", "tag", "zone"}
	collSetterValues = []string{"", "1", "12", "0", "A", "SN", "AB", "B1"}
	collDateFormats  = []string{"yyyy", "yy", "MM", "dd", "yyMM", "yyyyMMdd", "yyMMdd", "MMdd", "HH", "yyQ", "yyyyQ", "yyDDD", "yyyyDDD", "DDD", "YYww", "YYYYww", "ww", "yyyyMMddHH", "yyDDDHH"}
	collAlgos        = []string{"luhn", "damm", "verhoeff", "mod11-2", "mod97-10"}
	collResets       = []string{"day", "month", "year", "quarter", "week", "hour"}
)

func collPick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// collRandomTemplate returns the template of seed and stream: 2 to 6 parts,
// at least one sequence, at most two.
func collRandomTemplate(seed, stream uint64) *collTemplate {
	r := rand.New(rand.NewPCG(seed, stream))
	t := &collTemplate{origin: fmt.Sprintf("seed %d/%d", seed, stream)}
	kindOf := map[string]collKind{} // name -> collVar or collSetter
	n := 2 + r.IntN(5)
	for len(t.parts) < n {
		var p collPart
		switch x := r.IntN(100); {
		case x < 22:
			p.kind = collText
			for k := 1 + r.IntN(3); k > 0; k-- {
				p.text += collPick(r, collTextTokens)
			}
		case x < 44:
			p = collPick(r, collVarSpecs)
			if k, ok := kindOf[p.name]; ok && k == collSetter {
				continue
			}
			if _, ok := kindOf[p.name]; ok {
				if r.IntN(4) != 0 {
					continue
				}
				for _, q := range t.parts { // a variable printed twice keeps its spec
					if q.kind == collVar && q.name == p.name {
						p = q
					}
				}
			}
		case x < 54:
			p = collPart{kind: collSetter, name: collPick(r, collSetterNames), value: collPick(r, collSetterValues)}
			if p.name == "ownerKey" && r.IntN(2) == 0 {
				p.value = "SN"
			}
			if _, ok := kindOf[p.name]; ok {
				continue // one setter per name; never a setter and a variable of one name
			}
		case x < 66:
			p = collPart{kind: collDate, format: collPick(r, collDateFormats)}
			if r.IntN(4) == 0 {
				p.tz = "Asia/Shanghai"
			}
		case x < 74:
			p = collPart{kind: collChecksum, algo: collPick(r, collAlgos), all: r.IntN(3) == 0}
		default:
			if t.count(collSeq) == 2 {
				continue
			}
			p = collPart{kind: collSeq}
		}
		if p.kind == collVar || p.kind == collSetter {
			kindOf[p.name] = p.kind
		}
		t.parts = append(t.parts, p)
	}
	if t.count(collSeq) == 0 {
		i := r.IntN(len(t.parts) + 1)
		t.parts = slices.Insert(t.parts, i, collPart{kind: collSeq})
	}
	names := make([]string, 0, len(kindOf))
	for name := range kindOf {
		names = append(names, name)
	}
	sort.Strings(names)
	for i := range t.parts {
		p := &t.parts[i]
		if p.kind != collSeq {
			continue
		}
		p.width = []int{0, 0, 1, 2, 2, 3, 3}[r.IntN(7)]
		p.grow = p.width > 0 && r.IntN(4) == 0
		if len(names) > 0 && r.IntN(3) == 0 {
			p.keyVar = collPick(r, names)
		} else if r.IntN(40) == 0 {
			p.keyVar = "area"
		}
		if r.IntN(4) == 0 {
			p.reset = collPick(r, collResets)
		}
	}
	return t
}

// ---------------------------------------------------------------------------
// Brute force.

// collDraw is one call of the sequence: the counter key asked for and the
// number returned.
type collDraw struct {
	key string
	seq int64
}

// collInput is one call of NextAt and what the sequence was asked for.
type collInput struct {
	vars  map[string]string
	at    time.Time
	draws []collDraw
}

func (in *collInput) String() string {
	var b strings.Builder
	b.WriteString("{vars ")
	keys := make([]string, 0, len(in.vars))
	for k := range in.vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", k, in.vars[k])
	}
	fmt.Fprintf(&b, "; at %s; draws", in.at.Format(time.RFC3339))
	for _, d := range in.draws {
		fmt.Fprintf(&b, " (key %q, %d)", d.key, d.seq)
	}
	b.WriteString("}")
	return b.String()
}

// collGen is a sequence.Gen that returns the values queued by load and
// records the key of every call. It implements neither sequence.Binder nor
// sequence.Batcher, so the Generator asks it for every key.
type collGen struct {
	mu    sync.Mutex
	queue []int64
	draws []collDraw
	extra int // calls with nothing queued
}

var errCollNothingQueued = errors.New("collision test: no sequence value queued")

func (g *collGen) Next(_ context.Context, key string) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.extra++
		return 0, errCollNothingQueued
	}
	v := g.queue[0]
	g.queue = g.queue[1:]
	g.draws = append(g.draws, collDraw{key, v})
	return v, nil
}

func (g *collGen) load(vals []int64) {
	g.mu.Lock()
	g.queue = append(g.queue[:0], vals...)
	g.draws = g.draws[:0]
	g.mu.Unlock()
}

func (g *collGen) taken() []collDraw {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.draws)
}

func collRange(lo, hi int64) []int64 {
	var out []int64
	for n := lo; n <= hi; n++ {
		out = append(out, n)
	}
	return out
}

var (
	// collVarValues are tried for every variable, most useful first (the
	// budget may cut the tail).
	collVarValues = []string{"1", "11", "A", "AB", "5", "50", "1-", "-", "0", "01", "_", "@", "B1", "111", "1A", "BA"}
	// collInstants, most useful first.
	collInstants = []time.Time{
		time.Date(2017, 3, 4, 10, 0, 0, 0, time.UTC),
		time.Date(2117, 3, 4, 10, 0, 0, 0, time.UTC),
		time.Date(2017, 3, 4, 23, 30, 0, 0, time.UTC), // 2017-03-05 07:30 in Asia/Shanghai
		time.Date(17, 3, 4, 10, 0, 0, 0, time.UTC),
		time.Date(2017, 3, 5, 10, 0, 0, 0, time.UTC),
		time.Date(2017, 4, 3, 10, 0, 0, 0, time.UTC),
		time.Date(1999, 12, 31, 10, 0, 0, 0, time.UTC),
	}
	collSeqValues1 = append(collRange(1, 40), 99, 100, 101, 111, 999, 1000)
	collSeqValues2 = append(collRange(1, 12), 99, 100, 101)
	collSeqValuesN = collRange(1, 6)
)

// collPlan is the inputs tried on one template.
type collPlan struct {
	names    []string   // per-call variables
	values   [][]string // per variable
	instants []time.Time
	seqs     [][]int64 // one value per sequence part, in template order
}

func (pl *collPlan) size() int {
	n := len(pl.instants) * len(pl.seqs)
	for _, v := range pl.values {
		n *= len(v)
	}
	return n
}

func collMakePlan(t *collTemplate, budget int) *collPlan {
	pl := &collPlan{names: t.varNames()}
	for _, name := range pl.names {
		var vs []string
		for _, v := range collVarValues {
			if t.allows(name, v) {
				vs = append(vs, v)
			}
		}
		pl.values = append(pl.values, vs)
	}
	minInstants := 1
	pl.instants = collInstants[:2]
	if t.timeDependent() {
		pl.instants, minInstants = collInstants, 4
	}
	per := collSeqValues1
	switch nseq := t.count(collSeq); {
	case nseq == 2:
		per = collSeqValues2
	case nseq > 2:
		per = collSeqValuesN
	}
	pl.seqs = [][]int64{{}}
	for range t.count(collSeq) {
		var next [][]int64
		for _, prefix := range pl.seqs {
			for _, v := range per {
				next = append(next, append(slices.Clone(prefix), v))
			}
		}
		pl.seqs = next
	}
	// Over budget: fewer instants, then fewer values of the variable with
	// the most, then fewer sequence values.
	for pl.size() > budget {
		if len(pl.instants) > minInstants {
			pl.instants = pl.instants[:len(pl.instants)-1]
			continue
		}
		longest := -1
		for i, v := range pl.values {
			if len(v) > 3 && (longest < 0 || len(v) > len(pl.values[longest])) {
				longest = i
			}
		}
		if longest >= 0 {
			pl.values[longest] = pl.values[longest][:len(pl.values[longest])-1]
			continue
		}
		if len(pl.seqs) > 12 {
			pl.seqs = pl.seqs[:len(pl.seqs)*3/4]
			continue
		}
		break
	}
	return pl
}

type collCollision struct {
	number string
	a, b   collInput
}

// collResult is what one template's brute force found.
type collResult struct {
	tpl      *collTemplate
	src      string
	newErr   error
	refusal  collRefusal
	renders  int
	printed  int
	distinct int
	// collisions counts numbers printed again by another (key, value)
	// combination; examples keeps the first few.
	collisions int
	examples   []collCollision
	// problems of an accepted template other than collisions: Validate
	// failures, disagreement with the reference renderer, Parse failures,
	// draws that are not what was queued.
	validate, reference, parse, draws []string
	nValidate, nReference, nParse     int
	varRejected, overflow             int
	other                             map[string]int // other errors from NextAt, by message shape
	otherExample                      []string
	dur, newDur                       time.Duration // the whole run; New
	panicked                          string        // a panic in New, NextAt, Validate or Parse, with its stack
	// Refused templates: the repeats the search over the hand renderer
	// finds (see collModelCollisions).
	modelCollisions int
	modelExample    string
}

func collAppend(list []string, s string) []string {
	if len(list) < 3 {
		list = append(list, s)
	}
	return list
}

func collSameDraws(a, b []collDraw) bool { return slices.Equal(a, b) }

var collDigits = regexp.MustCompile(`[0-9]+|"[^"]*"`)

// collShape turns an error message into a category: numbers and quoted text
// blanked, the template (a parser.Error's caret lines) dropped.
func collShape(err error) string {
	msg := err.Error()
	var pe *parser.Error
	if errors.As(err, &pe) {
		msg = pe.Msg
	}
	msg, _, _ = strings.Cut(msg, "\n")
	msg, _, _ = strings.Cut(msg, ";")
	msg, _, _ = strings.Cut(msg, " {") // a witness's inputs
	msg = collDigits.ReplaceAllString(msg, "_")
	if len(msg) > 110 {
		msg = msg[:110] + "..."
	}
	return msg
}

// collRun compiles t and, when New accepts it, renders it over the plan's
// inputs.
func collRun(t *collTemplate, budget int) *collResult {
	start := time.Now()
	res := &collResult{tpl: t, src: t.String(), other: map[string]int{}}
	defer func() {
		res.dur = time.Since(start)
		if r := recover(); r != nil {
			res.panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	gen := &collGen{}
	g, err := sn.New(res.src, sn.WithSequence("seq", gen))
	res.newDur = time.Since(start)
	if err != nil {
		res.newErr = err
		if collRefuseHook != nil {
			res.refusal = collRefuseHook(t, err)
		}
		res.modelCollisions, res.modelExample = collModelCollisions(t, budget/3)
		return res
	}
	nseq := t.count(collSeq)
	pl := collMakePlan(t, budget)
	seen := make(map[string]*collInput, pl.size())
	bg := context.Background()
	idx := make([]int, len(pl.names)) // odometer over variable values
	for {
		var vars map[string]string
		if len(pl.names) > 0 {
			vars = make(map[string]string, len(pl.names))
			for i, name := range pl.names {
				vars[name] = pl.values[i][idx[i]]
			}
		}
		for _, at := range pl.instants {
		values:
			for k, combo := range pl.seqs {
				gen.load(combo)
				s, err := first(g.Issue(bg, sn.Request{At: at, Vars: vars}))
				res.renders++
				if err != nil {
					switch {
					case errors.Is(err, sn.ErrVarInvalid), errors.Is(err, sn.ErrVarMissing):
						res.varRejected++
						if k == 0 {
							break values // the values are refused whatever the number
						}
					case errors.Is(err, sn.ErrOverflow):
						res.overflow++
					default:
						shape := collShape(err)
						res.other[shape]++
						res.otherExample = collAppend(res.otherExample, fmt.Sprintf("%v: %v", (&collInput{vars: vars, at: at}).String(), err))
					}
					continue
				}
				res.printed++
				in := &collInput{vars: vars, at: at, draws: gen.taken()}
				if got := collValues(in.draws); !slices.Equal(got, combo) {
					res.draws = collAppend(res.draws, fmt.Sprintf("%q: sequence gave %v, the engine drew %v (%d parts)", s, combo, got, nseq))
				}
				if want, err := t.render(vars, at, combo); err != nil || want != s {
					res.nReference++
					res.reference = collAppend(res.reference, fmt.Sprintf("printed %q for %v; by hand: %q, %v", s, in, want, err))
				}
				if err := g.Validate(s); err != nil {
					res.nValidate++
					res.validate = collAppend(res.validate, fmt.Sprintf("Validate(%q) for %v: %v", s, in, err))
				}
				if collParseHook != nil {
					if err := collParseHook(g, t, s, in); err != nil {
						res.nParse++
						res.parse = collAppend(res.parse, fmt.Sprintf("for %v: %v", in, err))
					}
				}
				prev, ok := seen[s]
				if !ok {
					seen[s] = in
					continue
				}
				if !collSameDraws(prev.draws, in.draws) {
					res.collisions++
					if len(res.examples) < 3 {
						res.examples = append(res.examples, collCollision{s, *prev, *in})
					}
				}
			}
		}
		// Advance the odometer.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(pl.values[i]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	res.distinct = len(seen)
	if gen.extra > 0 {
		res.draws = collAppend(res.draws, fmt.Sprintf("the engine called Next %d times with nothing queued (more calls than sequence parts)", gen.extra))
	}
	return res
}

func collValues(ds []collDraw) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.seq
	}
	return out
}

// collRunAll runs the templates on all CPUs; results are in template order.
func collRunAll(tpls []*collTemplate, budget int) []*collResult {
	out := make([]*collResult, len(tpls))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i] = collRun(tpls[i], budget)
			}
		})
	}
	for i := range tpls {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// collFixed reads the hand-written templates.
func collFixed(t testing.TB) []*collTemplate {
	const path = "testdata/collision/templates.txt"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*collTemplate
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		tp, err := collParse(s)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		if tp.String() != s {
			t.Fatalf("%s:%d: write the template as the harness prints it: %s", path, line, tp.String())
		}
		tp.origin = fmt.Sprintf("%s:%d", path, line)
		out = append(out, tp)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// collSummary aggregates results.
type collSummary struct {
	templates, accepted, refused          int
	colliding, collisions                 int
	renders, printed                      int
	validate, reference, parse, draws     int
	ambiguous, witnessChecked, witnessBad int
	ambiguousSimple, witnessCheckedSimple int
	witnessUnrendered                     int
	refusedRepeat                         int // refused templates in which the hand-renderer search finds a repeat
	refusedBy, otherErrs                  map[string]int
	refusedByRepeat                       map[string]int
	panics                                int
	newTime, runTime                      time.Duration // summed over templates: in New; in all
	slowest                               []*collResult // slowest New first
}

// collReport fails t for every collision and problem in results, and logs
// a summary.
func collReport(t testing.TB, results []*collResult, maxShown int) collSummary {
	t.Helper()
	sum := collSummary{refusedBy: map[string]int{}, refusedByRepeat: map[string]int{}, otherErrs: map[string]int{}}
	shown := 0
	show := func() bool { shown++; return shown <= maxShown }
	var colliding []string
	for _, r := range results {
		sum.templates++
		if r.panicked != "" {
			sum.panics++
			if show() {
				t.Errorf("template %s (%s): panic: %s", r.src, r.tpl.origin, r.panicked)
			}
			continue
		}
		if r.newErr != nil {
			sum.refused++
			sum.refusedBy[collShape(r.newErr)]++
			if r.modelCollisions > 0 {
				sum.refusedRepeat++
				sum.refusedByRepeat[collShape(r.newErr)]++
			}
			if r.refusal.ambiguous {
				sum.ambiguous++
				if r.refusal.simple {
					sum.ambiguousSimple++
				}
			}
			if r.refusal.unrendered != "" {
				sum.witnessUnrendered++
				if sum.witnessUnrendered <= 5 {
					t.Logf("template %s (%s): refused with a witness that does not check out (not a failure): %s", r.src, r.tpl.origin, r.refusal.unrendered)
				}
			}
			if r.refusal.checked {
				sum.witnessChecked++
				if r.refusal.simple {
					sum.witnessCheckedSimple++
				}
			}
			if r.refusal.problem != "" {
				sum.witnessBad++
				if show() {
					t.Errorf("template %s (%s): refused with a witness that does not check out: %s\n\terror: %v", r.src, r.tpl.origin, r.refusal.problem, r.newErr)
				}
			}
			continue
		}
		sum.accepted++
		sum.renders += r.renders
		sum.printed += r.printed
		for k, v := range r.other {
			sum.otherErrs[k] += v
		}
		if r.collisions > 0 {
			sum.colliding++
			sum.collisions += r.collisions
			colliding = append(colliding, fmt.Sprintf("%s  (%d)", r.src, r.collisions))
			if show() {
				var b strings.Builder
				fmt.Fprintf(&b, "template %s (%s) accepted, but %d numbers were printed by two (key, value) combinations:", r.src, r.tpl.origin, r.collisions)
				for _, c := range r.examples[:min(2, len(r.examples))] {
					fmt.Fprintf(&b, "\n\t%q printed by\n\t\t%v and\n\t\t%v", c.number, &c.a, &c.b)
				}
				t.Error(b.String())
			}
		}
		for _, p := range []struct {
			what  string
			n     int
			list  []string
			total *int
		}{
			{"Validate refused a number it printed", r.nValidate, r.validate, &sum.validate},
			{"the number differs from the template rendered by hand", r.nReference, r.reference, &sum.reference},
			{"Parse", r.nParse, r.parse, &sum.parse},
			{"the sequence draws", len(r.draws), r.draws, &sum.draws},
		} {
			if p.n == 0 {
				continue
			}
			*p.total += p.n
			if show() {
				t.Errorf("template %s (%s): %s (%d times), e.g.\n\t%s", r.src, r.tpl.origin, p.what, p.n, strings.Join(p.list, "\n\t"))
			}
		}
	}
	for _, r := range results {
		sum.newTime += r.newDur
		sum.runTime += r.dur
	}
	sum.slowest = slices.Clone(results)
	slices.SortFunc(sum.slowest, func(a, b *collResult) int { return int(b.newDur - a.newDur) })
	sum.slowest = sum.slowest[:min(3, len(sum.slowest))]
	if shown > maxShown {
		t.Errorf("... and %d more problems not shown", shown-maxShown)
	}
	if len(colliding) > 0 {
		if len(colliding) > 60 {
			colliding = append(colliding[:60], fmt.Sprintf("... and %d more", len(colliding)-60))
		}
		t.Logf("accepted templates that print a repeat (collisions):\n\t%s", strings.Join(colliding, "\n\t"))
	}
	return sum
}

func (s collSummary) log(t testing.TB) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "templates %d: accepted %d, refused %d", s.templates, s.accepted, s.refused)
	if collRefuseHook != nil {
		fmt.Fprintf(&b, " (ErrAmbiguous %d, witness rendered back %d, unverified witness of a template with dates or checks that does not check out %d; of those without date/checksum parts: ErrAmbiguous %d, witness rendered back %d; bad refusals %d)",
			s.ambiguous, s.witnessChecked, s.witnessUnrendered, s.ambiguousSimple, s.witnessCheckedSimple, s.witnessBad)
	}
	fmt.Fprintf(&b, "\nrefused templates in which a search over the hand renderer (which knows maxlen and chars only) finds a repeat: %d of %d", s.refusedRepeat, s.refused)
	fmt.Fprintf(&b, "\naccepted templates that print a repeat: %d (%d colliding numbers)", s.colliding, s.collisions)
	if s.panics > 0 {
		fmt.Fprintf(&b, "\npanics: %d", s.panics)
	}
	fmt.Fprintf(&b, "\ntime summed over templates: %v, of which in New %v; slowest New:", s.runTime.Round(time.Millisecond), s.newTime.Round(time.Millisecond))
	for _, r := range s.slowest {
		fmt.Fprintf(&b, " %v %s;", r.newDur.Round(time.Microsecond), r.src)
	}
	fmt.Fprintf(&b, "\nnumbers rendered %d, printed %d; Validate failures %d, hand-render mismatches %d, draw mismatches %d", s.renders, s.printed, s.validate, s.reference, s.draws)
	if collParseHook != nil {
		fmt.Fprintf(&b, ", Parse failures %d", s.parse)
	}
	b.WriteString("\nrefused because (count, how many of them the hand-renderer search shows can repeat, message):")
	for _, kv := range collSorted(s.refusedBy) {
		fmt.Fprintf(&b, "\n\t%5d %5d  %s", kv.n, s.refusedByRepeat[kv.k], kv.k)
	}
	if len(s.otherErrs) > 0 {
		b.WriteString("\nerrors from NextAt on accepted templates (not failures):")
		for _, kv := range collSorted(s.otherErrs) {
			fmt.Fprintf(&b, "\n\t%5d  %s", kv.n, kv.k)
		}
	}
	t.Log(b.String())
}

type collKV struct {
	k string
	n int
}

func collSorted(m map[string]int) []collKV {
	var out []collKV
	for k, n := range m {
		out = append(out, collKV{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].k < out[j].k
	})
	return out
}

// TestCollision generates -collision.n random templates (seed
// -collision.seed) plus the hand-written ones and fails for every accepted
// template that prints one string for two (counter key, number) pairs, and
// for every number Validate refuses.
func TestCollision(t *testing.T) {
	start := time.Now()
	tpls := collFixed(t)
	fixed := len(tpls)
	for i := range *collisionN {
		tpls = append(tpls, collRandomTemplate(*collisionSeed, uint64(i)))
	}
	results := collRunAll(tpls, *collisionBudget)
	sum := collReport(t, results, 25)
	sum.log(t)
	t.Logf("%d hand-written + %d random templates (seed %d), budget %d numbers each, in %v",
		fixed, *collisionN, *collisionSeed, *collisionBudget, time.Since(start).Round(time.Millisecond))
}

// TestCollisionHarness checks the harness itself: the generator is
// deterministic and writes templates the model parser reads back, and the
// brute force finds the repeat of a template known to print one.
func TestCollisionHarness(t *testing.T) {
	for i := range 200 {
		a, b := collRandomTemplate(42, uint64(i)), collRandomTemplate(42, uint64(i))
		if a.String() != b.String() {
			t.Fatalf("template %d: not deterministic: %s vs %s", i, a, b)
		}
		p, err := collParse(a.String())
		if err != nil || p.String() != a.String() {
			t.Fatalf("template %s: parsed back as %v, %v", a, p, err)
		}
	}
	// The search, run on the hand renderer alone, finds the repeat of a
	// template that prints one and none in a template that cannot.
	for src, want := range map[string]bool{
		"@<area>@<seq>":                        true,
		"@<seq>@<seq>":                         true,
		"@<date, format=yy>@<seq, reset=year>": true,
		"@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=2, reset=day>": false,
		"@<area>-@<seq, width=3>":                           false,
		"@<ownerKey>-@<seq, width=2>@<checksum, algo=luhn>": false,
	} {
		tp, err := collParse(src)
		if err != nil {
			t.Fatal(err)
		}
		if n, first := collModelCollisions(tp, 3000); (n > 0) != want {
			t.Errorf("the search on the hand renderer finds %d repeats in %s (%s); want some: %v", n, tp, first, want)
		}
	}
}

// collModelCollisions runs the brute force on the hand renderer alone, with
// the counter key modelled from the template (per-call key variables,
// reset buckets), and returns the number of collisions and the first one.
// It does not know the values the engine refuses beyond maxlen and chars
// (separators, for instance), so a repeat it finds in a refused template
// shows that the template needed the refusal or such a rule.
func collModelCollisions(t *collTemplate, budget int) (int, string) {
	pl := collMakePlan(t, budget)
	type rec struct {
		id    string
		vars  map[string]string
		at    time.Time
		combo []int64
	}
	desc := func(r rec) string {
		return fmt.Sprintf("%v numbers %v", &collInput{vars: r.vars, at: r.at}, r.combo)
	}
	seen := map[string]rec{}
	n, first := 0, ""
	keyVars := t.keyVars()
	idx := make([]int, len(pl.names))
	var id strings.Builder
	for {
		vars := map[string]string{}
		for i, name := range pl.names {
			vars[name] = pl.values[i][idx[i]]
		}
		for _, at := range pl.instants {
			buckets := strings.Join(t.buckets(at), "|")
			for _, combo := range pl.seqs {
				s, err := t.render(vars, at, combo)
				if err != nil {
					continue
				}
				id.Reset()
				for _, v := range combo {
					id.WriteString(strconv.FormatInt(v, 10) + ",")
				}
				for _, k := range keyVars {
					id.WriteString("|" + k + "=" + strconv.Quote(vars[k]))
				}
				id.WriteString("|" + buckets)
				cur := rec{id.String(), vars, at, combo}
				prev, ok := seen[s]
				switch {
				case !ok:
					seen[s] = cur
				case prev.id != cur.id:
					if n == 0 {
						first = fmt.Sprintf("%q printed by %s and %s", s, desc(prev), desc(cur))
					}
					n++
				}
			}
		}
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(pl.values[i]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return n, first
		}
	}
}

// collTells reports whether a date format prints enough to tell the
// periods of reset apart (a two-digit year within its century).
func collTells(f, reset string) bool {
	has := func(run string) bool { return strings.Contains(f, run) }
	y := has("yy")
	day := y && (has("MM") && has("dd") || has("DDD"))
	switch reset {
	case "year":
		return y
	case "quarter":
		return y && (has("Q") || has("MM"))
	case "month":
		return y && has("MM")
	case "week":
		return has("YY") && has("ww")
	case "day":
		return day
	case "hour":
		return day && has("HH")
	}
	return false
}

// buckets returns the reset period of each sequence part with reset= at
// instant at, in the time zone of the first date part that prints the
// period (UTC when none does).
func (t *collTemplate) buckets(at time.Time) []string {
	var out []string
	for _, p := range t.parts {
		if p.kind != collSeq || p.reset == "" {
			continue
		}
		loc := time.UTC
		for _, d := range t.parts {
			if d.kind == collDate && collTells(d.format, p.reset) {
				if d.tz != "" {
					loc, _ = time.LoadLocation(d.tz)
				}
				break
			}
		}
		y, m, d := at.In(loc).Date()
		switch p.reset {
		case "year":
			out = append(out, fmt.Sprintf("%04d", y))
		case "quarter":
			out = append(out, fmt.Sprintf("%04d-Q%d", y, (m+2)/3))
		case "month":
			out = append(out, fmt.Sprintf("%04d-%02d", y, m))
		case "week":
			wy, w := at.In(loc).ISOWeek()
			out = append(out, fmt.Sprintf("%04d-W%02d", wy, w))
		case "hour":
			out = append(out, fmt.Sprintf("%04d-%02d-%02dT%02d", y, m, d, at.In(loc).Hour()))
		default:
			out = append(out, fmt.Sprintf("%04d-%02d-%02d", y, m, d))
		}
	}
	return out
}

// FuzzCollision brute-forces one random template per input: the template of
// collRandomTemplate(seed, stream), the same as template number stream of
// TestCollision run with -collision.seed=seed.
func FuzzCollision(f *testing.F) {
	for i := range uint64(6) {
		f.Add(uint64(1), i)
	}
	f.Add(uint64(7), uint64(7))
	f.Fuzz(func(t *testing.T, seed, stream uint64) {
		r := collRun(collRandomTemplate(seed, stream), *collisionBudget)
		collReport(t, []*collResult{r}, 5)
	})
}
