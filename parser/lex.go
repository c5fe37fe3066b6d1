package parser

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// Token types produced by tokenize. The grammar in grammar.go refers to them
// by the names in tokenDef.Symbols.
const (
	tokText   lexer.TokenType = -(iota + 2) // literal text outside expressions, a lone "@" included
	tokAtAt                                 // "@@"; its value is "@"
	tokOpen                                 // "@<"
	tokIdent                                // a bare word that is a valid name
	tokBare                                 // any other bare word
	tokString                               // a quoted value, quotes and escapes included
	tokPunct                                // one of , = > <
)

// tokenDef is the lexer.Definition handed to participle. Templates are
// tokenized by hand (the lexer is modal: text outside "@< >", tokens inside)
// so that every lexical error gets our own message and offset.
type tokenDef struct{}

func (tokenDef) Symbols() map[string]lexer.TokenType {
	return map[string]lexer.TokenType{
		"EOF":    lexer.EOF,
		"Text":   tokText,
		"AtAt":   tokAtAt,
		"Open":   tokOpen,
		"Ident":  tokIdent,
		"Bare":   tokBare,
		"String": tokString,
		"Punct":  tokPunct,
	}
}

func (d tokenDef) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	var b strings.Builder
	if _, err := io.Copy(&b, r); err != nil {
		return nil, err
	}
	return d.LexString(filename, b.String())
}

func (tokenDef) LexString(_ string, src string) (lexer.Lexer, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	return &tokenSlice{toks: toks}, nil
}

// tokenSlice replays tokens that tokenize produced. The last token is EOF,
// which it returns for ever.
type tokenSlice struct {
	toks []lexer.Token
	i    int
}

func (l *tokenSlice) Next() (lexer.Token, error) {
	t := l.toks[l.i]
	if l.i < len(l.toks)-1 {
		l.i++
	}
	return t, nil
}

// tokenize splits src into tokens, ending with an EOF token. Whitespace inside
// expressions is dropped. On a lexical error it returns the tokens up to the
// offending one, followed by EOF, and the error.
func tokenize(src string) ([]lexer.Token, *Error) {
	var toks []lexer.Token
	emit := func(typ lexer.TokenType, off int, val string) {
		toks = append(toks, lexer.Token{Type: typ, Value: val, Pos: lexer.Position{Offset: off}})
	}
	fail := func(off int, msg string) ([]lexer.Token, *Error) {
		emit(lexer.EOF, len(src), "")
		return toks, &Error{Template: src, Offset: off, Msg: msg}
	}
	inExpr := false
	i := 0
	for i < len(src) {
		if !inExpr {
			if src[i] == '@' && i+1 < len(src) {
				switch src[i+1] {
				case '@':
					emit(tokAtAt, i, "@")
					i += 2
					continue
				case '<':
					emit(tokOpen, i, "@<")
					i += 2
					inExpr = true
					continue
				}
			}
			j := i + 1
			for j < len(src) && !(src[j] == '@' && j+1 < len(src) && (src[j+1] == '@' || src[j+1] == '<')) {
				j++
			}
			emit(tokText, i, src[i:j])
			i = j
			continue
		}
		c := src[i]
		switch {
		case c == '"':
			end, escOff := scanQuoted(src, i)
			if end < 0 {
				// The token is still emitted, so that the grammar can report
				// it if it is out of place.
				emit(tokString, i, src[i:])
				return fail(i, "unterminated quoted value")
			}
			emit(tokString, i, src[i:end])
			if escOff >= 0 {
				return fail(escOff, unknownEscape(src[escOff+1:]))
			}
			i = end
		case isPunct(c):
			emit(tokPunct, i, src[i:i+1])
			i++
			if c == '>' {
				inExpr = false
			}
		default:
			r, size := utf8.DecodeRuneInString(src[i:])
			if isSpace(r) {
				i += size
				continue
			}
			n := bareLen(src[i:])
			w := src[i : i+n]
			if IsName(w) {
				emit(tokIdent, i, w)
			} else {
				emit(tokBare, i, w)
			}
			i += n
		}
	}
	emit(lexer.EOF, len(src), "")
	return toks, nil
}

// scanQuoted scans the quoted value that starts with the '"' at src[start].
// It returns the offset just past the closing quote, or -1 if there is none,
// and the offset of the first backslash that starts an unknown escape, or -1.
func scanQuoted(src string, start int) (end, escOff int) {
	escOff = -1
	for j := start + 1; j < len(src); j++ {
		switch src[j] {
		case '"':
			return j + 1, escOff
		case '\\':
			if j+1 >= len(src) {
				return -1, escOff
			}
			if next := src[j+1]; next != '"' && next != '\\' && escOff < 0 {
				escOff = j
			}
			j++
		}
	}
	return -1, escOff
}

// unknownEscape describes the escape that starts with a backslash followed by
// rest.
func unknownEscape(rest string) string {
	r, size := utf8.DecodeRuneInString(rest)
	if unicode.IsPrint(r) && !(r == utf8.RuneError && size == 1) {
		return `unknown escape "\` + string(r) + `" in quoted value`
	}
	return fmt.Sprintf("unknown escape in quoted value: backslash followed by %q", rest[:size])
}

// unquote returns the value of a quoted token that tokenize accepted.
func unquote(s string) string {
	s = s[1 : len(s)-1]
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
