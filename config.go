package sn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/sequence"
)

// Backends a [SequenceConfig] can name. Package sn implements only
// BackendMemory; the others are opened by an [Opener], such as the one in
// package github.com/sngen/sn/backend.
const (
	// BackendMemory counts in process memory (sequence.Memory): numbers
	// restart with the process. For tests and examples.
	BackendMemory = "memory"
	// BackendBolt reserves blocks from an embedded bbolt file (boltseq)
	// through a sequence.Segment.
	BackendBolt = "bolt"
	// BackendRedis reserves blocks from Redis (redisseq's allocator)
	// through a sequence.Segment.
	BackendRedis = "redis"
	// BackendRedisStrict issues every number from a Redis counter, in the
	// order of the calls across all processes, refilled from a bolt file
	// (redisseq's strict counter).
	BackendRedisStrict = "redis-strict"
)

var backends = []string{BackendMemory, BackendBolt, BackendRedis, BackendRedisStrict}

// ErrConfig is wrapped by every error that [ParseConfig], [LoadConfig],
// [Config.Validate] and [Config.Build] return for a bad configuration;
// errors.As with a *[ConfigError] says where.
var ErrConfig = errors.New("sn: bad config")

// ConfigError reports a problem in a [Config]. Its message names the
// template and the field:
//
//	sn: config: template "orders": sequence.backend "mysql": unknown (want memory, bolt, redis, redis-strict)
type ConfigError struct {
	// Template is the name of the template at fault, or "" for the store
	// section and for the file as a whole.
	Template string
	// Field is the offending field, as spelt in the file ("template",
	// "floor", "sequence.step", "store.backend"), or "" when the problem is
	// not one field's (a syntax error, a failed Opener).
	Field string
	// Err describes the problem. For a template that does not compile it is
	// the error of [New], which wraps [ErrTemplate].
	Err error
}

// Error returns "sn: config: template NAME: " followed by Err's message.
func (e *ConfigError) Error() string {
	if e.Template == "" {
		return "sn: config: " + e.Err.Error()
	}
	return fmt.Sprintf("sn: config: template %q: %v", e.Template, e.Err)
}

// Unwrap returns ErrConfig and Err.
func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// Config declares named templates and where their numbers come from, as
// read from a JSON or YAML file by [LoadConfig]:
//
//	store:              # defaults for every template
//	  backend: bolt
//	  path: /var/lib/myapp/sn.db
//	  step: 100
//	templates:
//	  orders:
//	    template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"
//	    floor: 20000    # continue above the old system's numbers
//	  tickets:
//	    template: "QJ@<date, format=yyyyMMdd>@<seq, width=5, reset=day>"
//	    sequence:
//	      backend: memory
//
// Each template draws from the sequence "seq" ("@<seq, ...>" in its text).
// Templates whose sequences share a store and a counter key (the same
// ownerKey) share a counter. [Config.Build] turns a Config into a [Set] of
// Generators.
type Config struct {
	// Templates maps a name to a template. Names are made of letters,
	// digits, "_", "-" and ".".
	// default: none; a Config needs at least one template.
	Templates map[string]TemplateConfig `json:"templates" yaml:"templates"`

	// Store is the sequence configuration of every template, field by
	// field, unless the template's own Sequence sets the field.
	// default: the memory backend.
	Store SequenceConfig `json:"store" yaml:"store"`
}

// TemplateConfig is one named template of a [Config].
type TemplateConfig struct {
	// Template is the template text, such as "SN-@<seq, width=8>".
	// default: none; it is required.
	Template string `json:"template" yaml:"template"`

	// Sequence overrides [Config.Store] for this template: each field that
	// is set here wins over the store's.
	// default: the store's settings.
	Sequence SequenceConfig `json:"sequence" yaml:"sequence"`

	// Floor, when positive, makes every number of the template greater
	// than Floor: [Config.Build] raises the counter to Floor through
	// sequence.Floorer (a floor never lowers a counter). It is meant for
	// migrations ("continue above the old system's numbers") and needs a
	// template whose counter key is fixed: no reset=, no key=, no per-call
	// ownerKey.
	// default: 0, no floor.
	Floor int64 `json:"floor,omitempty" yaml:"floor,omitempty"`
}

