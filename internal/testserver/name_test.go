package testserver

import (
	"strings"
	"testing"
)

func TestDatabaseName(t *testing.T) {
	tests := []struct {
		test string
		n    int64
		max  int
		want string
	}{
		{"TestX", 1, 63, "t_testx_1"},
		{"TestKill/sub_test#01", 12, 63, "t_testkill_sub_test_01_12"},
		{"Test--odd__", 3, 63, "t_test_odd_3"},
		{strings.Repeat("A", 100), 123, 63, "t_" + strings.Repeat("a", 57) + "_123"}, // PostgreSQL
		{strings.Repeat("A", 100), 123, 64, "t_" + strings.Repeat("a", 58) + "_123"}, // MariaDB
	}
	for _, tt := range tests {
		got := DatabaseName(tt.test, tt.n, tt.max)
		if got != tt.want {
			t.Errorf("DatabaseName(%q, %d, %d) = %q, want %q", tt.test, tt.n, tt.max, got, tt.want)
		}
		if len(got) > tt.max {
			t.Errorf("DatabaseName(%q, %d, %d) is %d bytes, more than %d", tt.test, tt.n, tt.max, len(got), tt.max)
		}
	}
}
