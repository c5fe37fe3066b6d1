package builtin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sngen/sn/expression"
)

// Period is a reset period of a sequence: the calendar period after which
// its counter starts again at 1.
type Period int8

const (
	// Never means no reset.
	Never Period = iota
	// Year resets the counter on January 1.
	Year
	// Month resets the counter on the first of each month.
	Month
	// Day resets the counter at midnight.
	Day
	// Hour resets the counter every hour, on the hour.
	Hour
	// Minute resets the counter every minute.
	Minute
	// Second resets the counter every second.
	Second
	// Quarter resets the counter on January 1, April 1, July 1 and
	// October 1.
	Quarter
	// Week resets the counter on Mondays: the ISO 8601 week.
	Week
	// FiscalYear resets the counter on the first day of the month a
	// fiscal year starts in (see the date part's fiscal= argument).
	FiscalYear
)

var periodNames = [...]string{"never", "year", "month", "day", "hour", "minute", "second", "quarter", "week", "fiscal-year"}

// String returns the period as reset= spells it: "never", "year", "month",
// "day", "hour", "minute", "second", "quarter", "week" or "fiscal-year".
func (p Period) String() string {
	if p < 0 || int(p) >= len(periodNames) {
		return "never"
	}
	return periodNames[p]
}

// ParsePeriod returns the period reset= spells s, and false for a spelling
// that is none.
func ParsePeriod(s string) (Period, bool) {
	for i, n := range periodNames {
		if n == s {
			return Period(i), true
		}
	}
	return Never, false
}

// Date is the part "@<date, format=yyyyMMdd, tz=Area/City, window=YYYY,
// fiscal=M>": the call's instant in a time zone (UTC unless tz says
// otherwise). The default format is yyyyMMdd. A format is made of these
// fields:
//
//	yyyy yy   the year, in four digits or in its century
//	Q         the quarter, 1-4
//	MM        the month, 01-12
//	dd        the day of the month, 01-31
//	DDD       the day of the year, 001-366
//	YYYY YY   the ISO 8601 week-based year, which goes with ww
//	ww        the ISO 8601 week, 01-53
//	ffff ff   the fiscal year by the year it ends in (FY25 is April 2024 to
//	          March 2025 with fiscal=4)
//	FFFF FF   the fiscal year by the year it starts in (FFFF-ff prints
//	          2024-25)
//	HH mm ss  the hour 00-23, the minute and the second
//
// Other characters that are not ASCII letters print as they are, and text
// between single quotes prints as it is, letters included (” is a quote):
// yyyy'Q'Q prints 2024Q3.
//
// A two-digit year prints the same digits for 2017 and 2117. window=YYYY
// fixes the century: a two-digit year then stands for the years YYYY to
// YYYY+99 and an instant outside them is an error. sn requires a window
// when a two-digit year is what tells one reset period from another.
//
// The ISO week-based year differs from the calendar year around January 1
// (2021-01-03 is in week 53 of 2020), so a week goes with the week-based
// year only: yyyy with ww and YYYY without ww are refused. fiscal=M is the
// month a fiscal year starts in (4 for April); the fiscal fields need it.
type Date struct {
	// Format is the format as written.
	Format string
	// Loc is the time zone.
	Loc *time.Location
	// Window is the first year of a two-digit year's hundred years, or -1.
	Window int
	// Fiscal is the month a fiscal year starts in, or 0 when fiscal= is
	// not given.
	Fiscal time.Month
	fields []dateField
	maxLen int
}

// A dateField is one field of a format.
type dateField struct {
	kind  fieldKind
	width int
	lit   string // the text of a literal
}

type fieldKind int8

const (
	fLit fieldKind = iota
	fYear
	fWeekYear
	fFiscalEnd
	fFiscalStart
	fQuarter
	fMonth
	fWeek
	fYearDay
	fDay
	fHour
	fMinute
	fSecond
)

