package parser

import (
	"unicode"
	"unicode/utf8"
)

// IsName reports whether s can be written as an expression name or an
// argument key: an ASCII letter or "_" followed by ASCII letters, digits,
// "_", "." and "-". Registries use it to refuse names that no template could
// spell.
func IsName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isNameByte(c byte) bool {
	return isNameStart(c) || '0' <= c && c <= '9' || c == '.' || c == '-'
}

// isSpace reports whether r is whitespace that separates tokens inside an
// expression.
func isSpace(r rune) bool { return unicode.IsSpace(r) }

// isPunct reports whether c is one of the bytes that delimit tokens inside an
// expression, besides whitespace.
func isPunct(c byte) bool {
	switch c {
	case ',', '=', '>', '<', '"':
		return true
	}
	return false
}

// bareLen returns the length in bytes of the bare word at the start of s:
// the longest prefix of characters that are neither whitespace nor one of
// `,`, `=`, `>`, `<`, `"`. Bytes that are not valid UTF-8 belong to the word.
func bareLen(s string) int {
	i := 0
	for i < len(s) {
		if isPunct(s[i]) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			break
		}
		i += size
	}
	return i
}

// isBareValue reports whether v can be printed as a value without quotes.
func isBareValue(v string) bool {
	return v != "" && bareLen(v) == len(v)
}
