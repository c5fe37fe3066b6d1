package testserver

import (
	"strconv"
	"strings"
)

// DatabaseName makes a database name from a test's name and a number that
// keeps it unique: "t_" and the lower-case name with runs of other
// characters than letters and digits made "_", cut to fit max bytes (the
// server's limit), then "_" and the number.
func DatabaseName(test string, n int64, max int) string {
	var b strings.Builder
	b.WriteString("t_")
	under := true
	for _, r := range strings.ToLower(test) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	suffix := strconv.FormatInt(n, 10)
	name := strings.TrimSuffix(b.String(), "_")
	if room := max - len(suffix) - 1; len(name) > room {
		name = name[:room]
	}
	return name + "_" + suffix
}