// SequenceConfig says where a template's numbers come from. A zero field
// takes the default in its comment; fields a backend does not use must be
// left zero in a template's own Sequence.
type SequenceConfig struct {
	// Backend is one of memory, bolt, redis and redis-strict (see
	// [BackendMemory] and the constants after it).
	// default: "memory".
	Backend string `json:"backend,omitempty" yaml:"backend,omitempty"`

	// Path is the bbolt file of the bolt backend, and the durable store
	// behind the redis-strict backend's counter. How a relative path is
	// resolved is up to the [Opener].
	// default: none; required by bolt and redis-strict.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`

	// URL is the Redis server of the redis and redis-strict backends, such
	// as "redis://localhost:6379/0"; the [Opener] documents the schemes it
	// accepts.
	// default: none; required by redis and redis-strict.
	URL string `json:"url,omitempty" yaml:"url,omitempty"`

	// Prefix is put before every Redis key the redis backends write.
	// default: the redis backend's own default.
	Prefix string `json:"prefix,omitempty" yaml:"prefix,omitempty"`

	// Step is the size of the first block a segment reserves for a
	// counter key (bolt and redis), or of each refill of the strict
	// counter (redis-strict).
	// default: sequence.DefaultStep (1000).
	Step int64 `json:"step,omitempty" yaml:"step,omitempty"`

	// MinStep is the smallest block a segment shrinks to.
	// default: Step.
	MinStep int64 `json:"min_step,omitempty" yaml:"min_step,omitempty"`

	// MaxStep is the largest block a segment grows to.
	// default: max(Step, 1000000).
	MaxStep int64 `json:"max_step,omitempty" yaml:"max_step,omitempty"`

	// Prefetch is the share of a block used before the next block is
	// fetched in the background, in (0, 1).
	// default: 0.2.
	Prefetch float64 `json:"prefetch,omitempty" yaml:"prefetch,omitempty"`

	// Target is how long one block should last, as a Go duration ("1m",
	// "30s"); a segment adapts its step to it.
	// default: "1m".
	Target string `json:"target,omitempty" yaml:"target,omitempty"`

	// FetchTimeout bounds each call to the store, as a Go duration.
	// default: "5s".
	FetchTimeout string `json:"fetch_timeout,omitempty" yaml:"fetch_timeout,omitempty"`
}

// SegmentOptions returns the sequence.SegmentOptions that sc describes,
// with zero fields left zero (for sequence.NewSegment's defaults). It
// returns an error naming each field that is out of range or, for Target
// and FetchTimeout, not a positive Go duration.
func (sc SequenceConfig) SegmentOptions() (sequence.SegmentOptions, error) {
	o := sequence.SegmentOptions{Step: sc.Step, MinStep: sc.MinStep, MaxStep: sc.MaxStep, Prefetch: sc.Prefetch}
	o.Target, _ = time.ParseDuration(sc.Target)
	o.FetchTimeout, _ = time.ParseDuration(sc.FetchTimeout)
	var errs []error
	for _, p := range sc.problems("") {
		if p.Field != "backend" {
			errs = append(errs, p.Err)
		}
	}
	return o, errors.Join(errs...)
}

