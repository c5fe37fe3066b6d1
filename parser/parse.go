package parser

import (
	"errors"
	"fmt"
	"sort"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Parse parses template text into a [Template]. An empty src yields a
// Template without nodes.
//
// Every syntax error is returned as an *[Error] (not wrapped) whose Offset is
// that of the first offending byte: an unterminated expression or quoted
// value, an unknown escape, a bad or missing name, key or value, a misplaced
// token, or an argument key repeated within one expression.
//
// Parse is safe for concurrent use.
func Parse(src string) (*Template, error) {
	// The tokens before a lexical error are parsed too: the error to report
	// is the earliest of the lexical error, the grammar error and a
	// duplicate key, the lexical error winning a tie.
	var first *Error
	report := func(e *Error) {
		if e != nil && (first == nil || e.Offset < first.Offset) {
			first = e
		}
	}
	toks, lexErr := tokenize(src)
	report(lexErr)
	g, err := grammar.ParseFromLexer(upgrade(toks))
	if err != nil {
		report(grammarError(src, toks, err))
	}
	report(duplicateKey(src, toks))
	if first != nil {
		return nil, first
	}
	return convert(src, g), nil
}

// upgrade wraps tokens, which end with EOF, for participle.
func upgrade(toks []lexer.Token) *lexer.PeekingLexer {
	pl, err := lexer.Upgrade(&tokenSlice{toks: toks})
	if err != nil {
		// tokenSlice never fails.
		panic(err)
	}
	return pl
}

// convert turns a grammar tree into the public AST, merging adjacent text.
func convert(src string, g *gTemplate) *Template {
	t := &Template{Source: src}
	var text *Text
	for _, p := range g.Parts {
		if p.Text != nil {
			if text == nil {
				text = &Text{Offset: p.Pos.Offset}
				t.Nodes = append(t.Nodes, text)
			}
			text.Text += *p.Text
			continue
		}
		text = nil
		e := p.Expr
		d := &Dynamic{
			Offset:     e.Pos.Offset,
			End:        e.Close.Pos.Offset + 1,
			Name:       e.Name.Name,
			NameOffset: e.Name.Pos.Offset,
		}
		for _, a := range e.Args {
			arg := Arg{Offset: a.Key.Pos.Offset, ValueOffset: a.Key.Pos.Offset, Key: a.Key.Name, Value: "true", Bare: true}
			if v := a.Value; v != nil {
				arg.ValueOffset = v.Pos.Offset
				arg.Bare = false
				if v.Bare != nil {
					arg.Value = *v.Bare
				} else {
					arg.Value = unquote(*v.Quoted)
				}
			}
			d.Args = append(d.Args, arg)
		}
		t.Nodes = append(t.Nodes, d)
	}
	return t
}

// duplicateKey returns an error at the second occurrence of an argument key
// within one expression, or nil. Tokens after a syntax error may be
// misread, but an error reported there loses to the syntax error in Parse.
func duplicateKey(src string, toks []lexer.Token) *Error {
	var seen map[string]bool
	for i, t := range toks {
		switch {
		case t.Type == tokOpen:
			clear(seen)
		case t.Type == tokPunct && t.Value == "," && i+1 < len(toks) && toks[i+1].Type == tokIdent:
			key := toks[i+1]
			if seen == nil {
				seen = make(map[string]bool)
			}
			if seen[key.Value] {
				return &Error{Template: src, Offset: key.Pos.Offset, Msg: fmt.Sprintf("duplicate argument %q", key.Value)}
			}
			seen[key.Value] = true
		}
	}
	return nil
}

// grammarError turns an error from participle into an *Error in our words.
// The grammar is LL(1), so the offending token and the one before it say
// what was expected.
func grammarError(src string, toks []lexer.Token, err error) *Error {
	var perr participle.Error
	if !errors.As(err, &perr) {
		// participle reports every parse failure as a participle.Error.
		return &Error{Template: src, Offset: 0, Msg: "syntax error: " + err.Error()}
	}
	off := perr.Position().Offset
	e := &Error{Template: src, Offset: off, Msg: "syntax error: " + perr.Message()}
	var unexpected *participle.UnexpectedTokenError
	if !errors.As(err, &unexpected) {
		// Not a grammar mismatch: participle's limit on repetitions was
		// exceeded.
		e.Msg = fmt.Sprintf("template too long: %d or more parts or arguments", participle.MaxIterations)
		return e
	}
	i := sort.Search(len(toks), func(i int) bool { return toks[i].Pos.Offset >= off })
	if i == len(toks) || toks[i].Pos.Offset != off || i == 0 {
		return e
	}
	tok, prev := toks[i], toks[i-1]
	if tok.Type == lexer.EOF {
		e.Msg = `unterminated expression: missing ">"`
		return e
	}
	var expected string
	switch {
	case prev.Type == tokOpen || prev.Type == tokPunct && prev.Value == ",":
		if tok.Type == tokBare {
			e.Msg = badName(tok.Value)
			return e
		}
		expected = "a name"
	case prev.Type == tokPunct && prev.Value == "=":
		expected = `a value after "="`
	case prev.Type == tokIdent && i >= 2 && toks[i-2].Type == tokPunct && toks[i-2].Value == ",":
		expected = `"=", "," or ">"`
	default:
		expected = `"," or ">"`
		if isValue(toks, i-1) && tok.Type == tokPunct && (tok.Value == "<" || tok.Value == "=") {
			expected += fmt.Sprintf(" (quote a value that contains %q)", tok.Value)
		}
	}
	e.Msg = fmt.Sprintf("unexpected %s in expression, expected %s", describe(tok), expected)
	return e
}

// isValue reports whether toks[i] is a bare value: a word after "=".
func isValue(toks []lexer.Token, i int) bool {
	return i >= 1 && (toks[i].Type == tokIdent || toks[i].Type == tokBare) &&
		toks[i-1].Type == tokPunct && toks[i-1].Value == "="
}

// describe names a token for an error message.
func describe(t lexer.Token) string {
	if t.Type == tokString {
		// The caret shows it; it may be long and span lines.
		return "quoted value"
	}
	return fmt.Sprintf("%q", t.Value)
}

// badName explains why the bare word w is not a name.
func badName(w string) string {
	if !isNameStart(w[0]) {
		return fmt.Sprintf("bad name %q: a name starts with a letter or \"_\"", w)
	}
	return fmt.Sprintf("bad name %q: a name has only letters, digits, \"_\", \".\" and \"-\"", w)
}
