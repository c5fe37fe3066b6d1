package config

// This file decodes a config file and remembers the line of each key, so
// that an Error can say where a field is; it also reports what the JSON
// and YAML decoders accept silently (a key given twice, 1.5 for a whole
// number) or describe in their own terms (Go types).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// source is where a Config was read from: the file and the line of each
// field, by the template and field that an Error names.
type source struct {
	file  string
	lines map[fieldAt]int
}

// fieldAt names a field as an Error does: a template ("" for the
// store and the top level) and a field path ("" for the template itself).
type fieldAt struct{ template, field string }

// locate sets e's File and Line from s, which may be nil.
func (s *source) locate(e *Error) {
	if s == nil {
		return
	}
	e.File = s.file
	// The field's line, or that of the nearest field around it in the
	// file ("sequence.balanced" for "sequence.balanced.members"), or the
	// template's.
	for field := e.Field; ; {
		if line, ok := s.lines[fieldAt{e.Template, field}]; ok {
			e.Line = line
			return
		}
		if field == "" {
			return
		}
		field = field[:max(strings.LastIndexAny(field, ".["), 0)]
	}
}

// parse decodes data in format, read from file ("" when not from a file).
func parse(data []byte, format, file string) (*Config, error) {
	c := &Config{}
	var keys []keyPos
	var errs []*Error
	switch strings.ToLower(format) {
	case "json":
		keys, errs = decodeJSON(data, c)
	case "yaml", "yml":
		keys, errs = decodeYAML(data, c)
	default:
		errs = []*Error{{Err: fmt.Errorf("unknown format %q (want json or yaml)", format)}}
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

// field names the key as an Error does.
func (k keyPos) field() fieldAt {
	if len(k.path) >= 2 && k.path[0] == "templates" {
		return fieldAt{k.path[1], joinPath(k.path[2:])}
	}
	return fieldAt{"", joinPath(k.path)}
}

// joinPath spells a path of keys as an Error's Field does:
// "sequence.balanced.members[1].url".
func joinPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// structAt returns the struct type that the mapping at path decodes into,
// or nil. An element of a list is "[i]" in a path.
func structAt(path []string) reflect.Type {
	if t := typeAt(path); t != nil && t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// fieldNames returns the sorted names in a file of the fields of struct t.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// checkKeys reports each key that names no field of the Config and each key
// given twice in one mapping (which a JSON decoder takes silently, the last
// winning).
func checkKeys(keys []keyPos) []*Error {
	var errs []*Error
	first := map[string]int{} // the line of each path
	dups := map[string]bool{} // the paths given twice
	for _, k := range keys {
		at := k.field()
		bad := func(format string, a ...any) {
			errs = append(errs, &Error{Line: k.line, Template: at.template, Field: at.field, Err: fmt.Errorf(format, a...)})
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
		if t == nil || strings.HasPrefix(name, "[") { // not a field, or an element of a list
			continue
		}
		known := fieldNames(t)
		if !slices.Contains(known, name) {
			if t == reflect.TypeFor[Sequence]() {
				continue // one of the backend's Options, which its driver checks
			}
			bad("unknown field %q (known: %s)", at.field, strings.Join(known, ", "))
			continue
		}
		// A YAML decoder truncates 1.5 into a whole number.
		if f, ok := fieldByName(t, name); ok && (f.Type.Kind() == reflect.Int64 || f.Type == reflect.TypeFor[*int64]()) && k.tag == "!!float" {
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
	reflect.TypeFor[Config](), reflect.TypeFor[Sequence](), reflect.TypeFor[Template](), reflect.TypeFor[Queue](), reflect.TypeFor[Balance](),
	reflect.TypeFor[map[string]Template](), reflect.TypeFor[[]Sequence](), reflect.TypeFor[Tenant](), reflect.TypeFor[map[string]Tenant](),
	reflect.TypeFor[string](), reflect.TypeFor[int64](), reflect.TypeFor[float64](), reflect.TypeFor[bool](),
}

// want says how a value of the type named typ is written in a file; a
// mapping is called object in JSON.
func want(typ, mapping string) string {
	if typ == reflect.TypeFor[Options]().String() {
		return mapping // of a program's own settings
	}
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
	case reflect.Bool:
		return "true or false"
	case reflect.Map:
		if t.Elem() == reflect.TypeFor[Tenant]() {
			return mapping + " of tenants by name"
		}
		return mapping + " of templates by name"
	case reflect.Slice:
		return "a list of sequences, each " + mapping + " with the fields " + strings.Join(fieldNames(t.Elem()), ", ")
	default:
		return mapping + " with the fields " + strings.Join(fieldNames(t), ", ")
	}
}

// typeError reports a value of the wrong type for key k, or for the whole
// document when k is nil.
func typeError(k *keyPos, line int, want, found string) *Error {
	e := &Error{Line: line, Err: fmt.Errorf("want %s, found %s", want, found)}
	if k != nil {
		at := k.field()
		e.Template, e.Field = at.template, at.field
		if at.field != "" {
			e.Err = fmt.Errorf("%s: %w", at.field, e.Err)
		}
	}
	return e
}

func decodeJSON(data []byte, c *Config) ([]keyPos, []*Error) {
	lineAt := func(off int64) int {
		return 1 + bytes.Count(data[:min(max(off, 0), int64(len(data)))], []byte("\n"))
	}
	keys, err := jsonKeys(data)
	for i := range keys {
		keys[i].line = lineAt(keys[i].end)
	}
	var de *depthError
	if errors.As(err, &de) {
		return nil, []*Error{{Line: lineAt(de.end), Err: de}}
	}
	if err == nil { // otherwise the decoder says what is wrong
		if errs := checkKeys(keys); len(errs) > 0 {
			return nil, errs
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	err = dec.Decode(c) // unknown keys are reported above; a Sequence's are its Options
	if err == nil {
		var doc any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if err := d.Decode(&doc); err == nil {
			fillOptions(c, jsonValue(doc), strings.ToLower)
		}
	}
	if err == io.EOF {
		return nil, []*Error{{Err: errors.New("empty document")}}
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
		return nil, []*Error{typeError(k, lineAt(te.Offset), want(te.Type.String(), "an object"), found)}
	}
	return nil, []*Error{{Line: lineAt(off), Err: errors.New(strings.TrimPrefix(err.Error(), "json: "))}}
}

// jsonKeys lists the object keys of the JSON value in data, in order, with
// the names of fields in lower case as the decoder matches them.
func jsonKeys(data []byte) ([]keyPos, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []keyPos
	var value func(path []string) error
	value = func(path []string) error {
		if len(path) > maxDepth {
			return &depthError{end: dec.InputOffset()}
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if len(path) > 0 && strings.HasPrefix(path[len(path)-1], "[") {
			// An element of a list is where its first token ends.
			keys = append(keys, keyPos{path: path, end: dec.InputOffset()})
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

// yamlLine is the line of a syntax error in yaml.v3's message.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func decodeYAML(data []byte, c *Config) ([]keyPos, []*Error) {
	keys, err := yamlKeys(data)
	var ae *aliasError
	if errors.As(err, &ae) {
		return nil, []*Error{{Line: ae.line, Err: ae}}
	}
	var de *depthError
	if errors.As(err, &de) {
		return nil, []*Error{{Line: de.line, Err: de}}
	}
	if err == nil { // otherwise the decoder says what is wrong
		errs := checkKeys(keys)
		if len(errs) == 0 {
			errs = checkTypes(keys)
		}
		if len(errs) > 0 {
			return nil, errs
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err = dec.Decode(c) // unknown keys are reported above; a Sequence's are its Options
	if err == nil {
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err == nil && len(doc.Content) == 1 {
			fillOptions(c, nodeValue(doc.Content[0]), func(s string) string { return s })
		}
	}
	if err == io.EOF {
		return nil, nil // an empty document: Validate says what is missing
	}
	if err != nil {
		// A syntax error (the key walk found none of the types wrong):
		// yaml.v3 gives its line in its message alone.
		return nil, []*Error{syntaxError(err.Error())}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, []*Error{{Err: errors.New("more than one YAML document")}}
	}
	return keys, nil
}

// syntaxError turns a syntax error of the YAML decoder into an Error: its
// line, which yaml.v3 gives in its message alone, and the rest.
func syntaxError(msg string) *Error {
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &Error{Err: errors.New(strings.TrimPrefix(msg, "yaml: "))}
	}
	line, _ := strconv.Atoi(m[1])
	return &Error{Line: line, Err: errors.New(m[2])}
}

// checkTypes reports each value of a YAML document of a type its field
// cannot hold, from the nodes the key walk found: a string where a whole
// number goes, a list where a mapping does.
func checkTypes(keys []keyPos) []*Error {
	var errs []*Error
	for i := range keys {
		k := &keys[i]
		t := typeAt(k.path)
		if t == nil || fits(t, k.tag, k.value) {
			continue
		}
		found := map[string]string{"!!str": strconv.Quote(k.value), "!!map": "a mapping", "!!seq": "a list"}[k.tag]
		if found == "" {
			found = k.value
		}
		errs = append(errs, typeError(k, k.vline, want(t.String(), "a mapping"), found))
	}
	return errs
}

// typeAt returns the type of the value at path in a Config, pointers
// taken away, or nil where nothing of a Config is.
func typeAt(path []string) reflect.Type {
	t := reflect.TypeFor[Config]()
	for _, p := range path {
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByName(t, p)
			if !ok {
				return nil
			}
			t = f.Type
		case reflect.Map:
			if t == reflect.TypeFor[Options]() {
				return nil // a backend's, which its driver checks
			}
			t = t.Elem()
		case reflect.Slice:
			if !strings.HasPrefix(p, "[") {
				return nil
			}
			t = t.Elem()
		default:
			return nil
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return t
}

// fits reports whether a YAML value of tag, written value, decodes into
// a field of type t.
func fits(t reflect.Type, tag, value string) bool {
	if tag == "!!null" {
		return true // the zero value
	}
	switch t.Kind() {
	case reflect.String:
		return tag != "!!map" && tag != "!!seq"
	case reflect.Int64:
		return tag == "!!int" || tag == "!!float" // a fraction is checkKeys' to report
	case reflect.Float64:
		return tag == "!!int" || tag == "!!float"
	case reflect.Bool:
		switch strings.ToLower(value) {
		case "yes", "no", "on", "off", "y", "n": // YAML 1.1's, which yaml.v3 takes for a bool
			return tag == "!!str"
		}
		return tag == "!!bool"
	case reflect.Struct, reflect.Map:
		return tag == "!!map"
	case reflect.Slice:
		return tag == "!!seq"
	}
	return true
}

// Aliases let a few bytes of YAML stand for a huge document (a mapping
// of nine aliases of a mapping of nine aliases...: 9^k nodes in a few
// hundred bytes), which the key walk, following aliases as the decoder
// does, would expand. So the walk visits at most maxAliasRatio times the
// nodes the document has, and at least minAliasBudget nodes; a document
// that expands further is refused.
const (
	maxAliasRatio  = 20
	minAliasBudget = 10_000
)

// maxDepth is the deepest a config document may nest: a config's deepest
// field is a few levels down, and checking keys costs more the deeper
// they are.
const maxDepth = 32

// depthError is a document that nests deeper than maxDepth.
type depthError struct {
	line int   // YAML
	end  int64 // JSON: the offset
}

func (e *depthError) Error() string {
	return fmt.Sprintf("the document nests deeper than %d levels, which no config does", maxDepth)
}

// aliasError is a document whose aliases expand it too far.
type aliasError struct {
	line          int // of the first alias
	nodes, budget int
}

func (e *aliasError) Error() string {
	return fmt.Sprintf("the document's aliases expand it beyond %d nodes (it has %d): refused; write the repeated parts out, or use fewer levels of aliases", e.budget, e.nodes)
}

// yamlKeys lists the mapping keys of the first YAML document in data, in
// order, following aliases and merge keys ("<<") as the decoder does. A
// document whose aliases expand it too far gives an *aliasError.
func yamlKeys(data []byte) ([]keyPos, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	nodes, firstAlias := 0, 0
	var count func(n *yaml.Node)
	count = func(n *yaml.Node) {
		nodes++
		if n.Kind == yaml.AliasNode && firstAlias == 0 {
			firstAlias = n.Line
		}
		for _, c := range n.Content {
			count(c)
		}
	}
	count(&doc)
	budget := max(minAliasBudget, maxAliasRatio*nodes)
	visits := 0
	var deep *depthError
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
		if visits++; visits > budget || n == nil || deep != nil {
			return listed
		}
		if len(path) > maxDepth {
			deep = &depthError{line: n.Line}
			return listed
		}
		if n == nil || walking[n] || len(path) > 0 && !strings.HasPrefix(path[len(path)-1], "[") && structAt(path) == nil && structAt(path[:len(path)-1]) == nil {
			// nothing deeper is a field of a Config
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
					rc := c
					for rc.Kind == yaml.AliasNode && rc.Alias != nil {
						rc = rc.Alias
					}
					keys = append(keys, keyPos{path: p, line: c.Line, vline: rc.Line, value: rc.Value, tag: rc.Tag})
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
				// A merge's work is the names it skips, too: count them.
				if visits += len(skip) + len(listed); visits > budget {
					return listed
				}
				for name := range walk(e, path, union(skip, listed)) {
					listed[name] = true
				}
			}
		}
		return listed
	}
	walk(&doc, nil, nil)
	if deep != nil {
		return nil, deep
	}
	if visits > budget {
		return nil, &aliasError{line: firstAlias, nodes: nodes, budget: budget}
	}
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

// jsonValue is v, decoded from JSON with numbers as json.Number, as
// Options hold it: a whole number as an int, another as a float64.
func jsonValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil && n == int64(int(n)) {
			return int(n)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = jsonValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonValue(e)
		}
	}
	return v
}

// nodeValue is the value of a YAML node as Options hold it: a scalar as
// the string, whole number, number, boolean or nil its tag says, a date
// as the text it is written as (the backend reads it), a mapping as a
// map[string]any, a list as a []any.
func nodeValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.AliasNode:
		return nodeValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = nodeValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, e := range n.Content {
			l[i] = nodeValue(e)
		}
		return l
	}
	var v any
	switch n.ShortTag() {
	case "!!int", "!!float", "!!bool", "!!null":
		if n.Decode(&v) == nil {
			return v
		}
	}
	return n.Value
}

// fillOptions sets the Options of each Sequence of c from doc, the
// document c was decoded from: the keys of a sequence's mapping that are
// not fields of Sequence, spelt by name (JSON's decoder matches keys
// without case, YAML's exactly).
func fillOptions(c *Config, doc any, name func(string) string) {
	top, _ := doc.(map[string]any)
	field := func(m map[string]any, key string) any {
		for k, v := range m {
			if name(k) == key {
				return v
			}
		}
		return nil
	}
	fillSequence(&c.Store, field(top, "store"), name, field)
	if m, ok := field(top, "serve").(map[string]any); ok {
		c.Serve = Options(m)
	}
	tens, _ := field(top, "tenants").(map[string]any)
	for tn, t := range c.Tenants {
		tm, _ := tens[tn].(map[string]any)
		fillSequence(&t.Store, field(tm, "store"), name, field)
		c.Tenants[tn] = t
	}
	tpls, _ := field(top, "templates").(map[string]any)
	for tn, t := range c.Templates {
		tm, _ := tpls[tn].(map[string]any)
		fillSequence(&t.Sequence, field(tm, "sequence"), name, field)
		c.Templates[tn] = t
	}
}

// fillSequence sets s.Options from v, the mapping s was decoded from,
// and those of its members.
func fillSequence(s *Sequence, v any, name func(string) string, field func(map[string]any, string) any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	known := fieldNames(reflect.TypeFor[Sequence]())
	for k, val := range m {
		if k := name(k); !slices.Contains(known, k) {
			if s.Options == nil {
				s.Options = Options{}
			}
			s.Options[k] = val
		}
	}
	if s.Balanced == nil {
		return
	}
	bm, _ := field(m, "balanced").(map[string]any)
	members, _ := field(bm, "members").([]any)
	for i := range s.Balanced.Members {
		if i < len(members) {
			fillSequence(&s.Balanced.Members[i], members[i], name, field)
		}
	}
}
