package redisseq

import "strings"

// DefaultPrefix is the prefix of every Redis key when the options leave
// Prefix empty.
const DefaultPrefix = "sn:"

// keyEscaper percent-escapes the three bytes that would break a key's hash
// tag or make two escaped keys equal. Every other byte is kept as is.
var keyEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

// escape returns s with "%", "{" and "}" percent-escaped. It is injective,
// and its result contains no brace.
func escape(s string) string {
	if !strings.ContainsAny(s, "%{}") {
		return s
	}
	return keyEscaper.Replace(s)
}

// prefixOrDefault returns the escaped prefix, or DefaultPrefix if p is "".
func prefixOrDefault(p string) string {
	if p == "" {
		return DefaultPrefix
	}
	return escape(p)
}

// redisKey returns the Redis key of counter key in the layout described in
// the package comment: prefix, then the escaped key as a hash tag, then the
// suffix.
func redisKey(prefix, key, suffix string) string {
	return prefix + "{" + escape(key) + "}" + suffix
}
