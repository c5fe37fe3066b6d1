package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/lang"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
)

// The catalog. A store keeps one entry per template drawn from it (see
// *catalog.Catalog). The entry's spec is what the proof needs without the
// template's code: the canonical text, which names are sequences, and for
// each expression that is not built in the language it prints. A template
// is proven against every entry before its first number (Plan.Enroll),
// under CheckSet's rule for templates on one store: no string printed by
// two different (counter key, number) pairs.

// SpecVersion is the version of the Spec format this package writes.
const SpecVersion = 1

// Spec is what a store's catalog keeps of a template, as JSON.
type Spec struct {
	V        int        `json:"v"`
	Template string     `json:"template"`        // the canonical text
	Seqs     []string   `json:"seqs"`            // the names that are sequences
	Exprs    []ExprSpec `json:"exprs,omitempty"` // the expressions that are not built in
	// Keys are the check values of the obfuscation keys, by name.
	Keys map[string]string `json:"keys,omitempty"`
	// Numbering says how the sequences turn counters into numbers, when
	// not one to one (sequence.Numbering): a snowflake layout, a
	// Balanced's interleaving. Templates of different numbering never
	// share counters.
	Numbering string `json:"numbering,omitempty"`
	// Prefix and Suffix are the literal text every number starts and
	// ends with; Head the characters of its first positions (see
	// candidates): what spares proving against most entries.
	Prefix string      `json:"prefix,omitempty"`
	Suffix string      `json:"suffix,omitempty"`
	Head   [][][2]rune `json:"head,omitempty"`
}

// ExprSpec is the language of one expression of a Spec that is not built
// in (a user's expression, a checksum of a user's algorithm): a part with
// this name and these arguments prints what Pattern matches, or without
// one, any text of at most MaxLen bytes (-1: unbounded).
type ExprSpec struct {
	Name    string            `json:"name"`
	Args    map[string]string `json:"args,omitempty"`
	Pattern *string           `json:"pattern,omitempty"`
	MaxLen  int               `json:"maxlen"`
	Order   expression.Order  `json:"order"`
}

// Spec returns what a catalog keeps of the plan.
func (pl *Plan) Spec() Spec {
	sp := Spec{V: SpecVersion, Template: pl.canonical, Seqs: []string{}, Prefix: literalEnd(pl, false), Suffix: literalEnd(pl, true), Numbering: pl.numbering()}
	for _, s := range head(pl, 24) {
		rs := make([][2]rune, len(s))
		for i, r := range s {
			rs[i] = [2]rune{r.Lo, r.Hi}
		}
		sp.Head = append(sp.Head, rs)
	}
	for i := range pl.parts {
		p := &pl.parts[i]
		switch {
		case p.Kind == Seq:
			if !slices.Contains(sp.Seqs, p.Name) {
				sp.Seqs = append(sp.Seqs, p.Name)
			}
			if p.Obfuscate != "" {
				if sp.Keys == nil {
					sp.Keys = map[string]string{}
				}
				sp.Keys[p.Obfuscate] = p.keyCheck
			}
		case p.Kind == Custom || p.Kind == Checksum && p.untrusted:
			es := ExprSpec{Name: p.Name, Args: p.args, MaxLen: p.max, Order: p.order}
			if _, ok := p.expr.(expression.Patterner); ok || p.Kind == Checksum {
				pat := p.pattern
				es.Pattern = &pat
			}
			sp.Exprs = append(sp.Exprs, es)
		}
	}
	slices.Sort(sp.Seqs)
	return sp
}

// numbering describes how the plan's sequences number (see
// Spec.Numbering): "" when every one draws counters one to one, else, per
// sequence part, its name and the numberings of the Gens under it.
func (pl *Plan) numbering() string {
	var parts []string
	any := false
	for _, i := range pl.seqs {
		p := &pl.parts[i]
		var ns []string
		sequence.Walk(p.gen, func(g sequence.Gen) {
			if n, ok := g.(sequence.Numbering); ok {
				ns = append(ns, n.Numbering())
			}
		})
		any = any || len(ns) > 0
		parts = append(parts, p.Name+": "+strings.Join(ns, " over "))
	}
	if !any {
		return ""
	}
	return strings.Join(parts, "; ")
}

