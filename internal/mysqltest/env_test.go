package mysqltest

import (
	"strings"
	"testing"
)

func TestMissingBinariesSayMakeTest(t *testing.T) {
	_, _, err := findBinaries([]string{"/nonexistent/mariadb-install-db"}, []string{"/nonexistent/mariadbd"})
	if err == nil {
		t.Fatal("findBinaries found MariaDB where there is none")
	}
	for _, want := range []string{"mariadb-install-db", "mariadbd", "make test"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestDatabaseName(t *testing.T) {
	tests := []struct {
		test string
		n    int64
		want string
	}{
		{"TestX", 1, "t_testx_1"},
		{"TestKill/sub_test#01", 12, "t_testkill_sub_test_01_12"},
		{"Test--odd__", 3, "t_test_odd_3"},
		{strings.Repeat("A", 100), 123, "t_" + strings.Repeat("a", 58) + "_123"},
	}
	for _, tt := range tests {
		got := databaseName(tt.test, tt.n)
		if got != tt.want {
			t.Errorf("databaseName(%q, %d) = %q, want %q", tt.test, tt.n, got, tt.want)
		}
		if len(got) > 64 {
			t.Errorf("databaseName(%q, %d) is %d bytes, more than 64", tt.test, tt.n, len(got))
		}
	}
}
