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