// Entry returns the plan's catalog entry, named name: the spec as JSON, and
// its hash as the ID.
func (pl *Plan) Entry(name string) catalog.Entry {
	b := marshalSpec(pl.Spec())
	sum := sha256.Sum256(b)
	return catalog.Entry{ID: hex.EncodeToString(sum[:16]), Name: name, Spec: string(b), By: by}
}

// marshalSpec returns sp as JSON, "<" and ">" as they are.
func marshalSpec(sp Spec) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sp); err != nil {
		panic(err) // strings, ints and maps of strings marshal
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// by says who enrolls: host, program and process.
var by = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s %s pid %d", host, filepath.Base(os.Args[0]), os.Getpid())
}()

// standIn is a sequence of a template rebuilt from a catalog: it is never
// drawn from.
type standIn struct{}

func (standIn) Next(context.Context, string) (int64, error) {
	return 0, errors.New("a template rebuilt from a store's catalog issues nothing")
}

// standInExpr is an expression of a template rebuilt from a catalog: its
// recorded language, never evaluated.
type standInExpr struct{ es ExprSpec }

func (x standInExpr) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return dst, errors.New("a template rebuilt from a store's catalog prints nothing")
}
func (x standInExpr) Order() expression.Order { return x.es.Order }
func (x standInExpr) MaxLen() int             { return x.es.MaxLen }

type standInPattern struct{ standInExpr }

func (x standInPattern) Pattern() string { return *x.es.Pattern }

// ReadSpec reads a catalog entry's spec.
func ReadSpec(spec string) (Spec, error) {
	r, err := recordedOf(spec)
	if err != nil {
		return Spec{}, err
	}
	return r.spec, nil
}

// CheckCatalog proves the plan against the entries of a store's catalog,
// as Enroll does, without recording it.
func (pl *Plan) CheckCatalog(entries []catalog.Entry) error {
	name, keys := pl.src, map[string][]byte(nil)
	if pl.enroll != nil {
		keys = pl.enroll.keys
		if pl.enroll.name != "" {
			name = pl.enroll.name
		}
	}
	return CheckCatalog(pl, name, entries, keys)
}

// recorded is an entry of a catalog as the proof reads it, cached by its
// spec: its ends, and its plan once rebuilt.
type recorded struct {
	spec Spec
	ends ends
	once sync.Once
	plan *Plan
	err  error
}

var recordedCache sync.Map // spec text -> *recorded

func recordedOf(spec string) (*recorded, error) {
	if r, ok := recordedCache.Load(spec); ok {
		return r.(*recorded), nil
	}
	r := &recorded{}
	if err := json.Unmarshal([]byte(spec), &r.spec); err != nil {
		return nil, fmt.Errorf("its spec is not JSON: %v", err)
	}
	if r.spec.V != SpecVersion || r.spec.Template == "" {
		return nil, fmt.Errorf("its spec is of version %d, and this program reads version %d: upgrade it", r.spec.V, SpecVersion)
	}
	r.ends = ends{prefix: r.spec.Prefix, suffix: r.spec.Suffix}
	for _, rs := range r.spec.Head {
		s := make(lang.Set, len(rs))
		for i, x := range rs {
			s[i] = lang.Range{Lo: x[0], Hi: x[1]}
		}
		r.ends.head = append(r.ends.head, s)
	}
	got, _ := recordedCache.LoadOrStore(spec, r)
	return got.(*recorded), nil
}

// rebuild compiles the recorded template with stand-ins for its sequences
// and its expressions that are not built in; keys are this process's
// obfuscation keys, used where their check values match the recorded ones.
func (r *recorded) rebuild(keys map[string][]byte) (*Plan, error) {
	r.once.Do(func() { r.plan, r.err = Rebuild(r.spec, keys) })
	return r.plan, r.err
}

