// Package batchjson writes and reads a batch of numbers as sn serve sends
// it, {"numbers":["A","B"]}, by hand: a batch is most of what the server
// writes and the client reads, and encoding/json would spend more time on
// it than issuing the numbers took. Numbers of printable ASCII, the usual
// case, go through in one pass, eight bytes at a time; anything else
// through encoding/json, so the output is always JSON that encoding/json
// reads back the same.
package batchjson

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
)

// Open and Close frame a list of numbers, "A","B" as AppendList and
// sn.Generator.AppendJSON write it, as sn serve's answer.
const (
	Open  = `{"numbers":[`
	Close = "]}\n"
)

// Batch is a batch of numbers, as sn.Batch holds them.
type Batch interface {
	Len() int
	Bytes(i int) []byte
}

// Append appends the JSON of the batch and a newline to dst.
func Append(dst []byte, b Batch) []byte {
	dst = append(dst, Open...)
	for i := range b.Len() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, b.Bytes(i))
	}
	return append(dst, Close...)
}

// AppendList appends the numbers that lie end to end in buf, number i
// being buf[ends[i-1]:ends[i]], as JSON strings separated by commas. When
// every number is clean, the usual case, one test of the whole buffer
// does for all of them.
func AppendList(dst, buf []byte, ends []int) []byte {
	if len(ends) == 0 {
		return dst
	}
	all := clean(buf[:ends[len(ends)-1]], true)
	dst = slices.Grow(dst, ends[len(ends)-1]+3*len(ends))
	start := 0
	for i, end := range ends {
		if i > 0 {
			dst = append(dst, ',')
		}
		if all {
			dst = append(dst, '"')
			dst = append(dst, buf[start:end]...)
			dst = append(dst, '"')
		} else {
			dst = AppendString(dst, buf[start:end])
		}
		start = end
	}
	return dst
}

// Clean reports whether s goes into a JSON string as it is: printable
// ASCII without a quote or a backslash.
func Clean(s []byte) bool { return clean(s, true) }

// AppendString appends s as a JSON string.
func AppendString(dst, s []byte) []byte {
	if clean(s, true) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	q, _ := json.Marshal(string(s))
	return append(dst, q...)
}

// Read reads what Append writes, with numbers of printable ASCII, in one
// pass and one string: the numbers are parts of it. It returns false for
// anything else, which the caller reads with encoding/json.
func Read(data []byte) ([]string, bool) {
	if len(data) < len(Open)+2 || string(data[:len(Open)]) != Open {
		return nil, false
	}
	end := len(data)
	for end > 0 && (data[end-1] == '\n' || data[end-1] == ' ' || data[end-1] == '\r') {
		end--
	}
	if end < len(Open)+2 || string(data[end-2:end]) != "]}" || !clean(data[len(Open):end-2], false) {
		return nil, false
	}
	body := string(data[len(Open) : end-2]) // "A","B": no escape, no control byte, ASCII
	if body == "" {
		return []string{}, true
	}
	nums := make([]string, 0, strings.Count(body, `"`)/2)
	for i := 0; i < len(body); {
		if body[i] != '"' {
			return nil, false
		}
		j := strings.IndexByte(body[i+1:], '"')
		if j < 0 {
			return nil, false
		}
		nums = append(nums, body[i+1:i+1+j])
		i += j + 2
		if i < len(body) {
			if body[i] != ',' || i+1 == len(body) {
				return nil, false
			}
			i++
		}
	}
	return nums, true
}

// clean reports whether b has no byte that a JSON string must escape or
// that is not ASCII: none below the space, none from 0x80, no backslash
// and, with quote, no quote. It looks at eight bytes at a time.
func clean(b []byte, quote bool) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// A byte of x is below n (n <= 0x80) where (x - n*ones) & ^x & highs
	// has its high bit; it equals c where x^(c*ones) is below 1.
	below := func(x, n uint64) uint64 { return (x - n*ones) & ^x & highs }
	q := uint64('"')
	if !quote {
		q = '\\' // tested already: the quote test tests nothing more
	}
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x&highs)|below(x, 0x20)|below(x^('\\'*ones), 1)|below(x^(q*ones), 1) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' || (quote && c == '"') {
			return false
		}
	}
	return true
}
