package batchjson

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// strs is a Batch of strings.
type strs []string

func (s strs) Len() int           { return len(s) }
func (s strs) Bytes(i int) []byte { return []byte(s[i]) }

// Append writes JSON that encoding/json reads back as the numbers, and
// Read reads it alike, whatever their characters.
func TestAppendRead(t *testing.T) {
	for _, nums := range [][]string{
		{"SN-00000001-8", "SN-00000002-6"},
		{"SN-00000001-8", `a"b`, `back\slash`, "é/ü", "\x01\n", "<&>", "", "\x7f"},
		{"x"},
		{},
	} {
		out := Append(nil, strs(nums))
		var got struct{ Numbers []string }
		if err := json.Unmarshal(out, &got); err != nil || len(got.Numbers) != len(nums) {
			t.Fatalf("%q: %v in %s", nums, err, out)
		}
		for i := range nums {
			if got.Numbers[i] != nums[i] {
				t.Errorf("%q read back as %q", nums[i], got.Numbers[i])
			}
		}
		if read, ok := Read(out); ok && !cmp.Equal(read, got.Numbers, cmp.Comparer(sameStrings)) {
			t.Errorf("Read(%s) = %q", out, read)
		}
	}
	if read, ok := Read(Append(nil, strs{"SN-1", "SN-2"})); !ok || !cmp.Equal(read, []string{"SN-1", "SN-2"}) {
		t.Errorf("Read declines what Append writes: %q %v", read, ok)
	}
}

func sameStrings(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) }

// Read reads what encoding/json reads, or declines.
func TestRead(t *testing.T) {
	for _, in := range []string{
		`{"numbers":["SN-1","SN-2"]}` + "\n",
		`{"numbers":["A"]}`,
		`{"numbers":[]}`,
		`{"numbers":["a,b","c\",\"d"]}`,
		`{"numbers":["é","x"]}`,
		`{"numbers":["a\\b"]}`,
		`{"numbers":["a"],}`,
		`{"numbers":["a",]}`,
		`{"numbers":["a""b"]}`,
		`{"numbers":["a"`,
		`{"numbers":[1]}`,
		`{"numbers": ["a"]}`,
		`{"numbers":["a"]} x`,
		`{"numbers":["a","b"]}]}`,
		`{"numbers":["a"]}]}`,
		`{"numbers":["` + "\xe8" + `"]}`,
	} {
		got, ok := Read([]byte(in))
		var want struct{ Numbers []string }
		err := json.Unmarshal([]byte(in), &want)
		if ok && (err != nil || !cmp.Equal(got, want.Numbers, cmp.Comparer(sameStrings))) {
			t.Errorf("Read(%s) = %q; encoding/json reads %q, %v", in, got, want.Numbers, err)
		}
	}
}

// clean agrees with its byte-by-byte definition at every position of a
// word and in the tail.
func TestClean(t *testing.T) {
	for _, quote := range []bool{true, false} {
		for c := range 256 {
			for pos := range 19 {
				b := []byte("SN-00000001-8/ABCDEFG")[:19]
				b[pos] = byte(c)
				if got, want := clean(b, quote), cleanBytes(b, quote); got != want {
					t.Errorf("clean with %#x at %d (quote %v) = %v, want %v", c, pos, quote, got, want)
				}
			}
		}
	}
}

func cleanBytes(b []byte, quote bool) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' || (quote && c == '"') {
			return false
		}
	}
	return true
}

// FuzzRead: whatever Read accepts, encoding/json reads alike.
func FuzzRead(f *testing.F) {
	f.Add(`{"numbers":["SN-1","SN-2"]}`)
	f.Add(`{"numbers":["a\"b"]}`)
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := Read([]byte(in))
		if !ok {
			return
		}
		var want struct {
			Numbers []string `json:"numbers"`
		}
		if err := json.Unmarshal([]byte(in), &want); err != nil || !cmp.Equal(got, want.Numbers, cmp.Comparer(sameStrings)) {
			t.Errorf("Read(%q) = %q; encoding/json: %q, %v", in, got, want.Numbers, err)
		}
	})
}

// FuzzAppend: Append writes JSON that encoding/json reads back as the
// numbers, and clean is its byte-by-byte definition.
func FuzzAppend(f *testing.F) {
	f.Add("SN-00000001-8", `a"b`)
	f.Fuzz(func(t *testing.T, a, b string) {
		if clean([]byte(a), true) != cleanBytes([]byte(a), true) || clean([]byte(a), false) != cleanBytes([]byte(a), false) {
			t.Errorf("clean(%q) disagrees", a)
		}
		var got struct{ Numbers []string }
		if err := json.Unmarshal(Append(nil, strs{a, b}), &got); err != nil {
			t.Fatal(err)
		}
		// encoding/json turns invalid UTF-8 into U+FFFD, as it would
		// for any JSON writer's output.
		wa, _ := json.Marshal(a)
		wb, _ := json.Marshal(b)
		var ra, rb string
		json.Unmarshal(wa, &ra)
		json.Unmarshal(wb, &rb)
		if len(got.Numbers) != 2 || got.Numbers[0] != ra || got.Numbers[1] != rb {
			t.Errorf("(%q, %q) read back as %q", a, b, got.Numbers)
		}
	})
}

// A list read whole from a flat buffer (AppendList), framed, writes what
// Append writes number by number, the numbers that need escaping
// included.
func TestAppendList(t *testing.T) {
	for _, nums := range [][]string{
		{}, {"SN-00000001-8"}, {"SN-00000001-8", "SN-00000002-6", "A", ""},
		{"a\"b", "c\\d", "e\x01", "ü", "SN-1"}, {"SN-1", "ü"},
	} {
		var buf []byte
		var ends []int
		for _, n := range nums {
			buf = append(buf, n...)
			ends = append(ends, len(buf))
		}
		got := string(append(AppendList([]byte(Open), buf, ends), Close...))
		want := string(Append(nil, strs(nums)))
		if got != want {
			t.Errorf("%q: flat %s, number by number %s", nums, got, want)
		}
		var back struct{ Numbers []string }
		if err := json.Unmarshal([]byte(got), &back); err != nil || !cmp.Equal(back.Numbers, nums, cmpopts.EquateEmpty()) {
			t.Errorf("%q: %s reads back as %q, %v", nums, got, back.Numbers, err)
		}
	}
}
