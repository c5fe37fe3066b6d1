package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sngen/sn/parser"
)

// Decode decodes the backend's own fields of t's sequence (its
// Sequence.Options, the store's and the template's merged) into v, a
// pointer to a struct whose fields are tagged with their names in a file,
// as in
//
//	type boltOptions struct {
//		Path string `yaml:"path"`
//	}
//
// The fields of an embedded struct count as v's own. A key v has no field
// for is left alone: whether the backend reads it is what [StoreInfo.Fields]
// says. A value of the wrong type, such as a list for a string, is an
// *[Error] naming the field, joined with the others; Decode sets the
// fields it can.
func (t *Target) Decode(v any) error {
	fields, err := structFields("Target.Decode", v)
	if err != nil {
		return err
	}
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(t.Sequence.Options)) {
		f, ok := fields[key]
		if !ok {
			continue
		}
		if err := setValue(f, t.Sequence.Options[key]); err != nil {
			errs = append(errs, &Error{Field: key, Err: fieldTypeError{err}})
		}
	}
	return errors.Join(errs...)
}

// errFieldType is matched by the errors of Decode: a value of the wrong
// type, wrong for every template that reads it.
var errFieldType = errors.New("a value of the wrong type")

// fieldTypeError is an error of Decode.
type fieldTypeError struct{ error }

func (e fieldTypeError) Unwrap() error        { return e.error }
func (e fieldTypeError) Is(target error) bool { return target == errFieldType }

// structFields returns the fields of the struct v points to by their
// names in a file, for fn.
func structFields(fn string, v any) (map[string]reflect.Value, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("config: %s(%T): want a pointer to a struct", fn, v)
	}
	fields := map[string]reflect.Value{}
	collectFields(rv.Elem(), fields)
	return fields, nil
}

// collectFields adds the settable fields of struct v to out by their
// names in a file: the yaml tag's name, else the json tag's, else the
// field's name in lower case. Embedded structs are flattened.
func collectFields(v reflect.Value, out map[string]reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("yaml") == "" {
			collectFields(v.Field(i), out) // its exported fields, as encoding/json does
			continue
		}
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "" {
			name, _, _ = strings.Cut(sf.Tag.Get("json"), ",")
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		out[name] = v.Field(i)
	}
}

// setValue sets f to val, a value as a config file holds it.
func setValue(f reflect.Value, val any) error {
	wrong := func() error { return fmt.Errorf("want %s, found %s", wantKind(f.Type()), describe(val)) }
	switch f.Kind() {
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if err := setValue(p.Elem(), val); err != nil {
			return err
		}
		f.Set(p)
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			return wrong()
		}
		f.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if s, isStr := val.(string); isStr {
			// YAML 1.1's words for true and false, which yaml.v3 takes
			// for a bool as well.
			switch strings.ToLower(s) {
			case "yes", "on", "y", "true":
				b, ok = true, true
			case "no", "off", "n", "false":
				b, ok = false, true
			}
		}
		if !ok {
			return wrong()
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := whole(val)
		if !ok || f.OverflowInt(n) {
			return wrong()
		}
		f.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := whole(val)
		if !ok || n < 0 || f.OverflowUint(uint64(n)) {
			return wrong()
		}
		f.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		switch x := val.(type) {
		case int:
			f.SetFloat(float64(x))
		case float64:
			f.SetFloat(x)
		default:
			return wrong()
		}
	case reflect.Slice:
		list, ok := val.([]any)
		if !ok {
			return wrong()
		}
		s := reflect.MakeSlice(f.Type(), len(list), len(list))
		for i, e := range list {
			if err := setValue(s.Index(i), e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		f.Set(s)
	case reflect.Struct:
		m, ok := val.(map[string]any)
		if !ok {
			return wrong()
		}
		fields := map[string]reflect.Value{}
		collectFields(f, fields)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ff, ok := fields[k]
			if !ok {
				hint := ""
				if best := parser.Closest(k, slices.Sorted(maps.Keys(fields))); best != "" {
					hint = fmt.Sprintf("; did you mean %s?", best)
				}
				return fmt.Errorf("%s: unknown field (known: %s)%s", k, strings.Join(slices.Sorted(maps.Keys(fields)), ", "), hint)
			}
			if err := setValue(ff, m[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	default: // a mapping: as YAML decodes it
		var n yaml.Node
		if err := n.Encode(val); err != nil {
			return wrong()
		}
		if err := n.Decode(f.Addr().Interface()); err != nil {
			return wrong()
		}
	}
	return nil
}

// whole returns val as a whole number: an int, or a float64 (JSON's
// numbers) without a fraction.
func whole(val any) (int64, bool) {
	switch x := val.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
	}
	return 0, false
}

// wantKind says how a value of type t is written in a file.
func wantKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return wantKind(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list"
	}
	return "a mapping"
}

// describe says what val is, for an error.
func describe(val any) string {
	switch x := val.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case nil:
		return "nothing"
	}
	return fmt.Sprint(val)
}

// DecodeServe decodes c's serve section into v, as [Target.Decode] decodes
// a backend's fields, for the program that serves c's templates (package
// server). A key v has no field for is an error too, with a did-you-mean;
// each error is an *[Error] with its file and line.
func (c *Config) DecodeServe(v any) error {
	fields, err := structFields("DecodeServe", v)
	if err != nil {
		return err
	}
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(c.Serve)) {
		f, ok := fields[key]
		var err error
		if !ok {
			hint := ""
			if best := parser.Closest(key, slices.Sorted(maps.Keys(fields))); best != "" {
				hint = fmt.Sprintf("; did you mean %s?", best)
			}
			err = fmt.Errorf("unknown field (known: %s)%s", strings.Join(slices.Sorted(maps.Keys(fields)), ", "), hint)
		} else {
			err = setValue(f, c.Serve[key])
		}
		if err != nil {
			e := &Error{Field: "serve." + key, Err: fmt.Errorf("serve.%s: %w", key, err)}
			c.Locate(e)
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// Locate sets e's File and Line to where its field is in the file c was
// read from, when c was read from one: for a program that checks a part of
// c of its own, such as its serve section.
func (c *Config) Locate(e *Error) { c.src.locate(e) }
