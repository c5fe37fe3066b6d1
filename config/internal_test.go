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
