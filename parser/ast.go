package parser

// Template is a parsed template: an ordered list of nodes. Its String method
// prints the canonical template text; parsing that text again yields an
// equal Template (positions aside).
type Template struct {
	// Source is the template text as given to Parse.
	Source string
	// Nodes are the parts of the template in source order. Adjacent text is
	// merged into one *Text node.
	Nodes []Node
}

// Node is one part of a template: *Text or *Dynamic. The set of node types
// is closed; sn is extended through expressions, not new nodes.
type Node interface {
	// Pos returns the byte offset of the node in Template.Source.
	Pos() int
	// String returns the node as canonical template text.
	String() string
	node()
}

// Text is literal text. Text holds the text as printed, so "@@" in the
// template is a single "@" here.
type Text struct {
	Offset int
	Text   string
}

// Dynamic is an expression "@<name, key=value, ...>".
type Dynamic struct {
	// Offset is the byte offset of the "@<" that opens the expression.
	Offset int
	// End is the byte offset just past the closing ">".
	End int
	// Name is the expression's name.
	Name string
	// NameOffset is the byte offset of Name.
	NameOffset int
	// Args are the arguments in source order. Keys are unique.
	Args []Arg
}

// Arg is one argument of a [Dynamic] node.
type Arg struct {
	// Offset is the byte offset of the key; ValueOffset that of the value
	// (equal to Offset for a bare key).
	Offset, ValueOffset int
	Key                 string
	// Value is the unquoted, unescaped value; "true" for a bare key.
	Value string
	// Bare reports that the argument was written as a key alone.
	Bare bool
}

func (*Text) node()    {}
func (*Dynamic) node() {}

// Pos returns the byte offset of the text.
func (t *Text) Pos() int { return t.Offset }

// Pos returns the byte offset of the "@<" that opens the expression.
func (d *Dynamic) Pos() int { return d.Offset }

// Arg returns the argument with the given key.
func (d *Dynamic) Arg(key string) (Arg, bool) {
	for _, a := range d.Args {
		if a.Key == key {
			return a, true
		}
	}
	return Arg{}, false
}
