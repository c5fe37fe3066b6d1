package parser

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"rdis", "redis", 1}, {"bolt", "blot", 1}, {"", "abc", 3},
		{"kitten", "sitting", 3}, {"widht", "width", 1}, {"dte", "date", 1},
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"checksum", "date", "ownerKey", "random", "seq"}
	tests := []struct{ word, want string }{
		{"dte", "date"},  // one edit in a short word
		{"daet", "date"}, // a swap is one edit
		{"ownerkey", "ownerKey"},
		{"chcksm", "checksum"}, // two edits in a long word
		{"sq", "seq"},
		{"area", ""}, // two edits in a short word: a variable, not a typo
		{"unit", ""},
		{"date", ""},      // the name itself
		{"randomize", ""}, // three edits
	}
	for _, tt := range tests {
		if got := Closest(tt.word, names); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