// problems checks the fields of sc one by one and each against the others,
// naming them prefix+field.
func (sc SequenceConfig) problems(prefix string) []*ConfigError {
	var out []*ConfigError
	bad := func(field, format string, a ...any) {
		out = append(out, &ConfigError{Field: prefix + field, Err: fmt.Errorf(prefix+field+" "+format, a...)})
	}
	if sc.Backend != "" && !slices.Contains(backends, sc.Backend) {
		bad("backend", "%q: unknown (want %s)", sc.Backend, strings.Join(backends, ", "))
	}
	steps := []struct {
		field string
		v     int64
	}{{"step", sc.Step}, {"min_step", sc.MinStep}, {"max_step", sc.MaxStep}}
	for _, f := range steps {
		if f.v < 0 {
			bad(f.field, "%d: want 1 or more (or 0 for the default)", f.v)
		}
	}
	if sc.MinStep > 0 && sc.MaxStep > 0 && sc.MinStep > sc.MaxStep {
		bad("min_step", "%d: above max_step %d", sc.MinStep, sc.MaxStep)
	}
	if sc.Step > 0 && sc.MinStep > 0 && sc.Step < sc.MinStep {
		bad("step", "%d: below min_step %d", sc.Step, sc.MinStep)
	}
	if sc.Step > 0 && sc.MaxStep > 0 && sc.Step > sc.MaxStep {
		bad("step", "%d: above max_step %d", sc.Step, sc.MaxStep)
	}
	if sc.Prefetch != 0 && !(sc.Prefetch > 0 && sc.Prefetch < 1) {
		bad("prefetch", "%v: want a share between 0 and 1, such as 0.2", sc.Prefetch)
	}
	for _, d := range []struct{ field, text string }{{"target", sc.Target}, {"fetch_timeout", sc.FetchTimeout}} {
		if d.text == "" {
			continue
		}
		if v, err := time.ParseDuration(d.text); err != nil || v <= 0 {
			bad(d.field, "%q: want a positive duration such as \"1m\" or \"30s\"", d.text)
		}
	}
	return out
}

// fields lists the fields of sc that are set, by their file names.
func (sc SequenceConfig) fields() []string {
	var out []string
	v := reflect.ValueOf(sc)
	t := v.Type()
	for i := range t.NumField() {
		if !v.Field(i).IsZero() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	return out
}

// over returns base with every field set in sc replacing base's.
func (base SequenceConfig) over(sc SequenceConfig) SequenceConfig {
	b := reflect.ValueOf(&base).Elem()
	v := reflect.ValueOf(sc)
	for i := range v.NumField() {
		if !v.Field(i).IsZero() {
			b.Field(i).Set(v.Field(i))
		}
	}
	if base.Backend == "" {
		base.Backend = BackendMemory
	}
	return base
}

// uses lists, per backend, the fields it reads besides "backend".
var uses = map[string][]string{
	BackendMemory:      nil,
	BackendBolt:        {"path", "step", "min_step", "max_step", "prefetch", "target", "fetch_timeout"},
	BackendRedis:       {"url", "prefix", "step", "min_step", "max_step", "prefetch", "target", "fetch_timeout"},
	BackendRedisStrict: {"url", "prefix", "path", "step"},
}

// Sequence returns the sequence configuration of template name: the
// store's, with the fields the template sets replaced, and the backend
// defaulting to memory. ok is false when there is no such template.
func (c *Config) Sequence(name string) (sc SequenceConfig, ok bool) {
	t, ok := c.Templates[name]
	if !ok {
		return SequenceConfig{}, false
	}
	return c.Store.over(t.Sequence), true
}

// Names returns the sorted names of the templates.
func (c *Config) Names() []string { return sortedKeys(c.Templates) }

// ParseConfig decodes a Config from data in format "json" or "yaml" (or
// "yml"). A field the Config does not have is an error, with its line when
// the decoder tells it; so is a value of the wrong type. ParseConfig does
// not check the templates themselves: call [Config.Validate] for that
// ([Config.Build] does).
func ParseConfig(data []byte, format string) (*Config, error) {
	c := &Config{}
	var err error
	switch strings.ToLower(format) {
	case "json":
		err = decodeJSON(data, c)
	case "yaml", "yml":
		err = decodeYAML(data, c)
	default:
		return nil, &ConfigError{Err: fmt.Errorf("unknown format %q (want json or yaml)", format)}
	}
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return c, nil
}

// LoadConfig reads the Config in the file at path, whose extension (.json,
// .yaml or .yml) gives the format, as for [ParseConfig]. Error messages
// start with the path.
func LoadConfig(path string) (*Config, error) {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	switch strings.ToLower(format) {
	case "json", "yaml", "yml":
	default:
		return nil, &ConfigError{Err: fmt.Errorf("%s: unknown extension %q (want .json, .yaml or .yml)", path, filepath.Ext(path))}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	c, err := ParseConfig(data, format)
	if err != nil {
		ce := err.(*ConfigError)
		ce.Err = fmt.Errorf("%s: %w", path, ce.Err)
		return nil, ce
	}
	return c, nil
}

func decodeJSON(data []byte, c *Config) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(c)
	if err == io.EOF {
		return errors.New("empty document")
	}
	if err == nil {
		if _, extra := dec.Token(); extra == io.EOF {
			return nil
		}
		err = errors.New("json: data after the top-level object")
	}
	off := dec.InputOffset()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// The decoder reports the field once it has read the whole
		// document: find the key itself.
		if at, ok := unknownKey(json.NewDecoder(bytes.NewReader(data)), reflect.TypeFor[Config]()); ok {
			off = at
		}
	}
	line := 1 + bytes.Count(data[:min(max(off, 0), int64(len(data)))], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, strings.TrimPrefix(err.Error(), "json: "))
}

