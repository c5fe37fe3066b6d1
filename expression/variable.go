package expression

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

var (
	// ErrVarMissing means a per-call variable the template prints was not
	// given (or was empty).
	ErrVarMissing = errors.New("variable missing")
	// ErrVarInvalid means a per-call variable's value breaks the limits the
	// template sets for it (maxlen, chars) or contains a character that
	// would make two numbers print alike.
	ErrVarInvalid = errors.New("variable invalid")
)

// Text is literal template text.
type Text string

// Append appends the text.
func (t Text) Append(dst []byte, _ *Context) ([]byte, error) { return append(dst, t...), nil }

// Order returns Before.
func (Text) Order() Order { return Before }

// MaxLen returns the length of the text.
func (t Text) MaxLen() int { return len(t) }

// Pattern matches the text exactly.
func (t Text) Pattern() string { return regexp.QuoteMeta(string(t)) }

// Setter is the part "@<NAME, value=V>": it sets variable NAME to V for the
// call and prints V. Setting [OwnerKey] chooses the counter key.
type Setter struct {
	Name, Value string
}

// NewSetter returns the setter for "@<name, value=...>"; value is the only
// argument it takes.
func NewSetter(name string, args Args) (*Setter, error) {
	if err := args.Check("value"); err != nil {
		return nil, err
	}
	return &Setter{Name: name, Value: args["value"]}, nil
}

// Append sets the variable and prints its value. (A [Program] sets the
// variables of its setters up front, for every call.)
func (s *Setter) Append(dst []byte, c *Context) ([]byte, error) {
	if c.prog == nil {
		c.SetVar(s.Name, s.Value)
	}
	return append(dst, s.Value...), nil
}

// Order returns Before: setters run before the parts that read them.
func (*Setter) Order() Order { return Before }

// MaxLen returns the length of the value.
func (s *Setter) MaxLen() int { return len(s.Value) }

// Pattern matches the value exactly.
func (s *Setter) Pattern() string { return regexp.QuoteMeta(s.Value) }

// Var is the part "@<NAME>" or "@<NAME, maxlen=N, chars=CLASS>": it prints
// the per-call variable NAME verbatim (it is never parsed as a template).
// A missing or empty value is an error wrapping [ErrVarMissing]; a value
// longer than maxlen bytes, or with a character outside chars (an RE2
// character class body such as "0-9A-Z"), wraps [ErrVarInvalid].
type Var struct {
	Name   string
	Max    int    // maximum length in bytes; 0 means unbounded
	Chars  string // RE2 character class body; "" means any character
	charRe *regexp.Regexp
	forbid string // characters the value must not contain (see Forbid)
}

// NewVar returns the per-call variable part for name.
func NewVar(name string, args Args) (*Var, error) {
	if err := args.Check("maxlen", "chars"); err != nil {
		return nil, err
	}
	v := &Var{Name: name}
	var err error
	if v.Max, err = args.Int("maxlen", 0, 1, 1<<20); err != nil {
		return nil, err
	}
	if cs, ok := args["chars"]; ok {
		if cs == "" || strings.ContainsAny(cs, "[]") {
			return nil, Errorf("chars", "chars=%q: want the inside of a character class, such as 0-9A-Z", cs)
		}
		re, err := regexp.Compile(`^[` + cs + `]*$`)
		if err != nil {
			return nil, Errorf("chars", "chars=%q: not a character class: %v", cs, err)
		}
		v.Chars, v.charRe = cs, re
	}
	return v, nil
}

// Forbid makes the variable refuse values containing any of chars. sn uses
// it when a counter is partitioned by a variable (key=VAR): if a value could
// contain the template's separators, two different values could print the
// same number from two different counters.
func (v *Var) Forbid(chars string) { v.forbid = chars }

// Append prints the variable's value. In a preview, a variable not given
// prints as its name in braces.
func (v *Var) Append(dst []byte, c *Context) ([]byte, error) {
	val, ok := c.Var(v.Name)
	if !ok && c.mode == modePreview {
		dst = append(dst, '{')
		dst = append(dst, v.Name...)
		return append(dst, '}'), nil
	}
	if err := v.check(val, ok); err != nil {
		return dst, err
	}
	return append(dst, val...), nil
}

func (v *Var) check(val string, ok bool) error {
	if !ok || val == "" {
		return fmt.Errorf("%w: %q was not given", ErrVarMissing, v.Name)
	}
	if v.Max > 0 && len(val) > v.Max {
		return fmt.Errorf("%w: %q is %d bytes long, more than maxlen=%d", ErrVarInvalid, v.Name, len(val), v.Max)
	}
	if v.charRe != nil && !v.charRe.MatchString(val) {
		return fmt.Errorf("%w: %q=%q has a character outside [%s]", ErrVarInvalid, v.Name, val, v.Chars)
	}
	if v.forbid != "" {
		if i := strings.IndexAny(val, v.forbid); i >= 0 {
			r, _ := utf8.DecodeRuneInString(val[i:])
			return fmt.Errorf("%w: %q=%q contains %q, which the template prints as a separator", ErrVarInvalid, v.Name, val, r)
		}
	}
	return nil
}

// Order returns Normal, so that setters (Before) are seen.
func (*Var) Order() Order { return Normal }

// MaxLen returns maxlen, or -1 without one.
func (v *Var) MaxLen() int {
	if v.Max == 0 {
		return -1
	}
	return v.Max
}

// Pattern matches one to maxlen characters allowed by chars.
func (v *Var) Pattern() string {
	class := "."
	switch {
	case v.Chars != "":
		class = "[" + v.Chars + "]"
	case v.forbid != "":
		class = "[^" + regexpClassEscape(v.forbid) + "]"
	}
	if v.Max > 0 {
		return class + "{1," + strconv.Itoa(v.Max) + "}?"
	}
	return class + "+?"
}

// Check checks a value read back from a number.
func (v *Var) Check(part string, _ *Context) error { return v.check(part, true) }

func (v *Var) readBack(part string, c *Context) { c.SetVar(v.Name, part) }

// regexpClassEscape escapes s for use inside an RE2 character class.
func regexpClassEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\]^-[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
