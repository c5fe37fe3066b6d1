package builtin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
)

var ctx = context.Background()

func TestDateAppend(t *testing.T) {
	at := time.Date(2017, 3, 4, 21, 5, 9, 0, time.UTC) // 05:05:09 on 5 March in Shanghai
	tests := []struct {
		name string
		args expression.Args
		want string
	}{
		{"default", nil, "20170304"},
		{"all fields", expression.Args{"format": "yyyy-MM-dd HH:mm:ss"}, "2017-03-04 21:05:09"},
		{"short year", expression.Args{"format": "yyMMdd"}, "170304"},
		{"time zone", expression.Args{"format": "yyyyMMddHH", "tz": "Asia/Shanghai"}, "2017030505"},
		{"west of UTC", expression.Args{"format": "yyyyMMdd", "tz": "America/Los_Angeles"}, "20170304"},
		{"literals", expression.Args{"format": "yyyy/MM"}, "2017/03"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := builtin.NewDate(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Append(nil, expression.NewContext(ctx, at, nil))
			if err != nil || string(got) != tt.want {
				t.Errorf("Append = %q, %v; want %q", got, err, tt.want)
			}
			if e.MaxLen() != len(tt.want) {
				t.Errorf("MaxLen = %d, want %d", e.MaxLen(), len(tt.want))
			}
		})
	}
}
func TestDateErrors(t *testing.T) {
	tests := []struct {
		args expression.Args
		arg  string
		msg  string
	}{
		{expression.Args{"format": ""}, "format", `format="": empty format`},
		{expression.Args{"format": "yyy"}, "format", `format="yyy": unknown field "yyy" (use yyyy, yy, Q, MM, dd, DDD, YYYY, ww, ffff, ff, FFFF, FF, HH, mm, ss; quote other letters: 'T')`},
		{expression.Args{"format": "yyyyMMyyyy"}, "format", `format="yyyyMMyyyy": field "yyyy" appears twice`},
		{expression.Args{"format": "M"}, "format", `format="M": unknown field "M" (use yyyy, yy, Q, MM, dd, DDD, YYYY, ww, ffff, ff, FFFF, FF, HH, mm, ss; quote other letters: 'T')`},
		{expression.Args{"tz": "Local"}, "tz", `tz="Local": unknown time zone (use an IANA name such as Asia/Shanghai, or UTC)`},
		{expression.Args{"zone": "UTC"}, "zone", `unknown argument "zone" (known: fiscal, format, tz, window)`},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			_, err := builtin.NewDate(tt.args)
			var ae *expression.ArgError
			if !errors.As(err, &ae) || ae.Arg != tt.arg || err.Error() != tt.msg || !errors.Is(err, expression.ErrBadArg) {
				t.Errorf("NewDate(%v) = %v (arg %v), want %q on %q", tt.args, err, ae, tt.msg, tt.arg)
			}
		})
	}
}
func TestDateFinest(t *testing.T) {
	tests := map[string]builtin.Period{
		"yyyyMMdd": builtin.Day, "yyMMddHHmmss": builtin.Second, "ddMMyy": builtin.Day,
		"yyyyMMddHH": builtin.Hour, "yyDDDHHmm": builtin.Minute, "yyyyQ": builtin.Year, "YYYYww": builtin.Never,
		"yyyyMM": builtin.Month, "yyyy": builtin.Year, "MMdd": builtin.Never, "HHmm": builtin.Never,
	}
	for f, want := range tests {
		e, err := builtin.NewDate(expression.Args{"format": f})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.(*builtin.Date).Finest(); got != want {
			t.Errorf("Finest(%s) = %v, want %v", f, got, want)
		}
	}
}
func TestRandom(t *testing.T) {
	e, err := builtin.NewRandom(expression.Args{"width": "64", "alphabet": "AB"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[byte]int{}
	for i := 0; i < 50; i++ {
		b, err := e.Append(nil, expression.NewContext(ctx, time.Time{}, nil))
		if err != nil || len(b) != 64 {
			t.Fatalf("Append = %q, %v", b, err)
		}
		for _, ch := range b {
			seen[ch]++
		}
	}
	if len(seen) != 2 || seen['A'] < 1000 || seen['B'] < 1000 {
		t.Errorf("3200 draws from AB gave %v", seen)
	}
	for _, bad := range []expression.Args{{"width": "0"}, {"width": "65"}, {"width": "3", "alphabet": "A"}, {"width": "3", "alphabet": "AA"}, {"width": "3", "alphabet": "é"}} {
		if _, err := builtin.NewRandom(bad); err == nil {
			t.Errorf("NewRandom(%v) accepted", bad)
		}
	}
	if p := mustPattern(t, expression.Args{"width": "2", "alphabet": "a-c-"}); p != `[\-a-c]{2}` {
		t.Errorf("Pattern = %s", p)
	}
}
func mustPattern(t *testing.T, args expression.Args) string {
	e, err := builtin.NewRandom(args)
	if err != nil {
		t.Fatal(err)
	}
	return e.(expression.Patterner).Pattern()
}
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