// unknownKey reads one JSON value meant for type t and returns the offset
// just past the first object key that t does not have.
func unknownKey(dec *json.Decoder, t reflect.Type) (int64, bool) {
	tok, err := dec.Token()
	if err != nil {
		return 0, false
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if d, ok := tok.(json.Delim); ok && d == '[' {
			for dec.More() {
				if off, found := unknownKey(dec, nil); found {
					return off, true
				}
			}
			dec.Token() // ']'
		}
		return 0, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, false
		}
		key, _ := tok.(string)
		var elem reflect.Type
		switch {
		case t == nil:
		case t.Kind() == reflect.Map:
			elem = t.Elem()
		case t.Kind() == reflect.Struct:
			f, ok := jsonField(t, key)
			if !ok {
				return dec.InputOffset(), true
			}
			elem = f.Type
		}
		if off, found := unknownKey(dec, elem); found {
			return off, true
		}
	}
	dec.Token() // '}'
	return 0, false
}

// jsonField finds the field of struct t that encoding/json decodes key
// into: an exact match of its name, else one that differs only in case.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			fold, found = f, true
		}
	}
	return fold, found
}

var yamlUnknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

func decodeYAML(data []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(c)
	if err == io.EOF {
		return nil // an empty document: Validate says what is missing
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = yamlUnknownField.ReplaceAllString(m, `unknown field "$1"`)
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return errors.New("more than one YAML document")
	}
	return nil
}

// Validate checks every template and sequence setting of c without opening
// any store, and returns all the problems it finds, joined, each a
// *[ConfigError] naming the template and the field. Templates are compiled
// with [New] given opts (as [Config.Build] would, with a placeholder
// sequence "seq"), so a bad template gives its caret excerpt:
//
//	sn: config: template "orders": sn: template: offset 7: seq: unknown argument "widht"
//		SN-@<seq, widht=8>
//		          ^
func (c *Config) Validate(opts ...Option) error {
	_, errs := c.compile(opts)
	return errors.Join(errs...)
}

// compiled is one template of a Config compiled against a placeholder.
type compiled struct {
	name  string
	text  string
	seq   SequenceConfig
	floor int64
	keys  []string // the fixed counter keys of "seq", for the floor
}

