package sn_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// Calendar periods: each call is a number and its counter key at an
// instant in a time zone, and each number reads back to that key.
func TestCalendarPeriods(t *testing.T) {
	utc := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }
	in := func(zone string, y int, m time.Month, d, h, min int) time.Time {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		return time.Date(y, m, d, h, min, 0, 0, loc)
	}
	type call struct {
		at   time.Time
		want string // the number
		key  string // the period in its counter key
	}
	tests := []struct {
		name  string
		tpl   string
		calls []call
	}{
		{"ISO week at year ends", `W@<date, format=YYYY-'W'ww>-@<seq, width=3, reset=week>`, []call{
			{utc(2020, 12, 28, 0), "W2020-W53-001", "2020-W53"},
			{utc(2020, 12, 31, 12), "W2020-W53-002", "2020-W53"}, // a Thursday: week 53 of 2020
			{utc(2021, 1, 3, 23), "W2020-W53-003", "2020-W53"},   // a Sunday in January: still 2020-W53
			{utc(2021, 1, 4, 0), "W2021-W01-001", "2021-W01"},    // Monday: a new week, a new counter
			{utc(2024, 12, 29, 23), "W2024-W52-001", "2024-W52"},
			{utc(2024, 12, 30, 0), "W2025-W01-001", "2025-W01"}, // a Monday in December: week 1 of 2025
			{utc(2025, 1, 5, 23), "W2025-W01-002", "2025-W01"},
			{utc(2026, 1, 1, 0), "W2026-W01-001", "2026-W01"},
		}},
		{"ISO week in a time zone", `@<date, format=YYYYww, tz=Asia/Tokyo>@<seq, width=2, reset=week>`, []call{
			{utc(2024, 12, 29, 14), "20245201", "2024-W52"}, // 23:00 on Sunday in Tokyo
			{utc(2024, 12, 29, 15), "20250101", "2025-W01"}, // midnight on Monday in Tokyo, still Sunday in UTC
		}},
		{"fiscal year from April, printed 2024-25", `INV/@<date, format=FFFF-ff, fiscal=4>/@<seq, reset=fiscal-year>`, []call{
			{utc(2024, 3, 31, 23), "INV/2023-24/1", "FY2023-04"},
			{utc(2024, 4, 1, 0), "INV/2024-25/1", "FY2024-04"},
			{utc(2025, 1, 15, 0), "INV/2024-25/2", "FY2024-04"}, // January is in the fiscal year that began in April
			{utc(2025, 3, 31, 23), "INV/2024-25/3", "FY2024-04"},
			{utc(2025, 4, 1, 0), "INV/2025-26/1", "FY2025-04"},
		}},
		{"fiscal year from July, printed FY25", `@<date, format='FY'ff, window=2000, fiscal=jul>-@<seq, width=4, reset=fiscal-year>`, []call{
			{utc(2024, 6, 30, 23), "FY24-0001", "FY2023-07"},
			{utc(2024, 7, 1, 0), "FY25-0001", "FY2024-07"},
			{utc(2025, 6, 30, 0), "FY25-0002", "FY2024-07"},
		}},
		{"fiscal year in Kolkata", `@<date, format=ffff, fiscal=4, tz=Asia/Kolkata>-@<seq, reset=fiscal-year>`, []call{
			{utc(2025, 3, 31, 18), "2025-1", "FY2024-04"}, // 23:30 on March 31 in Kolkata
			{utc(2025, 3, 31, 19), "2026-1", "FY2025-04"}, // 00:30 on April 1 in Kolkata
		}},
		{"fiscal year told by year and month", `@<date, format=yyyyMM, fiscal=10>@<seq, width=4, reset=fiscal-year>`, []call{
			{utc(2024, 9, 30, 0), "2024090001", "FY2023-10"},
			{utc(2024, 10, 1, 0), "2024100001", "FY2024-10"},
			{utc(2025, 2, 1, 0), "2025020002", "FY2024-10"},
		}},
		{"fiscal year starting in January", `@<date, format=ffff, fiscal=1>-@<seq, reset=fiscal-year>`, []call{
			{utc(2024, 12, 31, 0), "2024-1", "FY2024-01"},
			{utc(2025, 1, 1, 0), "2025-1", "FY2025-01"},
		}},
		{"quarter", `@<date, format=yyyy'Q'Q>-@<seq, width=3, reset=quarter>`, []call{
			{utc(2024, 3, 31, 23), "2024Q1-001", "2024-Q1"},
			{utc(2024, 4, 1, 0), "2024Q2-001", "2024-Q2"},
			{utc(2024, 6, 30, 0), "2024Q2-002", "2024-Q2"},
			{utc(2024, 12, 31, 23), "2024Q4-001", "2024-Q4"},
			{utc(2025, 1, 1, 0), "2025Q1-001", "2025-Q1"},
		}},
		{"quarter told by the month", `@<date, format=yyMM, window=2000>@<seq, width=3, reset=quarter>`, []call{
			{utc(2024, 4, 1, 0), "2404001", "2024-Q2"},
			{utc(2024, 5, 1, 0), "2405002", "2024-Q2"},
			{utc(2024, 7, 1, 0), "2407001", "2024-Q3"},
		}},
		{"day of year: yyDDD waybills", `@<date, format=yyDDD, window=2000>@<seq, width=5, reset=day>`, []call{
			{utc(2024, 1, 1, 0), "2400100001", "2024-01-01"},
			{utc(2024, 2, 29, 0), "2406000001", "2024-02-29"},
			{utc(2024, 12, 31, 0), "2436600001", "2024-12-31"}, // a leap year has 366 days
			{utc(2025, 12, 31, 0), "2536500001", "2025-12-31"},
		}},
		{"hour", `@<date, format=yyyyMMddHH>-@<seq, width=3, reset=hour>`, []call{
			{utc(2024, 1, 1, 23), "2024010123-001", "2024-01-01T23"},
			{time.Date(2024, 1, 1, 23, 59, 59, 0, time.UTC), "2024010123-002", "2024-01-01T23"},
			{utc(2024, 1, 2, 0), "2024010200-001", "2024-01-02T00"},
		}},
		{"an hour a zone repeats shares one counter", `@<date, format=yyyyMMddHH, tz=America/New_York>-@<seq, width=2, reset=hour>`, []call{
			{in("America/New_York", 2024, 11, 3, 1, 30), "2024110301-01", "2024-11-03T01"},
			{in("America/New_York", 2024, 11, 3, 1, 30).Add(time.Hour), "2024110301-02", "2024-11-03T01"}, // 1:30 again
		}},
		{"minute", `@<date, format=yyMMddHHmm, window=2000>@<seq, width=2, reset=minute>`, []call{
			{time.Date(2024, 1, 1, 10, 5, 59, 0, time.UTC), "240101100501", "2024-01-01T10:05"},
			{time.Date(2024, 1, 1, 10, 6, 0, 0, time.UTC), "240101100601", "2024-01-01T10:06"},
		}},
		{"second", `@<date, format=yyyyMMddHHmmss>@<seq, width=3, reset=second>`, []call{
			{time.Date(2024, 1, 1, 10, 5, 59, 0, time.UTC), "20240101100559001", "2024-01-01T10:05:59"},
			{time.Date(2024, 1, 1, 10, 5, 59, 999999999, time.UTC), "20240101100559002", "2024-01-01T10:05:59"},
			{time.Date(2024, 1, 1, 10, 6, 0, 0, time.UTC), "20240101100600001", "2024-01-01T10:06:00"},
		}},
		{"second from day of year", `@<date, format=yyyyDDDHHmmss>@<seq, width=2, reset=second>`, []call{
			{time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC), "2024366235959" + "01", "2024-12-31T23:59:59"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The store's clock is at the calls' instants: counters per
			// hour, minute or second expire by it, and an instant long
			// before it is refused.
			storeNow := func() time.Time { return tt.calls[0].at }
			g, err := sn.New(tt.tpl, sn.WithSequence("seq", &sequence.Memory{Clock: storeNow}))
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, c := range tt.calls {
				s, err := first(g.Issue(ctx, sn.Request{At: c.at}))
				if err != nil {
					t.Fatalf("NextAt(%v): %v", c.at, err)
				}
				p, err := g.Parse(s)
				if err != nil {
					t.Fatalf("Parse(%q): %v", s, err)
				}
				period := p.Key[strings.LastIndexByte(p.Key, '|')+1:]
				got, want = append(got, s+" "+period), append(want, c.want+" "+c.key)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// What is refused, and why.
func TestCalendarErrors(t *testing.T) {
	tests := []struct {
		tpl, want string
	}{
		{`@<date, format=yyyy-ww>@<seq>`, `yyyy with ww: around January 1 the calendar year is not the week's year (2024-12-30 is in week 01 of 2025), so it would print 2024-W01 twice; use YYYY, the ISO week-based year`},
		{`@<date, format=YYYYMMdd>@<seq>`, `YYYY is the ISO week-based year, which is not the calendar year around January 1 (2021-01-03 is in 2020); use yyyy for the year, or add ww`},
		{`@<date, format=YYYYMMDD>@<seq>`, `did you mean format=yyyyMMdd?`},
		{`@<date, format=YYYYwwdd>@<seq>`, `a week is printed with its week-based year and the time of day only`},
		{`@<date, format=yyyyDDDdd>@<seq>`, `DDD is the day of the year: with dd it prints the day twice`},
		{`@<date, format='FY'ff>@<seq>`, `format="'FY'ff" prints a fiscal year: say the month it starts in with fiscal= (fiscal=4 for April)`},
		{`@<date, format=ffff, fiscal=13>@<seq>`, `fiscal="13": want a month 1-12`},
		{`@<date, format=ffff, fiscal=march>@<seq>`, ``}, // accepted: a month's name
		{`@<date, format=ffff, fiscal=ma>@<seq>`, `fiscal="ma": want a month 1-12 or its name (apr, April)`},
		{`@<date, format='FY>@<seq>`, `the quote at byte 0 is not closed`},
		{`@<date, format=yyyy>@<seq, reset=fiscal-year>`, `reset=fiscal-year needs a date that tells fiscal-years apart (such as @<date, format='FY'ff, fiscal=4> with the month the fiscal year starts in)`},
		{`@<date, format=yyyyMM>@<seq, reset=fiscal-year>`, `reset=fiscal-year needs a date that tells fiscal-years apart`}, // no fiscal=: which year?
		{`@<date, format=yyyyMMdd>@<seq, reset=week>`, `reset=week needs a date that tells weeks apart (such as @<date, format=YYYY'W'ww>, the ISO week-based year and week)`},
		{`@<date, format=yyyy>@<seq, reset=quarter>`, `reset=quarter needs a date that tells quarters apart`},
		{`@<date, format=yyyyQ>@<seq, reset=month>`, `reset=month needs a date that tells months apart`},
		{`@<date, format=yyyyMMdd>@<seq, reset=hour>`, `reset=hour needs a date that tells hours apart (such as @<date, format=yyyyMMddHH>)`},
		{`@<date, format=yyyyMMddHHss>@<seq, reset=second>`, `reset=second needs a date that tells seconds apart`},
		{`@<date, format=YYww>-@<seq, reset=week>`, `whose two-digit year prints the same digits for 2017 and 2117; add window=2000`},
		{`@<date, format=ff, fiscal=4>-@<seq, reset=fiscal-year>`, `whose two-digit year prints the same digits for 2017 and 2117; add window=2000`},
		{`@<date, format=yyQ>-@<seq, reset=quarter>`, `whose two-digit year prints the same digits for 2017 and 2117; add window=2000`},
	}
	for _, tt := range tests {
		_, err := sn.New(tt.tpl, mem())
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("New(%s): %v", tt.tpl, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("New(%s) = %v,\nwant an error with %q", tt.tpl, err, tt.want)
		}
	}
}

// Text that a format cannot print is refused when read back.
func TestCalendarValidate(t *testing.T) {
	tests := []struct {
		tpl, number, want string
	}{
		{`@<date, format=YYYY'W'ww>-@<seq, reset=week>`, "2021W53-1", "the year has no week 53"},
		{`@<date, format=YYYY'W'ww>-@<seq, reset=week>`, "2020W53-1", ""},
		{`@<date, format=yyyyDDD>-@<seq, reset=day>`, "2023366-1", "day 366 of a year of 365 days"},
		{`@<date, format=yyyyDDD>-@<seq, reset=day>`, "2024366-1", ""},
		{`@<date, format=FFFF-ff, fiscal=4>/@<seq, reset=fiscal-year>`, "2024-26/1", "its fields disagree"},
		{`@<date, format=FFFF-ff, fiscal=1>/@<seq, reset=fiscal-year>`, "2024-24/1", ""},
		{`@<date, format=yyyyMM'Q'Q>/@<seq, reset=quarter>`, "202409Q2/1", "its fields disagree"},
		{`@<date, format=yyyyMMddHH, tz=America/New_York>/@<seq, reset=hour>`, "2024031002/1", "America/New_York skips that time"},
	}
	for _, tt := range tests {
		g := mustNew(t, tt.tpl)
		err := g.Validate(tt.number)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Validate(%s): %v", tt.tpl, tt.number, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Validate(%s) = %v, want an error with %q", tt.tpl, tt.number, err, tt.want)
		}
	}
}

// Over many instants across years, in several zones, a template with a
// reset never prints one number twice, and every number reads back to the
// counter key it was drawn from: for every period and the formats that tell
// it apart.
func TestCalendarPeriodsNeverRepeat(t *testing.T) {
	tpls := []string{
		`@<date, format=yyyy>-@<seq, reset=year>`,
		`@<date, format=yyyyMMdd>-@<seq, reset=year>`,
		`@<date, format=FFFF-ff, fiscal=4>-@<seq, reset=fiscal-year>`,
		`@<date, format='FY'ff, fiscal=7, window=2000>-@<seq, reset=fiscal-year>`,
		`@<date, format=FFFF, fiscal=oct>-@<seq, reset=fiscal-year>`,
		`@<date, format=yyyyMM, fiscal=4>-@<seq, reset=fiscal-year>`,
		`@<date, format=yyyy'Q'Q>-@<seq, reset=quarter>`,
		`@<date, format=yyyyMM>-@<seq, reset=quarter>`,
		`@<date, format=YYYY'W'ww>-@<seq, reset=week>`,
		`@<date, format=YYww, window=2000>-@<seq, reset=week>`,
		`@<date, format=yyDDD, window=2000>-@<seq, reset=day>`,
		`@<date, format=yyyyMMddHH>-@<seq, reset=hour>`,
		`@<date, format=yyyyDDDHHmm>-@<seq, reset=minute>`,
		`@<date, format=yyyy'Q'Q>-@<seq, reset=year>`,
		`@<date, format=YYYY'W'ww>-@<seq>`,
	}
	zones := []string{"UTC", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe", "Pacific/Kiritimati", "America/St_Johns"}
	r := rand.New(rand.NewPCG(1, 2))
	issued := 0
	for _, tpl := range tpls {
		for _, zone := range zones {
			src := strings.Replace(tpl, ">-", ", tz="+zone+">-", 1)
			// The instants jump across years: a retention of a century
			// keeps the clock guard of hour and minute resets out of it
			// (TestClockGuard tests it).
			g := mustNew(t, src, sn.WithRetention(100*365*24*time.Hour))
			seen := map[string]time.Time{}
			// Instants near the turns of periods, where mistakes live, and at random.
			base := time.Date(2019, 12, 20, 0, 0, 0, 0, time.UTC)
			for i := range 4000 {
				var at time.Time
				if i%2 == 0 {
					at = base.Add(time.Duration(r.Int64N(int64(8 * 365 * 24 * time.Hour))))
				} else {
					y := 2019 + r.IntN(8)
					m := time.Month(1 + r.IntN(12))
					at = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(7200)-3600)*time.Second + time.Duration(r.IntN(48)-24)*time.Hour)
				}
				s, err := first(g.Issue(ctx, sn.Request{At: at}))
				if err != nil {
					t.Fatalf("%s: NextAt(%v): %v", src, at, err)
				}
				if prev, ok := seen[s]; ok {
					t.Fatalf("%s printed %q at %v and at %v", src, s, prev, at)
				}
				seen[s] = at
				issued++
				p, err := g.Parse(s)
				if err != nil {
					t.Fatalf("%s: Parse(%q): %v", src, s, err)
				}
				// The key read back is the key drawn from: drawing again at
				// the instant Parse read gives the next number of that key.
				d, err := g.Preview(ctx, sn.Request{At: at})
				if err != nil {
					t.Fatal(err)
				}
				q, _ := g.Parse(d[0])
				if q.Key != p.Key {
					t.Fatalf("%s: %q reads back to %q, the counter at %v is %q", src, s, p.Key, at, q.Key)
				}
			}
		}
	}
	t.Logf("%d numbers over %d templates in %d zones: 0 repeats", issued, len(tpls), len(zones))
}

func ExampleGenerator_fiscalYear() {
	g := sn.MustNew(`INV/@<date, format=FFFF-ff, fiscal=4, tz=Asia/Kolkata>/@<seq, width=4, reset=fiscal-year>`, mem())
	for _, at := range []string{"2025-03-31T23:00:00+05:30", "2025-04-01T09:00:00+05:30", "2026-01-15T09:00:00+05:30"} {
		t, _ := time.Parse(time.RFC3339, at)
		s, _ := first(g.Issue(ctx, sn.Request{At: t}))
		fmt.Println(s)
	}
	// Output:
	// INV/2024-25/0001
	// INV/2025-26/0001
	// INV/2025-26/0002
}

func ExampleGenerator_isoWeek() {
	g := sn.MustNew(`@<date, format=YYYY'W'ww>-@<seq, width=3, reset=week>`, mem())
	for _, day := range []string{"2020-12-31", "2021-01-03", "2021-01-04", "2024-12-30"} {
		t, _ := time.Parse(time.DateOnly, day)
		s, _ := first(g.Issue(ctx, sn.Request{At: t}))
		fmt.Println(day, s)
	}
	// Output:
	// 2020-12-31 2020W53-001
	// 2021-01-03 2020W53-002
	// 2021-01-04 2021W01-001
	// 2024-12-30 2025W01-001
}
