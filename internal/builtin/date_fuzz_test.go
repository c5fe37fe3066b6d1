package builtin_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
)

// fuzzFormats are the formats FuzzDate picks from, with a fiscal start.
var fuzzFormats = []string{
	"yyyy", "yyyyMMdd", "yyMMdd", "yyyyDDD", "yyDDD", "yyyy'Q'Q", "yyQ", "yyyyMM",
	"YYYY'W'ww", "YYww", "ww", "DDD", "Q", "MMdd",
	"FFFF-ff", "'FY'ff", "ffff", "FF", "FFFFMM", "ffffMMdd", "ffQ",
	"yyyyMMddHH", "yyyyDDDHHmm", "yyyyMMddHHmmss", "YYYYwwHH",
}

var fuzzZones = []string{"UTC", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham", "Europe/London"}

// periodOf is the period of t, worked out here independently of the
// package: the key a reset period must give.
func periodOf(t time.Time, p builtin.Period, fiscal time.Month) string {
	y, m, d := t.Date()
	switch p {
	case builtin.Year:
		return fmt.Sprint(y)
	case builtin.FiscalYear:
		if m < fiscal {
			y--
		}
		return fmt.Sprint("FY", y)
	case builtin.Quarter:
		return fmt.Sprint(y, "Q", (m+2)/3)
	case builtin.Month:
		return fmt.Sprint(y, "-", m)
	case builtin.Week:
		wy, w := t.ISOWeek()
		return fmt.Sprint(wy, "W", w)
	case builtin.Day:
		return fmt.Sprint(y, "-", m, "-", d)
	case builtin.Hour:
		return fmt.Sprint(y, "-", m, "-", d, "T", t.Hour())
	case builtin.Minute:
		return fmt.Sprint(y, "-", m, "-", d, "T", t.Hour(), ":", t.Minute())
	case builtin.Second:
		return fmt.Sprint(y, "-", m, "-", d, "T", t.Hour(), ":", t.Minute(), ":", t.Second())
	}
	return ""
}

// FuzzDate prints an instant, reads the text back and checks that the
// instant read prints the same text, and that it is in the same period as
// the first for every period the format tells apart: two instants that
// print alike are in one reset period, which is what keeps a counter that
// resets from repeating a number.
func FuzzDate(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(4), int64(1609459200), false)   // 2021-01-01
	f.Add(uint8(8), uint8(1), uint8(4), int64(1609632000), true)    // 2021-01-03
	f.Add(uint8(14), uint8(2), uint8(7), int64(1735516800), false)  // 2024-12-30
	f.Add(uint8(22), uint8(2), uint8(1), int64(1730611800), true)   // a repeated hour in New York
	f.Add(uint8(16), uint8(3), uint8(10), int64(-2208988800), true) // 1900
	f.Fuzz(func(t *testing.T, fi, zi, fiscal uint8, unix int64, window bool) {
		format := fuzzFormats[int(fi)%len(fuzzFormats)]
		zone := fuzzZones[int(zi)%len(fuzzZones)]
		args := expression.Args{"format": format, "tz": zone}
		if strings.ContainsAny(format, "fF") {
			args["fiscal"] = fmt.Sprint(1 + int(fiscal)%12)
		}
		e, err := builtin.NewDate(args)
		if err != nil {
			t.Fatalf("NewDate(%v): %v", args, err)
		}
		d := e.(*builtin.Date)
		at := time.Unix(unix%(8000*365*86400), 0) // years about 0-9999
		if window {
			args["window"] = "2000"
			if e, err = builtin.NewDate(args); err != nil {
				return // no two-digit year
			}
			d = e.(*builtin.Date)
			at = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(unix%(98*365*86400)) * time.Second)
		}
		if d.Fits(at) != nil {
			return
		}
		text := string(d.AppendTime(nil, at))
		back, err := d.Read(text)
		if err != nil {
			t.Fatalf("%s in %s: %v printed %q, and Read says %v", format, zone, at, text, err)
		}
		if again := string(d.AppendTime(nil, back)); again != text {
			t.Fatalf("%s in %s: %q reads back as %v, which prints %q", format, zone, text, back, again)
		}
		for p := builtin.Year; p <= builtin.FiscalYear; p++ {
			if _, full := d.Tells(p); !full {
				continue
			}
			if a, b := periodOf(at.In(d.Loc), p, d.Fiscal), periodOf(back.In(d.Loc), p, d.Fiscal); a != b {
				t.Fatalf("%s in %s tells %ss apart, but %v (%s) and %v (%s) both print %q", format, zone, p, at, a, back, b, text)
			}
		}
	})
}