// Rebuild compiles the template of a catalog's spec, as the proof reads
// it: with stand-ins for its sequences and for its expressions that are
// not built in, which print the recorded languages. keys are the
// process's obfuscation keys; one whose check value is not the recorded
// one is replaced by a stand-in, which the proof treats as another
// permutation.
func Rebuild(sp Spec, keys map[string][]byte) (*Plan, error) {
	seqs := map[string]sequence.Gen{}
	for _, n := range sp.Seqs {
		seqs[n] = standIn{}
	}
	exprs := map[string]expression.Factory{"date": builtin.NewDate, "checksum": builtin.NewChecksum, "random": builtin.NewRandom}
	for _, es := range sp.Exprs {
		prev := exprs[es.Name]
		exprs[es.Name] = func(args expression.Args) (expression.Expression, error) {
			if maps.Equal(args, expression.Args(es.Args)) || len(args) == 0 && len(es.Args) == 0 {
				if es.Pattern != nil {
					return standInPattern{standInExpr{es}}, nil
				}
				return standInExpr{es}, nil
			}
			if prev != nil {
				return prev(args)
			}
			return nil, fmt.Errorf("no recorded language for these arguments")
		}
	}
	ks := map[string][]byte{}
	for name, check := range sp.Keys {
		if k, ok := keys[name]; ok && keyCheck(k) == check {
			ks[name] = k
		} else {
			ks[name] = []byte("sn stand-in for a key whose check value is " + check)
		}
	}
	return Compile(sp.Template, Config{Seqs: seqs, Exprs: exprs, Keys: ks, Recorded: true})
}

// CatalogError is the refusal of a template that collides with one in a
// store's catalog.
type CatalogError struct {
	Name  string        // the refused template's name, or its text
	Entry catalog.Entry // the entry it collides with
	Text  string        // the entry's canonical text
	Err   error         // the witness (an *Ambiguity), or why the proof failed
	// Why says, when the two number differently, that they share no
	// counter: "it numbers by snowflake ..., this one by counters".
	Why string
}

// Error names both templates, the entry's first use and the witness.
func (e *CatalogError) Error() string {
	what := fmt.Sprintf("template %q", e.Name)
	other := fmt.Sprintf("%q", e.Text)
	if e.Entry.Name != "" {
		other = fmt.Sprintf("%q (%s)", e.Entry.Name, e.Text)
	}
	first := ""
	if !e.Entry.First.IsZero() {
		first = " since " + e.Entry.First.UTC().Format(time.RFC3339)
	}
	if e.Entry.By != "" {
		first += " by " + e.Entry.By
	}
	why := ""
	if e.Why != "" {
		why = " (" + e.Why + ")"
	}
	return fmt.Sprintf("sn: %s collides with %s, in the store's catalog%s%s: %v; numbers of that series exist: give this template other literal text (another prefix), or issue from the recorded one",
		what, other, first, why, e.Err)
}

// Unwrap returns Err.
func (e *CatalogError) Unwrap() error { return e.Err }