// dateTokens are the fields a run of one letter can be, by run.
var dateTokens = map[string]dateField{
	"yyyy": {kind: fYear, width: 4}, "yy": {kind: fYear, width: 2},
	"YYYY": {kind: fWeekYear, width: 4}, "YY": {kind: fWeekYear, width: 2},
	"ffff": {kind: fFiscalEnd, width: 4}, "ff": {kind: fFiscalEnd, width: 2},
	"FFFF": {kind: fFiscalStart, width: 4}, "FF": {kind: fFiscalStart, width: 2},
	"Q":   {kind: fQuarter, width: 1},
	"MM":  {kind: fMonth, width: 2},
	"ww":  {kind: fWeek, width: 2},
	"DDD": {kind: fYearDay, width: 3},
	"dd":  {kind: fDay, width: 2},
	"HH":  {kind: fHour, width: 2},
	"mm":  {kind: fMinute, width: 2},
	"ss":  {kind: fSecond, width: 2},
}

// NewDate is the [Factory] of the date part.
func NewDate(args expression.Args) (expression.Expression, error) {
	if err := args.Check("format", "tz", "window", "fiscal"); err != nil {
		return nil, err
	}
	d := &Date{Format: "yyyyMMdd", Loc: time.UTC, Window: -1}
	if f, ok := args["format"]; ok {
		d.Format = f
	}
	fields, err := parseDateFormat(d.Format)
	if err != nil {
		// YYYY and DD for yyyy and dd is the common slip.
		if fix := strings.NewReplacer("YYYY", "yyyy", "YY", "yy", "DD", "dd").Replace(d.Format); fix != d.Format {
			if _, ferr := parseDateFormat(fix); ferr == nil {
				return nil, expression.Errorf("format", "format=%q: %v; did you mean format=%s?", d.Format, err, fix)
			}
		}
		return nil, expression.Errorf("format", "format=%q: %v", d.Format, err)
	}
	d.fields = fields
	if tz, ok := args["tz"]; ok {
		loc, err := time.LoadLocation(tz)
		if err != nil || tz == "" || tz == "Local" {
			return nil, expression.Errorf("tz", "tz=%q: unknown time zone (use an IANA name such as Asia/Shanghai, or UTC)", tz)
		}
		d.Loc = loc
	}
	if _, ok := args["window"]; ok {
		if !d.hasTwoDigitYear() {
			return nil, expression.Errorf("window", "window= fixes the century of a two-digit year (yy, YY, ff, FF), and format=%q has none", d.Format)
		}
		if d.Window, err = args.Int("window", 0, 0, 9900); err != nil {
			return nil, err
		}
	}
	if v, ok := args["fiscal"]; ok {
		m, err := parseMonth(v)
		if err != nil {
			return nil, expression.Errorf("fiscal", "fiscal=%q: %v", v, err)
		}
		d.Fiscal = m
	} else if d.has(fFiscalEnd) || d.has(fFiscalStart) {
		return nil, expression.Errorf("format", "format=%q prints a fiscal year: say the month it starts in with fiscal= (fiscal=4 for April)", d.Format)
	}
	for _, f := range d.fields {
		if f.kind == fLit {
			d.maxLen += len(f.lit)
		} else {
			d.maxLen += f.width
		}
	}
	return d, nil
}

var monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

// parseMonth reads a month as a number 1-12 or an English name ("apr",
// "April").
func parseMonth(s string) (time.Month, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 12 {
			return 0, fmt.Errorf("want a month 1-12")
		}
		return time.Month(n), nil
	}
	l := strings.ToLower(s)
	for i, n := range monthNames {
		if len(l) >= 3 && strings.HasPrefix(strings.ToLower(time.Month(i+1).String()), l) && strings.HasPrefix(l, n) {
			return time.Month(i + 1), nil
		}
	}
	return 0, fmt.Errorf("want a month 1-12 or its name (apr, April)")
}

