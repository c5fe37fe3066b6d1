package sn_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
)

// A call reads the clock once, so the printed date and the reset period can
// never disagree at a boundary, and numbers restart only when the printed
// period changes.
func TestResetBoundaries(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		at   time.Time
		want string
	}
	utc := func(y int, m time.Month, d, h, min, s int) time.Time {
		return time.Date(y, m, d, h, min, s, 0, time.UTC)
	}
	tests := []struct {
		name  string
		tpl   string
		calls []call
	}{
		{"midnight UTC", `@<date, format=yyyyMMdd>-@<seq, width=3, reset=day>`, []call{
			{utc(2024, 2, 28, 23, 59, 59), "20240228-001"},
			{utc(2024, 2, 28, 23, 59, 59), "20240228-002"},
			{utc(2024, 2, 29, 0, 0, 0), "20240229-001"},
			{utc(2024, 3, 1, 0, 0, 0), "20240301-001"},
			{utc(2024, 2, 29, 12, 0, 0), "20240229-002"}, // a back-dated document continues its day
		}},
		{"month", `@<date, format=yyMM, window=2000>@<seq, width=4, reset=month>`, []call{
			{utc(2023, 12, 31, 23, 0, 0), "23120001"},
			{utc(2024, 1, 1, 0, 0, 0), "24010001"},
			{utc(2024, 1, 31, 23, 59, 59), "24010002"},
			{utc(2024, 2, 1, 0, 0, 0), "24020001"},
		}},
		{"year", `INV/@<date, format=yyyy>/@<seq, reset=year>`, []call{
			{utc(2023, 12, 31, 23, 59, 59), "INV/2023/1"},
			{utc(2024, 1, 1, 0, 0, 0), "INV/2024/1"},
			{utc(2024, 6, 1, 0, 0, 0), "INV/2024/2"},
		}},
		{"finer date allows coarser reset", `@<date, format=yyyyMMddHH>@<seq, width=2, reset=month>`, []call{
			{utc(2024, 1, 1, 5, 0, 0), "202401010501"},
			{utc(2024, 1, 2, 5, 0, 0), "202401020502"},
			{utc(2024, 2, 1, 0, 0, 0), "202402010001"},
		}},
		{"time zone east of UTC", `@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=2, reset=day>`, []call{
			{utc(2024, 5, 1, 15, 59, 59), "2024050101"}, // 23:59:59 in Shanghai
			{utc(2024, 5, 1, 16, 0, 0), "2024050201"},   // midnight in Shanghai
			{utc(2024, 5, 1, 23, 0, 0), "2024050202"},   // still 2 May in Shanghai, a new day in UTC: no reset
		}},
		{"daylight saving time", `@<date, format=yyyyMMddHH, tz=America/New_York>@<seq, width=2, reset=day>`, []call{
			{time.Date(2024, 3, 10, 1, 30, 0, 0, ny), "202403100101"},
			{time.Date(2024, 3, 10, 3, 30, 0, 0, ny), "202403100302"}, // 2:00 does not exist that day
			{time.Date(2024, 11, 3, 1, 30, 0, 0, ny), "202411030101"},
			{time.Date(2024, 11, 3, 1, 30, 0, 0, ny).Add(time.Hour), "202411030102"}, // 1:30 again, standard time
		}},
		{"no reset keeps counting", `@<date, format=yyyyMMdd>@<seq, width=2>`, []call{
			{utc(2024, 1, 1, 0, 0, 0), "2024010101"},
			{utc(2024, 1, 2, 0, 0, 0), "2024010202"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, tt.tpl)
			var got, want []string
			for _, c := range tt.calls {
				s, err := first(g.Issue(ctx, sn.Request{At: c.at}))
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Validate(s); err != nil {
					t.Errorf("Validate(%q): %v", s, err)
				}
				got, want = append(got, s), append(want, c.want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The clock is read once per call: a clock that moves on every reading
// still gives a date and a reset period that agree.
func TestClockReadOncePerCall(t *testing.T) {
	reads := 0
	base := time.Date(2024, 1, 1, 23, 59, 59, 999999999, time.UTC)
	clock := func() time.Time {
		reads++
		return base.Add(time.Duration(reads-1) * time.Nanosecond) // crosses midnight on the second read
	}
	g := mustNew(t, `@<date, format=yyyyMMdd>@<seq, width=3, reset=day>@<date, format=dd>`, sn.WithClock(clock))
	s, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 1 {
		t.Errorf("clock read %d times in one call, want 1", reads)
	}
	if s != "2024010100101" {
		t.Errorf("Next = %q, want 2024010100101", s)
	}
	s, _ = g.Next(ctx)
	if s != "2024010200102" {
		t.Errorf("second Next = %q, want 2024010200102 (the clock moved past midnight)", s)
	}
}

// A clock that jumps backwards never repeats a number: the counter of the
// earlier period continues.
func TestClockJumpsBack(t *testing.T) {
	clk := &fixedClock{t: time.Date(2024, 1, 2, 0, 0, 1, 0, time.UTC)}
	g := mustNew(t, `@<date, format=yyyyMMdd>@<seq, width=3, reset=day>`, sn.WithClock(clk.now))
	seen := map[string]bool{}
	for _, at := range []time.Time{
		time.Date(2024, 1, 2, 0, 0, 1, 0, time.UTC),
		time.Date(2024, 1, 1, 23, 59, 59, 0, time.UTC), // NTP step back across midnight
		time.Date(2024, 1, 2, 0, 0, 2, 0, time.UTC),
		time.Date(2024, 1, 1, 23, 59, 59, 0, time.UTC),
	} {
		clk.set(at)
		s, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[s] {
			t.Fatalf("repeated number %q after the clock moved to %v", s, at)
		}
		seen[s] = true
	}
}
