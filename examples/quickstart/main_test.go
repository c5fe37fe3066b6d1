package main

import (
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	at := func() time.Time { return time.Date(2017, 3, 4, 2, 0, 0, 0, time.UTC) }
	if err := run(&out, at); err != nil {
		t.Fatal(err)
	}
	want := `SN-00000001-8
SN-00000002-6
SN-00000003-4
2017030400001
010-6541-00001
010-6542-00001
010-6541-00002
true sn: invalid number "SN-00000001-3": checksum at offset 38: check "3" is wrong for "00000001" (luhn)
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