func isLetter(ch byte) bool { return 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' }

func parseDateFormat(f string) ([]dateField, error) {
	if f == "" {
		return nil, fmt.Errorf("empty format")
	}
	var fields []dateField
	lit := func(s string) {
		if n := len(fields); n > 0 && fields[n-1].kind == fLit {
			fields[n-1].lit += s
			return
		}
		fields = append(fields, dateField{lit: s})
	}
	seen := map[fieldKind]string{}
	for i := 0; i < len(f); {
		ch := f[i]
		if ch == '\'' {
			if i+1 < len(f) && f[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			end := i + 1
			var b strings.Builder
			for {
				j := strings.IndexByte(f[end:], '\'')
				if j < 0 {
					return nil, fmt.Errorf("the quote at byte %d is not closed", i)
				}
				b.WriteString(f[end : end+j])
				end += j + 1
				if end < len(f) && f[end] == '\'' { // '' inside quotes
					b.WriteByte('\'')
					end++
					continue
				}
				break
			}
			if b.Len() > 0 {
				lit(b.String())
			}
			i = end
			continue
		}
		if !isLetter(ch) {
			j := i
			for j < len(f) && !isLetter(f[j]) && f[j] != '\'' {
				j++
			}
			lit(f[i:j])
			i = j
			continue
		}
		j := i
		for j < len(f) && f[j] == ch {
			j++
		}
		run := f[i:j]
		fd, ok := dateTokens[run]
		if !ok {
			return nil, fmt.Errorf("unknown field %q (use yyyy, yy, Q, MM, dd, DDD, YYYY, ww, ffff, ff, FFFF, FF, HH, mm, ss; quote other letters: 'T')", run)
		}
		if prev, ok := seen[fd.kind]; ok {
			if prev == run {
				return nil, fmt.Errorf("field %q appears twice", run)
			}
			return nil, fmt.Errorf("%q and %q print the same field", prev, run)
		}
		seen[fd.kind] = run
		fields = append(fields, fd)
		i = j
	}
	has := func(k fieldKind) bool { _, ok := seen[k]; return ok }
	switch {
	case has(fWeek) && has(fYear):
		return nil, fmt.Errorf("%s with %s: around January 1 the calendar year is not the week's year (2024-12-30 is in week 01 of 2025), so it would print 2024-W01 twice; use YYYY, the ISO week-based year", seen[fYear], seen[fWeek])
	case has(fWeekYear) && !has(fWeek):
		return nil, fmt.Errorf("%s is the ISO week-based year, which is not the calendar year around January 1 (2021-01-03 is in 2020); use yyyy for the year, or add ww", seen[fWeekYear])
	case has(fWeek) && !has(fWeekYear) && (has(fFiscalEnd) || has(fFiscalStart)):
		return nil, fmt.Errorf("a week goes with YYYY, the ISO week-based year")
	case has(fWeek) && (has(fMonth) || has(fDay) || has(fYearDay) || has(fQuarter) || has(fFiscalEnd) || has(fFiscalStart)):
		return nil, fmt.Errorf("a week is printed with its week-based year and the time of day only; print the month and day with yyyy instead")
	case has(fYearDay) && (has(fMonth) || has(fDay)):
		return nil, fmt.Errorf("DDD is the day of the year: with %s it prints the day twice", strings.TrimSpace(seen[fMonth]+" "+seen[fDay]))
	}
	return fields, nil
}

func (d *Date) has(k fieldKind) bool {
	for _, f := range d.fields {
		if f.kind == k {
			return true
		}
	}
	return false
}

func (d *Date) hasTwoDigitYear() bool {
	for _, f := range d.fields {
		if f.width == 2 && (f.kind == fYear || f.kind == fWeekYear || f.kind == fFiscalEnd || f.kind == fFiscalStart) {
			return true
		}
	}
	return false
}

// yearFields returns whether the format prints a year of kind k, and
// whether it tells every year it can print from every other: four digits,
// or two with a window.
func (d *Date) yearField(k fieldKind) (printed, full bool) {
	for _, f := range d.fields {
		if f.kind == k {
			return true, f.width == 4 || d.Window >= 0
		}
	}
	return false, false
}

// Tells reports whether the text the part prints tells the periods p
// apart: printed says it does within a hundred years, full that it does
// for every year the part can print (see [Date.Years]). A sequence may
// reset every p only when a date part tells p apart in full.
//
// A year is told by yyyy or yy; a quarter by the year and Q or MM; a month
// by the year and MM; a day by the year and MM and dd, or DDD; an hour,
// minute or second by the day and HH, mm, ss. A week is told by YYYY and
// ww, and a fiscal year by the fiscal year (ffff, FFFF and their two-digit
// forms) or by the year and the month, in a part with fiscal=.
func (d *Date) Tells(p Period) (printed, full bool) {
	y, yFull := d.yearField(fYear)
	switch p {
	case Year:
		return y, yFull
	case Quarter:
		ok := y && (d.has(fQuarter) || d.has(fMonth))
		return ok, ok && yFull
	case Month:
		ok := y && d.has(fMonth)
		return ok, ok && yFull
	case Day, Hour, Minute, Second:
		ok := y && (d.has(fMonth) && d.has(fDay) || d.has(fYearDay))
		for _, k := range []fieldKind{fHour, fMinute, fSecond}[:max(0, int(p-Day))] {
			ok = ok && d.has(k)
		}
		return ok, ok && yFull
	case Week:
		w, wFull := d.yearField(fWeekYear)
		ok := w && d.has(fWeek)
		return ok, ok && wFull
	case FiscalYear:
		if d.Fiscal == 0 {
			return false, false
		}
		e, eFull := d.yearField(fFiscalEnd)
		s, sFull := d.yearField(fFiscalStart)
		m := y && d.has(fMonth)
		return e || s || m, eFull || sFull || m && yFull
	}
	return true, true
}

// Finest returns the finest of the periods Year, Month, Day, Hour, Minute
// and Second the format tells apart (see [Date.Tells]), otherwise Never.
func (d *Date) Finest() Period {
	best := Never
	for _, p := range []Period{Year, Month, Day, Hour, Minute, Second} {
		if ok, _ := d.Tells(p); ok {
			best = p
		}
	}
	return best
}

// FullYear reports whether the format tells every year it can print from
// every other: its years are printed in four digits, or in two with a
// window.
func (d *Date) FullYear() bool { return !d.hasTwoDigitYear() || d.Window >= 0 }

// Years returns the years the part can print: 0 to 9999, or the window's
// hundred years for a format with a two-digit year and a window. (A
// format's week-based and fiscal years are the years printed, which may be
// one more or less than the calendar year.)
func (d *Date) Years() (first, last int) {
	if d.Window >= 0 {
		return d.Window, d.Window + 99
	}
	return 0, 9999
}

// Fits returns an error when the part cannot print t: a year it prints
// outside [Date.Years].
func (d *Date) Fits(t time.Time) error {
	first, last := d.Years()
	lt := t.In(d.Loc)
	for _, f := range d.fields {
		var y int
		switch f.kind {
		case fYear:
			y = lt.Year()
		case fWeekYear:
			y, _ = lt.ISOWeek()
		case fFiscalStart, fFiscalEnd:
			y = d.fiscalYear(lt, f.kind)
		default:
			continue
		}
		lo, hi := 0, 9999
		if f.width == 2 && d.Window >= 0 {
			lo, hi = first, last
		}
		if y < lo || y > hi {
			what := map[fieldKind]string{fYear: "year", fWeekYear: "week-based year", fFiscalStart: "fiscal year", fFiscalEnd: "fiscal year"}[f.kind]
			if lo == 0 {
				return fmt.Errorf("the %s %d of %s is outside 0000-9999, which a date prints", what, y, t.Format(time.RFC3339))
			}
			return fmt.Errorf("the %s %d of %s is outside the window %d-%d of format=%s", what, y, t.Format(time.RFC3339), first, last, d.Format)
		}
	}
	return nil
}

// fiscalYear returns the year the fiscal year of t (in the part's zone)
// starts in, for fFiscalStart, or ends in, for fFiscalEnd.
func (d *Date) fiscalYear(t time.Time, k fieldKind) int {
	y, m := t.Year(), t.Month()
	start := y
	if m < d.Fiscal {
		start--
	}
	if k == fFiscalEnd && d.Fiscal > 1 {
		return start + 1
	}
	return start
}

// FiscalStart returns the first day of the fiscal year t is in, read in
// the part's time zone, as a date (the time of day is midnight UTC): with
// fiscal=4, 2024-04-01 for any instant from April 2024 to March 2025. It
// returns t's year's January 1 for a part without fiscal=.
func (d *Date) FiscalStart(t time.Time) time.Time {
	m := d.Fiscal
	if m == 0 {
		m = time.January
	}
	t = t.In(d.Loc)
	y := t.Year()
	if t.Month() < m {
		y--
	}
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

// Append prints the call's instant. An instant the part cannot print (see
// [Date.Fits]) is an error.
func (d *Date) Append(dst []byte, c *expression.Context) ([]byte, error) {
	t := c.Time()
	if err := d.Fits(t); err != nil {
		return dst, err
	}
	return d.AppendTime(dst, t), nil
}

// AppendTime prints t, which must fit (see [Date.Fits]).
func (d *Date) AppendTime(dst []byte, t time.Time) []byte {
	t = t.In(d.Loc)
	y, mo, day := t.Date()
	h, mi, s := t.Clock()
	for _, f := range d.fields {
		var n int
		switch f.kind {
		case fLit:
			dst = append(dst, f.lit...)
			continue
		case fYear:
			n = y
		case fWeekYear:
			n, _ = t.ISOWeek()
		case fWeek:
			_, n = t.ISOWeek()
		case fFiscalStart, fFiscalEnd:
			n = d.fiscalYear(t, f.kind)
		case fQuarter:
			n = (int(mo) + 2) / 3
		case fMonth:
			n = int(mo)
		case fYearDay:
			n = t.YearDay()
		case fDay:
			n = day
		case fHour:
			n = h
		case fMinute:
			n = mi
		case fSecond:
			n = s
		}
		switch f.width {
		case 4:
			dst = append2(dst, n/100)
			dst = append2(dst, n%100)
		case 3:
			dst = append(dst, byte('0'+n/100))
			dst = append2(dst, n%100)
		case 2:
			dst = append2(dst, n%100)
		default:
			dst = append(dst, byte('0'+n))
		}
	}
	return dst
}

func append2(dst []byte, n int) []byte { return append(dst, byte('0'+n/10), byte('0'+n%10)) }

// Order returns Before.
func (*Date) Order() expression.Order { return expression.Before }

// MaxLen returns the printed length, which is fixed.
func (d *Date) MaxLen() int { return d.maxLen }

// Pattern matches the printed fields with their real ranges: months 01-12,
// days 01-31, weeks 01-53, days of the year 001-366, quarters 1-4, hours
// 00-23, minutes and seconds 00-59.
func (d *Date) Pattern() string {
	var b strings.Builder
	for _, f := range d.fields {
		switch f.kind {
		case fLit:
			b.WriteString(regexp.QuoteMeta(f.lit))
		case fYear, fWeekYear, fFiscalStart, fFiscalEnd:
			b.WriteString(`[0-9]{` + strconv.Itoa(f.width) + `}`)
		case fQuarter:
			b.WriteString(`[1-4]`)
		case fMonth:
			b.WriteString(`(?:0[1-9]|1[0-2])`)
		case fWeek:
			b.WriteString(`(?:0[1-9]|[1-4][0-9]|5[0-3])`)
		case fYearDay:
			b.WriteString(`(?:00[1-9]|0[1-9][0-9]|[12][0-9]{2}|3[0-5][0-9]|36[0-6])`)
		case fDay:
			b.WriteString(`(?:0[1-9]|[12][0-9]|3[01])`)
		case fHour:
			b.WriteString(`(?:[01][0-9]|2[0-3])`)
		case fMinute, fSecond:
			b.WriteString(`[0-5][0-9]`)
		}
	}
	return b.String()
}

// fullYear returns the year a printed year field stands for: itself in
// four digits, in two the year of the window (or 2000-2099 without one)
// that ends in them.
func (d *Date) fullYear(f dateField, x int) int {
	if f.width == 4 {
		return x
	}
	if d.Window >= 0 {
		return d.Window + (x-d.Window%100+100)%100
	}
	return 2000 + x
}

// Read reads back text printed by the part and returns an instant that
// prints it, in the part's time zone: the earliest day of what the format
// prints (January 1 for a year, the first day of a quarter, the Monday of
// a week, the first day of a fiscal year; for a format without a year, in
// 2000), minute and second 0, and the hour noon when not printed (some
// zones skip midnight on the day they spring forward). It checks that the
// text is a real date and time, that the instant prints it back (no
// February 30, no week 53 in a year of 52, no hour a zone skips, a fiscal
// year 2024-26 or a quarter 2 with month 09 is refused).
func (d *Date) Read(text string) (time.Time, error) {
	var v [fSecond + 1]int
	var got [fSecond + 1]bool
	var fd [fSecond + 1]dateField
	i := 0
	for _, f := range d.fields {
		if f.kind == fLit {
			if !strings.HasPrefix(text[i:], f.lit) {
				return time.Time{}, fmt.Errorf("%q is not a date in format %s", text, d.Format)
			}
			i += len(f.lit)
			continue
		}
		if i+f.width > len(text) {
			return time.Time{}, fmt.Errorf("%q is too short for format %s", text, d.Format)
		}
		x, err := strconv.ParseUint(text[i:i+f.width], 10, 16)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a date in format %s", text, d.Format)
		}
		i += f.width
		n := int(x)
		var lo, hi int
		switch f.kind {
		case fQuarter:
			lo, hi = 1, 4
		case fMonth:
			lo, hi = 1, 12
		case fWeek:
			lo, hi = 1, 53
		case fYearDay:
			lo, hi = 1, 366
		case fDay:
			lo, hi = 1, 31
		case fHour:
			lo, hi = 0, 23
		case fMinute, fSecond:
			lo, hi = 0, 59
		default:
			lo, hi, n = 0, 9999, d.fullYear(f, n)
		}
		if n < lo || n > hi {
			return time.Time{}, fmt.Errorf("%q is not a date in format %s: %s out of range", text, d.Format, tokenOf(f))
		}
		v[f.kind], got[f.kind], fd[f.kind] = n, true, f
	}
	if i != len(text) {
		return time.Time{}, fmt.Errorf("%q is too long for format %s", text, d.Format)
	}
	// The calendar day, worked out in UTC, where every day has all its
	// hours.
	year, month, day := 2000, 1, 1
	if d.Window >= 0 {
		year = d.Window
	}
	switch {
	case got[fYear]:
		year = v[fYear]
	case got[fFiscalEnd] || got[fFiscalStart]:
		start := v[fFiscalStart]
		if got[fFiscalEnd] && (fd[fFiscalEnd].width == 4 || !got[fFiscalStart] || fd[fFiscalStart].width == 2) {
			start = v[fFiscalEnd]
			if d.Fiscal > 1 {
				start--
			}
		}
		year, month = start, int(d.Fiscal)
		if got[fMonth] || got[fQuarter] {
			m := v[fMonth]
			if !got[fMonth] {
				m = 3*v[fQuarter] - 2
			}
			if m < int(d.Fiscal) {
				year++
			}
		}
	case got[fWeek]:
		wy := 2020 // a week without its year: one of 53 weeks
		if got[fWeekYear] {
			wy = v[fWeekYear]
		}
		u := isoWeekMonday(wy, v[fWeek])
		year, month, day = u.Year(), int(u.Month()), u.Day()
	}
	switch {
	case got[fMonth]:
		month = v[fMonth]
	case got[fQuarter]:
		month = 3*v[fQuarter] - 2
	}
	if got[fDay] {
		day = v[fDay]
	}
	u := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	if got[fYearDay] {
		u = time.Date(year, 1, v[fYearDay], 0, 0, 0, 0, time.UTC)
		if !got[fYear] && d.Fiscal > 0 && u.Month() < d.Fiscal {
			u = time.Date(year+1, 1, v[fYearDay], 0, 0, 0, 0, time.UTC) // in the fiscal year's second calendar year
		}
	}
	hour := 12
	if got[fHour] {
		hour = v[fHour]
	}
	t := time.Date(u.Year(), u.Month(), u.Day(), hour, v[fMinute], v[fSecond], 0, d.Loc)
	if back := d.AppendTime(nil, t); string(back) != text {
		return time.Time{}, fmt.Errorf("%q is not a date in format %s: %s", text, d.Format, d.unreal(text, u, t))
	}
	return t, nil
}

// unreal says why text, read as the day u and the instant t, does not
// print back.
func (d *Date) unreal(text string, u, t time.Time) string {
	switch {
	case d.has(fYearDay) && u.YearDay() != int(mustAtoi(d.fieldText(text, fYearDay))):
		// Day 366 of a year of 365 is January 1 of the next.
		return fmt.Sprintf("day %s of a year of %d days", d.fieldText(text, fYearDay), time.Date(u.Year()-1, 12, 31, 0, 0, 0, 0, time.UTC).YearDay())
	case d.has(fDay) && strconv.Itoa(u.Day()) != strings.TrimLeft(d.fieldText(text, fDay), "0"):
		return fmt.Sprintf("day %s out of range for the month", d.fieldText(text, fDay))
	case d.has(fWeek):
		if _, w := u.ISOWeek(); w != int(mustAtoi(d.fieldText(text, fWeek))) {
			return fmt.Sprintf("the year has no week %s", d.fieldText(text, fWeek))
		}
	}
	if d.has(fHour) && t.Hour() != int(mustAtoi(d.fieldText(text, fHour))) {
		return fmt.Sprintf("%s skips that time", d.Loc)
	}
	return "its fields disagree"
}

// fieldText returns the text of field k in text, which matches the format
// up to it.
func (d *Date) fieldText(text string, k fieldKind) string {
	i := 0
	for _, f := range d.fields {
		n := f.width
		if f.kind == fLit {
			n = len(f.lit)
		}
		if i+n > len(text) {
			return ""
		}
		if f.kind == k {
			return text[i : i+n]
		}
		i += n
	}
	return ""
}

func mustAtoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func tokenOf(f dateField) string {
	for run, t := range dateTokens {
		if t == f {
			return run
		}
	}
	return "?"
}

// isoWeekMonday returns the Monday of ISO week w of the week-based year y.
func isoWeekMonday(y, w int) time.Time {
	// January 4 is in week 1.
	jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC)
	wd := (int(jan4.Weekday()) + 6) % 7 // Monday 0
	return jan4.AddDate(0, 0, -wd+7*(w-1))
}

// Check checks that the text read back is a real date and time.
func (d *Date) Check(part string, _ *expression.Context) error {
	_, err := d.Read(part)
	return err
}