// compile validates c and returns its templates in name order.
func (c *Config) compile(opts []Option) ([]compiled, []error) {
	var errs []error
	bad := func(tpl, field string, format string, a ...any) {
		errs = append(errs, &ConfigError{Template: tpl, Field: field, Err: fmt.Errorf(format, a...)})
	}
	storeBad := c.Store.problems("store.")
	for _, e := range storeBad {
		errs = append(errs, e)
	}
	if len(c.Templates) == 0 {
		bad("", "templates", "no templates")
	}
	var out []compiled
	for _, name := range c.Names() {
		n0 := len(errs)
		t := c.Templates[name]
		if !validName(name) {
			bad(name, "", "bad name: want letters, digits, \"_\", \"-\" and \".\"")
		}
		own := t.Sequence
		sc := c.Store.over(own)
		ownBad := own.problems("sequence.")
		if len(ownBad) == 0 && len(storeBad) == 0 {
			ownBad = sc.problems("sequence.") // a field against the store's
		}
		for _, e := range ownBad {
			e.Template = name
			errs = append(errs, e)
		}
		if used, ok := uses[sc.Backend]; ok {
			for _, f := range own.fields() {
				if f != "backend" && !slices.Contains(used, f) {
					bad(name, "sequence."+f, "sequence.%s: not used by the %s backend", f, sc.Backend)
				}
			}
			if slices.Contains(used, "path") && sc.Path == "" {
				bad(name, "sequence.path", "sequence.path: the %s backend needs a file (set path here or in store)", sc.Backend)
			}
			if slices.Contains(used, "url") && sc.URL == "" {
				bad(name, "sequence.url", "sequence.url: the %s backend needs a Redis URL (set url here or in store)", sc.Backend)
			}
		}
		if t.Floor < 0 {
			bad(name, "floor", "floor %d: want 0 (none) or more", t.Floor)
		}
		if strings.TrimSpace(t.Template) == "" {
			bad(name, "template", "template: missing")
			continue
		}
		g, err := New(t.Template, append(slices.Clip(opts), WithSequence("seq", sequence.NewMemory()))...)
		if err != nil {
			errs = append(errs, &ConfigError{Template: name, Field: "template", Err: err})
			continue
		}
		keys, why := g.fixedKeys("seq")
		if !g.draws("seq") {
			bad(name, "template", "template %q: no @<seq> part; a configured template takes its numbers from the sequence seq", t.Template)
			continue
		}
		if t.Floor > 0 && keys == nil {
			bad(name, "floor", "floor: %s, so there is no single counter to raise", why)
		}
		if len(errs) == n0 {
			out = append(out, compiled{name: name, text: t.Template, seq: sc, floor: t.Floor, keys: keys})
		}
	}
	return out, errs
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// draws reports whether a sequence part of g is named seq.
func (g *Generator) draws(seq string) bool {
	for _, p := range g.prog.Parts() {
		if s, ok := p.Expr.(*expression.Seq); ok && s.Name == seq {
			return true
		}
	}
	return false
}

// fixedKeys returns the counter keys of the sequence parts named seq when
// none of them varies per call; otherwise nil and the reason.
func (g *Generator) fixedKeys(seq string) ([]string, string) {
	base := g.keyBase
	if base == "" {
		return nil, "the template's ownerKey is given per call"
	}
	parts := g.prog.Parts()
	var keys []string
	for _, p := range parts {
		s, ok := p.Expr.(*expression.Seq)
		if !ok || s.Name != seq {
			continue
		}
		switch {
		case s.Reset != expression.Never:
			return nil, fmt.Sprintf("the counter resets every %s", s.Reset)
		case s.KeyVar != "":
			return nil, fmt.Sprintf("the counter key depends on %s (key=%s)", s.KeyVar, s.KeyVar)
		}
		if k := s.KeyPattern(base); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, ""
}

// An Opener opens the sequence of the template named name, for the
// backends other than memory. sc is the template's effective sequence
// configuration ([Config.Sequence]). [Config.Build] calls it once per
// template, in name order, from one goroutine.
//
// The Gen is closed by [Set.Close] if it is an io.Closer; the io.Closer,
// when not nil, is closed after it: it releases what the Opener holds for
// that template (a share of a store file or a Redis client opened once for
// several templates). An Opener that cannot open sc.Backend returns an
// error saying so.
//
// Package github.com/sngen/sn/backend provides an Opener for bolt, redis
// and redis-strict.
type Opener func(ctx context.Context, name string, sc SequenceConfig) (sequence.Gen, io.Closer, error)

// Build validates c as [Config.Validate] does and returns a [Set] holding
// a Generator per template, compiled with opts and the template's sequence
// bound as "seq". Memory sequences are built here (one sequence.Memory for
// the whole Set, so templates with the same counter key share a counter);
// every other backend is opened by open, which may be nil when every
// template uses memory. Floors are then raised through sequence.Floorer.
//
// On error, everything opened so far is closed again. The caller closes
// the Set with [Set.Close].
func (c *Config) Build(ctx context.Context, open Opener, opts ...Option) (*Set, error) {
	tpls, errs := c.compile(opts)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := &Set{gens: make(map[string]*Generator, len(tpls))}
	mem := sequence.NewMemory()
	for _, t := range tpls {
		g, err := s.build(ctx, t, open, mem, opts)
		if err != nil {
			err = &ConfigError{Template: t.name, Err: err}
			if cerr := s.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
			return nil, err
		}
		s.gens[t.name] = g
		s.names = append(s.names, t.name)
	}
	return s, nil
}

func (s *Set) build(ctx context.Context, t compiled, open Opener, mem *sequence.Memory, opts []Option) (*Generator, error) {
	var gen sequence.Gen = mem
	if t.seq.Backend != BackendMemory {
		if open == nil {
			return nil, fmt.Errorf("%s sequence: Build was given no Opener (package github.com/sngen/sn/backend has one)", t.seq.Backend)
		}
		g, closer, err := open(ctx, t.name, t.seq)
		if closer != nil {
			s.closers = append(s.closers, closer)
		}
		if err == nil && g == nil {
			err = errors.New("the Opener returned a nil sequence")
		}
		if err != nil {
			return nil, fmt.Errorf("%s sequence: %w", t.seq.Backend, err)
		}
		s.addGen(g)
		gen = g
	}
	g, err := New(t.text, append(slices.Clip(opts), WithSequence("seq", gen))...)
	if err != nil {
		return nil, err
	}
	if t.floor > 0 {
		fl, ok := gen.(sequence.Floorer)
		if !ok {
			return nil, fmt.Errorf("floor: the %s sequence (%T) cannot raise a floor", t.seq.Backend, gen)
		}
		for _, k := range t.keys {
			if err := fl.Floor(ctx, k, t.floor); err != nil {
				return nil, fmt.Errorf("floor %d: %w", t.floor, err)
			}
		}
	}
	return g, nil
}

// Set is the Generators of a [Config], by template name, built by
// [Config.Build]. Its methods are safe for concurrent use, except that no
// Generator of the Set may be used once Close has been called.
type Set struct {
	gens    map[string]*Generator
	names   []string
	seqs    []sequence.Gen // opened sequences, in opening order
	closers []io.Closer    // released after the sequences
	close   sync.Once
}

func (s *Set) addGen(g sequence.Gen) {
	t := reflect.TypeOf(g)
	for _, o := range s.seqs {
		if reflect.TypeOf(o) == t && t.Comparable() && o == g {
			return
		}
	}
	s.seqs = append(s.seqs, g)
}

// Get returns the Generator of the template named name.
func (s *Set) Get(name string) (*Generator, bool) {
	g, ok := s.gens[name]
	return g, ok
}

// Names returns the sorted names of the templates.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Close closes, in the reverse order of opening, every sequence of the Set
// that is an io.Closer and then what the [Opener] asked to close, and
// returns their errors joined. Numbers reserved but not issued become gaps.
// Calling Close again does nothing and returns nil.
func (s *Set) Close() error {
	var err error
	s.close.Do(func() {
		var errs []error
		for i := len(s.seqs) - 1; i >= 0; i-- {
			if c, ok := s.seqs[i].(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
		for i := len(s.closers) - 1; i >= 0; i-- {
			errs = append(errs, s.closers[i].Close())
		}
		err = errors.Join(errs...)
	})
	return err
}
