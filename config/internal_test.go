package config

import "testing"

// A well-known backend whose package is not imported says which to
// import.
func TestUnknownElsewhere(t *testing.T) {
	elsewhere["sqlite"] = "example.com/sqlite"
	defer delete(elsewhere, "sqlite")
	want := `unknown (want bolt, memory, redis, redis-strict; import _ "example.com/sqlite" for sqlite)`
	if got := unknown("sqlite"); got != want {
		t.Errorf("unknown = %s, want %s", got, want)
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{{"", "", 0}, {"rdis", "redis", 1}, {"bolt", "blot", 2}, {"", "abc", 3}, {"kitten", "sitting", 3}}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
