package parser

import "strings"

// String returns the canonical template text: the concatenation of the
// nodes' String methods.
func (t *Template) String() string {
	var b strings.Builder
	for _, n := range t.Nodes {
		b.WriteString(n.String())
	}
	return b.String()
}

// String returns the text with every "@" doubled, so that it never starts an
// expression.
func (t *Text) String() string {
	return strings.ReplaceAll(t.Text, "@", "@@")
}

// String returns the expression as "@<name>" or "@<name, k1=v1, k2=v2>", with
// the arguments printed by [Arg.String] in order.
func (d *Dynamic) String() string {
	var b strings.Builder
	b.WriteString("@<")
	b.WriteString(d.Name)
	for _, a := range d.Args {
		b.WriteString(", ")
		b.WriteString(a.String())
	}
	b.WriteByte('>')
	return b.String()
}

// String returns the argument as template text: the key alone for a bare
// argument, otherwise "key=value" with the value quoted unless it is a
// non-empty bare word (no whitespace and none of `,` `=` `>` `<` `"`). Inside
// quotes, `"` and `\` are escaped with a backslash.
func (a Arg) String() string {
	if a.Bare {
		return a.Key
	}
	if isBareValue(a.Value) {
		return a.Key + "=" + a.Value
	}
	var b strings.Builder
	b.Grow(len(a.Key) + len(a.Value) + 3)
	b.WriteString(a.Key)
	b.WriteString(`="`)
	for i := 0; i < len(a.Value); i++ {
		if c := a.Value[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(a.Value[i])
	}
	b.WriteByte('"')
	return b.String()
}
