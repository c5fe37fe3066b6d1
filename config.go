package sn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
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

// ConfigError reports a problem in a [Config]. Its message names the file
// and the line, when the Config was read from one, the template and the
// field:
//
//	sn: config: sn.yaml: line 9: template "orders": sequence.backend "mysql": unknown (want memory, bolt, redis, redis-strict)
type ConfigError struct {
	// File is the path given to [LoadConfig], or "".
	File string
	// Line is the line of the offending field in the text that
	// [ParseConfig] or [LoadConfig] read (the template's own line when the
	// field is not in the text), or 0 when unknown: a Config built in Go,
	// a problem of the whole file, a failed Opener.
	Line int
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

// Error returns "sn: config: FILE: line N: template NAME: " followed by
// Err's message, leaving out what is unknown.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("sn: config: ")
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Template != "" {
		fmt.Fprintf(&b, "template %q: ", e.Template)
	}
	b.WriteString(e.Err.Error())
	return b.String()
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
//
// A Config read by [ParseConfig] or [LoadConfig] also remembers, in
// unexported fields, the file and the line of each field, so that the
// errors of [Config.Validate] and [Config.Build] say where the problem is
// (compare such Configs with go-cmp's cmpopts.IgnoreUnexported).
type Config struct {
	// Templates maps a name to a template. Names are made of letters,
	// digits, "_", "-" and ".".
	// default: none; a Config needs at least one template.
	Templates map[string]TemplateConfig `json:"templates" yaml:"templates"`

	// Store is the sequence configuration of every template, field by
	// field, unless the template's own Sequence sets the field.
	// default: the memory backend.
	Store SequenceConfig `json:"store" yaml:"store"`

	src *source // where the Config was read from, or nil
}

// source is where a Config was read from: the file and the line of each
// field, by the template and field that a ConfigError names.
type source struct {
	file  string
	lines map[fieldAt]int
}

// fieldAt names a field as a ConfigError does: a template ("" for the
// store and the top level) and a field path ("" for the template itself).
type fieldAt struct{ template, field string }

// locate sets e's File and Line from s, which may be nil.
func (s *source) locate(e *ConfigError) {
	if s == nil {
		return
	}
	e.File = s.file
	if line, ok := s.lines[fieldAt{e.Template, e.Field}]; ok {
		e.Line = line
	} else if e.Template != "" {
		e.Line = s.lines[fieldAt{e.Template, ""}]
	}
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
// "yml"). A key that names no field of the Config, a key given twice and a
// value of the wrong type are errors: each a *[ConfigError] with its line
// and, inside a template, the template and the field; all of them are
// returned, joined. ParseConfig does not check the values themselves nor
// the templates: call [Config.Validate] for that ([Config.Build] does).
func ParseConfig(data []byte, format string) (*Config, error) {
	return parseConfig(data, format, "")
}

// LoadConfig reads the Config in the file at path, whose extension (.json,
// .yaml or .yml) gives the format, as for [ParseConfig]. Its errors, and
// those of [Config.Validate] and [Config.Build] on the Config, name the
// file.
func LoadConfig(path string) (*Config, error) {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	switch strings.ToLower(format) {
	case "json", "yaml", "yml":
	default:
		return nil, &ConfigError{File: path, Err: fmt.Errorf("unknown extension %q (want .json, .yaml or .yml)", filepath.Ext(path))}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return parseConfig(data, format, path)
}

func parseConfig(data []byte, format, file string) (*Config, error) {
	c := &Config{}
	var keys []keyPos
	var errs []*ConfigError
	switch strings.ToLower(format) {
	case "json":
		keys, errs = decodeJSON(data, c)
	case "yaml", "yml":
		keys, errs = decodeYAML(data, c)
	default:
		errs = []*ConfigError{{Err: fmt.Errorf("unknown format %q (want json or yaml)", format)}}
	}
	if len(errs) > 0 {
		joined := make([]error, len(errs))
		for i, e := range errs {
			e.File = file
			joined[i] = e
		}
		if len(joined) == 1 {
			return nil, joined[0]
		}
		return nil, errors.Join(joined...)
	}
	c.src = &source{file: file, lines: map[fieldAt]int{}}
	for _, k := range keys {
		if _, seen := c.src.lines[k.field()]; !seen {
			c.src.lines[k.field()] = k.line
		}
	}
	return c, nil
}

// keyPos is a key of a config file and where it is.
type keyPos struct {
	path  []string // the keys from the top of the document
	line  int      // the key's line
	end   int64    // JSON: the offset just past the key
	vline int      // YAML: the line of the key's value
	value string   // YAML: the value, when it is a scalar
	tag   string   // YAML: the value's tag, such as "!!float"
}

// field names the key as a ConfigError does.
func (k keyPos) field() fieldAt {
	if len(k.path) >= 2 && k.path[0] == "templates" {
		return fieldAt{k.path[1], strings.Join(k.path[2:], ".")}
	}
	return fieldAt{"", strings.Join(k.path, ".")}
}

// structAt returns the struct type that the mapping at path decodes into,
// or nil.
func structAt(path []string) reflect.Type {
	switch {
	case len(path) == 0:
		return reflect.TypeFor[Config]()
	case len(path) == 1 && path[0] == "store", len(path) == 3 && path[0] == "templates" && path[2] == "sequence":
		return reflect.TypeFor[SequenceConfig]()
	case len(path) == 2 && path[0] == "templates":
		return reflect.TypeFor[TemplateConfig]()
	}
	return nil
}

// fieldNames returns the sorted names in a file of the fields of struct t.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// checkKeys reports each key that names no field of the Config and each key
// given twice in one mapping (which a JSON decoder takes silently, the last
// winning).
func checkKeys(keys []keyPos) []*ConfigError {
	var errs []*ConfigError
	first := map[string]int{} // the line of each path
	dups := map[string]bool{} // the paths given twice
	for _, k := range keys {
		at := k.field()
		bad := func(format string, a ...any) {
			errs = append(errs, &ConfigError{Line: k.line, Template: at.template, Field: at.field, Err: fmt.Errorf(format, a...)})
		}
		id := strings.Join(k.path, "\x00")
		inDup := false
		for i := 1; i < len(k.path); i++ {
			inDup = inDup || dups[strings.Join(k.path[:i], "\x00")]
		}
		if inDup {
			continue // inside a key given twice, which is reported once
		}
		if line, dup := first[id]; dup {
			dups[id] = true
			if at.field == "" {
				bad("defined twice (first at line %d)", line)
			} else {
				bad("%s: given twice (first at line %d)", at.field, line)
			}
			continue
		}
		first[id] = k.line
		parent, name := k.path[:len(k.path)-1], k.path[len(k.path)-1]
		t := structAt(parent)
		if t == nil {
			continue
		}
		known := fieldNames(t)
		if !slices.Contains(known, name) {
			bad("unknown field %q (known: %s)", at.field, strings.Join(known, ", "))
			continue
		}
		// A YAML decoder truncates 1.5 into a whole number.
		if f, ok := fieldByName(t, name); ok && f.Type.Kind() == reflect.Int64 && k.tag == "!!float" {
			if v, err := strconv.ParseFloat(k.value, 64); err == nil && v != math.Trunc(v) {
				bad("%s: want a whole number, found %s", at.field, k.value)
			}
		}
	}
	return errs
}

// fieldByName returns the field of struct t named name in a file.
func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// configTypes are the types that the values of a config file decode into.
var configTypes = []reflect.Type{
	reflect.TypeFor[Config](), reflect.TypeFor[SequenceConfig](), reflect.TypeFor[TemplateConfig](),
	reflect.TypeFor[map[string]TemplateConfig](), reflect.TypeFor[string](), reflect.TypeFor[int64](), reflect.TypeFor[float64](),
}

// want says how a value of the type named typ is written in a file; a
// mapping is called object in JSON.
func want(typ, mapping string) string {
	i := slices.IndexFunc(configTypes, func(t reflect.Type) bool { return t.String() == typ })
	if i < 0 {
		return typ
	}
	switch t := configTypes[i]; t.Kind() {
	case reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Map:
		return mapping + " of templates by name"
	default:
		return mapping + " with the fields " + strings.Join(fieldNames(t), ", ")
	}
}

// typeError reports a value of the wrong type for key k, or for the whole
// document when k is nil.
func typeError(k *keyPos, line int, want, found string) *ConfigError {
	e := &ConfigError{Line: line, Err: fmt.Errorf("want %s, found %s", want, found)}
	if k != nil {
		at := k.field()
		e.Template, e.Field = at.template, at.field
		if at.field != "" {
			e.Err = fmt.Errorf("%s: %w", at.field, e.Err)
		}
	}
	return e
}

func decodeJSON(data []byte, c *Config) ([]keyPos, []*ConfigError) {
	lineAt := func(off int64) int {
		return 1 + bytes.Count(data[:min(max(off, 0), int64(len(data)))], []byte("\n"))
	}
	keys, err := jsonKeys(data)
	for i := range keys {
		keys[i].line = lineAt(keys[i].end)
	}
	if err == nil { // otherwise the decoder says what is wrong
		if errs := checkKeys(keys); len(errs) > 0 {
			return nil, errs
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(c)
	if err == io.EOF {
		return nil, []*ConfigError{{Err: errors.New("empty document")}}
	}
	if err == nil {
		if _, extra := dec.Token(); extra == io.EOF {
			return keys, nil
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
		// The value ends at te.Offset (objects and arrays: starts); its
		// key is the last one before.
		var k *keyPos
		for i := range keys {
			if keys[i].end <= te.Offset {
				k = &keys[i]
			}
		}
		var found string
		switch {
		case te.Value == "array":
			found = "a list"
		case te.Value == "object":
			found = "an object"
		case k != nil && k.end <= te.Offset: // the literal, between the key and te.Offset
			found = strings.TrimLeft(string(data[k.end:te.Offset]), " \t\r\n:")
		}
		if found == "" {
			found = "a " + strings.Fields(te.Value + " value")[0] // a string, a number, a bool
		}
		return nil, []*ConfigError{typeError(k, lineAt(te.Offset), want(te.Type.String(), "an object"), found)}
	}
	return nil, []*ConfigError{{Line: lineAt(off), Err: errors.New(strings.TrimPrefix(err.Error(), "json: "))}}
}

// jsonKeys lists the object keys of the JSON value in data, in order, with
// the names of fields in lower case as the decoder matches them.
func jsonKeys(data []byte) ([]keyPos, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []keyPos
	var value func(path []string) error
	value = func(path []string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		for i := 0; dec.More(); i++ {
			p := append(slices.Clip(path), fmt.Sprintf("[%d]", i))
			if d == '{' {
				tok, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := tok.(string)
				if len(path) != 1 || path[0] != "templates" { // not a template name
					key = strings.ToLower(key)
				}
				p[len(p)-1] = key
				keys = append(keys, keyPos{path: p, end: dec.InputOffset()})
			}
			if err := value(p); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return keys, value(nil)
}

var (
	yamlLine         = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlUnknownField = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	yamlWrongType    = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
)

func decodeYAML(data []byte, c *Config) ([]keyPos, []*ConfigError) {
	keys, err := yamlKeys(data)
	if err == nil { // otherwise the decoder says what is wrong
		if errs := checkKeys(keys); len(errs) > 0 {
			return nil, errs
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err = dec.Decode(c)
	if err == io.EOF {
		return nil, nil // an empty document: Validate says what is missing
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		errs := make([]*ConfigError, len(te.Errors))
		for i, msg := range te.Errors {
			errs[i] = yamlError(msg, keys)
		}
		return nil, errs
	}
	if err != nil {
		return nil, []*ConfigError{yamlError(err.Error(), nil)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, []*ConfigError{{Err: errors.New("more than one YAML document")}}
	}
	return keys, nil
}

// yamlError turns a message of the YAML decoder into a ConfigError,
// naming the key of a value of the wrong type.
func yamlError(msg string, keys []keyPos) *ConfigError {
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &ConfigError{Err: errors.New(strings.TrimPrefix(msg, "yaml: "))}
	}
	line, _ := strconv.Atoi(m[1])
	msg = m[2]
	if m := yamlUnknownField.FindStringSubmatch(msg); m != nil {
		return &ConfigError{Line: line, Err: fmt.Errorf("unknown field %q", m[1])}
	}
	m = yamlWrongType.FindStringSubmatch(msg)
	if m == nil {
		return &ConfigError{Line: line, Err: errors.New(msg)}
	}
	tag, value, into := m[1], m[2], m[3]
	// The key is the one whose value is on that line; in a flow mapping,
	// the first with that tag and (perhaps shortened) value.
	var k *keyPos
	for i := range keys {
		ki := &keys[i]
		if ki.vline != line {
			continue
		}
		if ki.tag == tag && strings.HasPrefix(ki.value, strings.TrimSuffix(value, "...")) {
			k = ki
			break
		}
		if k == nil {
			k = ki
		}
	}
	if k != nil && value != "" {
		value = k.value
	}
	found := map[string]string{"!!str": strconv.Quote(value), "!!map": "a mapping", "!!seq": "a list"}[tag]
	if found == "" {
		found = value
	}
	return typeError(k, line, want(into, "a mapping"), found)
}

// yamlKeys lists the mapping keys of the first YAML document in data, in
// order, following aliases and merge keys ("<<") as the decoder does.
func yamlKeys(data []byte) ([]keyPos, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var keys []keyPos
	walking := map[*yaml.Node]bool{} // against aliases that contain themselves
	// walk lists the keys of the mapping n at path but those in skip, and
	// returns the names it listed.
	var walk func(n *yaml.Node, path []string, skip map[string]bool) map[string]bool
	walk = func(n *yaml.Node, path []string, skip map[string]bool) map[string]bool {
		for n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		listed := map[string]bool{}
		if n == nil || len(path) >= 4 || walking[n] { // nothing deeper is a field of a Config
			return listed
		}
		walking[n] = true
		defer delete(walking, n)
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for i, c := range n.Content {
				p := path
				if n.Kind == yaml.SequenceNode {
					p = append(slices.Clip(path), fmt.Sprintf("[%d]", i))
				}
				walk(c, p, nil)
			}
			return listed
		case yaml.MappingNode:
		default:
			return listed
		}
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				merges = append(merges, v)
				continue
			}
			listed[k.Value] = true
			if skip[k.Value] {
				continue
			}
			p := append(slices.Clip(path), k.Value)
			kv := keyPos{path: p, line: k.Line}
			if rv := v; rv != nil {
				for rv.Kind == yaml.AliasNode && rv.Alias != nil {
					rv = rv.Alias
				}
				kv.vline, kv.value, kv.tag = rv.Line, rv.Value, rv.Tag
			}
			keys = append(keys, kv)
			walk(v, p, nil)
		}
		// Keys of the mapping win over merged ones, earlier merges over
		// later ones.
		for _, m := range merges {
			for m != nil && m.Kind == yaml.AliasNode {
				m = m.Alias
			}
			each := []*yaml.Node{m}
			if m != nil && m.Kind == yaml.SequenceNode {
				each = m.Content
			}
			for _, e := range each {
				for name := range walk(e, path, union(skip, listed)) {
					listed[name] = true
				}
			}
		}
		return listed
	}
	walk(&doc, nil, nil)
	return keys, nil
}

// union returns a new set of the names in a and b.
func union(a, b map[string]bool) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
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
	for _, e := range errs {
		c.src.locate(e.(*ConfigError))
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
