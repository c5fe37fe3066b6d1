package parser

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// excerptRadius is how many characters of the template an excerpt shows on
// each side of the offending byte.
const excerptRadius = 30

// Error is an error at a byte offset of a template. [Parse] returns an
// *Error for every syntax error; other packages build one for semantic
// errors (an unknown name, a bad argument) so that they print the same way.
// Any Error value is valid: an Offset outside the template is clamped when
// the excerpt is drawn.
type Error struct {
	// Template is the template text.
	Template string
	// Offset is the byte offset of the first offending byte; len(Template)
	// points just past the end.
	Offset int
	// Msg describes the problem, without position.
	Msg string
}

// Error returns "template: offset N: MSG", a newline and [Error.Excerpt]:
//
//	template: offset 7: unexpected "=" in expression, expected a name
//		@<seq, =8>
//		       ^
func (e *Error) Error() string {
	return "template: offset " + strconv.Itoa(e.Offset) + ": " + e.Msg + "\n" + e.Excerpt()
}

// Excerpt returns two tab-indented lines: the template, or a window of about
// 30 characters either side of the offset marked with "...", and a caret
// under the offending character. Whitespace and other invisible characters in the
// window print as spaces and invalid UTF-8 as U+FFFD, so the caret lines up
// when each character takes one column.
func (e *Error) Excerpt() string {
	src := e.Template
	off := min(max(e.Offset, 0), len(src))
	for off > 0 && off < len(src) && !utf8.RuneStart(src[off]) {
		off--
	}
	start := off
	for n := 0; start > 0 && n < excerptRadius; n++ {
		_, size := utf8.DecodeLastRuneInString(src[:start])
		start -= size
	}
	end := off
	for n := 0; end < len(src) && n < excerptRadius; n++ {
		_, size := utf8.DecodeRuneInString(src[end:])
		end += size
	}
	var b strings.Builder
	b.WriteByte('\t')
	col := 0
	if start > 0 {
		b.WriteString("...")
		col += 3
	}
	for i := start; i < end; {
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			r = utf8.RuneError
		case unicode.IsSpace(r) || !unicode.IsGraphic(r):
			r = ' '
		}
		b.WriteRune(r)
		if i < off {
			col++
		}
		i += size
	}
	if end < len(src) {
		b.WriteString("...")
	}
	b.WriteString("\n\t")
	b.WriteString(strings.Repeat(" ", col))
	b.WriteByte('^')
	return b.String()
}