// CheckCatalog proves pl, named name, against the entries of a store's
// catalog: nil when no string pl prints is printed by an entry's template
// for another counter key or number. keys are the process's obfuscation
// keys. An entry that cannot be read or rebuilt is an error: what it
// printed cannot be proven against.
func CheckCatalog(pl *Plan, name string, entries []catalog.Entry, keys map[string][]byte) error {
	e := make([]ends, 0, len(entries)+1)
	recs := make([]*recorded, len(entries))
	for i, en := range entries {
		r, err := recordedOf(en.Spec)
		if err != nil {
			return &CatalogError{Name: name, Entry: en, Text: en.ID, Err: fmt.Errorf("the entry cannot be read: %w", err)}
		}
		recs[i] = r
		e = append(e, r.ends)
	}
	me := len(entries)
	e = append(e, endsOf(pl))
	spec, numbering := string(marshalSpec(pl.Spec())), pl.numbering() // once, not per entry
	for _, pair := range candidatesOf(e) {
		if pair[1] != me {
			continue
		}
		r, en := recs[pair[0]], entries[pair[0]]
		if en.Spec == spec {
			continue // this template, recorded under another ID (a store's own)
		}
		other, err := r.rebuild(keys)
		if err != nil {
			return &CatalogError{Name: name, Entry: en, Text: r.spec.Template, Err: fmt.Errorf("the entry's template cannot be rebuilt here, so nothing can be proven against it: %w", err)}
		}
		same := r.spec.Numbering == numbering // one numbering: the same counters
		if err := checkPair(Member{Name: name, Plan: pl}, Member{Name: describe(en, r.spec.Template), Plan: other}, same); err != nil {
			var amb *Ambiguity
			if errors.As(err, &amb) {
				err = amb
			}
			ce := &CatalogError{Name: name, Entry: en, Text: r.spec.Template, Err: err}
			if !same {
				ce.Why = "they share no counter: it numbers by " + orCounters(r.spec.Numbering) + ", this one by " + orCounters(numbering)
			}
			return ce
		}
	}
	return nil
}

func orCounters(numbering string) string {
	if numbering == "" {
		return "counters"
	}
	return numbering
}

// describe names an entry in a witness.
func describe(e catalog.Entry, text string) string {
	if e.Name != "" {
		return e.Name
	}
	return text
}

// Enroll enrolls the plan in the catalog of every store it draws from,
// once: the first draw calls it, and so may a caller that wants the
// refusal at start-up. An error leaves it to be tried again.
func (pl *Plan) Enroll(ctx context.Context) error {
	if pl.enroll == nil || pl.enroll.done.Load() {
		return nil
	}
	en := pl.enroll
	en.mu.Lock()
	defer en.mu.Unlock()
	if en.done.Load() {
		return nil
	}
	// The check values of the obfuscation keys first, as a draw checks
	// them: another key under a name the store knows is refused as that
	// (ErrKey), not as a template that collides with itself.
	for _, i := range pl.seqs {
		if err := pl.parts[i].Bind(ctx); err != nil {
			return err
		}
	}
	entry := pl.Entry(en.name)
	for _, c := range en.catalogs {
		_, err := c.Enroll(ctx, entry, pl.CheckCatalog)
		var ce *CatalogError
		switch {
		case err == nil, errors.Is(err, errors.ErrUnsupported):
		case errors.As(err, &ce):
			return err
		default:
			return fmt.Errorf("sn: enrolling the template in its store's catalog: %w", err)
		}
	}
	en.done.Store(true)
	return nil
}

// Catalogs returns the catalogs of the stores the plan draws from.
func (pl *Plan) Catalogs() []*catalog.Catalog {
	if pl.enroll == nil {
		return nil
	}
	return pl.enroll.catalogs
}

// enrollment is a plan's state of enrollment in its stores' catalogs.
type enrollment struct {
	name     string
	keys     map[string][]byte
	catalogs []*catalog.Catalog
	mu       sync.Mutex
	done     atomic.Bool
}

// catalogs finds the catalogs of the stores the plan's sequences draw
// from: every Gen under them (sequence.Walk) that is a *catalog.Catalog.
func (c *compiler) catalogs() {
	pl := c.pl
	var cs []*catalog.Catalog
	for _, i := range pl.seqs {
		sequence.Walk(pl.parts[i].gen, func(g sequence.Gen) {
			if cat := catalog.Of(g); cat != nil {
				cs = append(cs, cat) // twice when two parts share a store: the second finds the entry
			}
		})
	}
	if len(cs) == 0 {
		return
	}
	pl.enroll = &enrollment{name: c.cfg.Name, keys: c.cfg.Keys, catalogs: cs}
}

// endsOf returns what candidates compares of pl.
func endsOf(pl *Plan) ends {
	return ends{literalEnd(pl, false), literalEnd(pl, true), head(pl, 24)}
}
