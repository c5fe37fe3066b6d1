package client

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readNumbers reads what encoding/json reads, or declines.
func TestReadNumbers(t *testing.T) {
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
	} {
		got, ok := readNumbers([]byte(in))
		var want struct{ Numbers []string }
		err := json.Unmarshal([]byte(in), &want)
		if ok && (err != nil || !cmp.Equal(got, want.Numbers)) {
			t.Errorf("readNumbers(%s) = %q; encoding/json reads %q, %v", in, got, want.Numbers, err)
		}
	}
	if _, ok := readNumbers([]byte(`{"numbers":["SN-1","SN-2"]}` + "\n")); !ok {
		t.Error("readNumbers declines what sn serve writes")
	}
}

// FuzzReadNumbers: whatever readNumbers accepts, encoding/json reads
// alike.
func FuzzReadNumbers(f *testing.F) {
	f.Add(`{"numbers":["SN-1","SN-2"]}`)
	f.Add(`{"numbers":["a\"b"]}`)
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := readNumbers([]byte(in))
		if !ok {
			return
		}
		var want struct {
			Numbers []string `json:"numbers"`
		}
		if err := json.Unmarshal([]byte(in), &want); err != nil || !cmp.Equal(got, want.Numbers, cmp.Comparer(func(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) })) {
			t.Errorf("readNumbers(%q) = %q; encoding/json: %q, %v", in, got, want.Numbers, err)
		}
	})
}
