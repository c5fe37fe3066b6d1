package expression

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Period is a reset period of a sequence, and the finest calendar period a
// date part prints in full.
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
)

// String returns "never", "year", "month" or "day".
func (p Period) String() string {
	switch p {
	case Year:
		return "year"
	case Month:
		return "month"
	case Day:
		return "day"
	}
	return "never"
}

// Date is the part "@<date, format=yyyyMMdd, tz=Area/City, window=YYYY>":
// the call's instant in a time zone (UTC unless tz says otherwise). The
// format is made of the fields yyyy (year 0000-9999), yy (year in the
// century), MM (month), dd (day), HH (hour 00-23), mm (minute) and ss
// (second); other characters that are not ASCII letters print as they are.
// The default format is yyyyMMdd.
//
// A yy field prints the same digits for 2017 and 2117. window=YYYY fixes
// the century: yy then stands for the years YYYY to YYYY+99 and an instant
// outside them is an error. sn requires a window when yy is what tells one
// reset period from another.
type Date struct {
	// Format is the format as written.
	Format string
	// Loc is the time zone.
	Loc *time.Location
	// Window is the first year of a yy field's hundred years, or -1.
	Window int
	fields []dateField
	maxLen int
}

type dateField struct {
	kind byte // 'y' (4 digits), 'Y' (2-digit year), 'M', 'd', 'H', 'm', 's', or 0 for literal text
	lit  string
}

// NewDate is the [Factory] of the date part.
func NewDate(args Args) (Expression, error) {
	if err := args.Check("format", "tz", "window"); err != nil {
		return nil, err
	}
	d := &Date{Format: "yyyyMMdd", Loc: time.UTC, Window: -1}
	if f, ok := args["format"]; ok {
		d.Format = f
	}
	fields, err := parseDateFormat(d.Format)
	if err != nil {
		return nil, Errorf("format", "format=%q: %v", d.Format, err)
	}
	d.fields = fields
	if tz, ok := args["tz"]; ok {
		loc, err := time.LoadLocation(tz)
		if err != nil || tz == "" || tz == "Local" {
			return nil, Errorf("tz", "tz=%q: unknown time zone (use an IANA name such as Asia/Shanghai, or UTC)", tz)
		}
		d.Loc = loc
	}
	if _, ok := args["window"]; ok {
		if !d.has('Y') {
			return nil, Errorf("window", "window= fixes the century of a yy field, and format=%q has none", d.Format)
		}
		if d.Window, err = args.Int("window", 0, 0, 9900); err != nil {
			return nil, err
		}
	}
	for _, f := range d.fields {
		if f.kind == 0 {
			d.maxLen += len(f.lit)
		} else if f.kind == 'y' {
			d.maxLen += 4
		} else {
			d.maxLen += 2
		}
	}
	return d, nil
}

func parseDateFormat(f string) ([]dateField, error) {
	if f == "" {
		return nil, fmt.Errorf("empty format")
	}
	var fields []dateField
	seen := map[byte]bool{}
	for i := 0; i < len(f); {
		ch := f[i]
		if !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z') {
			j := i
			for j < len(f) && !('a' <= f[j] && f[j] <= 'z' || 'A' <= f[j] && f[j] <= 'Z') {
				j++
			}
			fields = append(fields, dateField{lit: f[i:j]})
			i = j
			continue
		}
		j := i
		for j < len(f) && f[j] == ch {
			j++
		}
		run := f[i:j]
		var kind byte
		switch {
		case run == "yyyy":
			kind = 'y'
		case run == "yy":
			kind = 'Y'
		case run == "MM" || run == "dd" || run == "HH" || run == "mm" || run == "ss":
			kind = ch
		default:
			return nil, fmt.Errorf("unknown field %q (use yyyy, yy, MM, dd, HH, mm, ss)", run)
		}
		k := kind
		if k == 'Y' {
			k = 'y'
		}
		if seen[k] {
			return nil, fmt.Errorf("field %q appears twice", run)
		}
		seen[k] = true
		fields = append(fields, dateField{kind: kind})
		i = j
	}
	return fields, nil
}

func (d *Date) has(kind byte) bool {
	for _, f := range d.fields {
		if f.kind == kind {
			return true
		}
	}
	return false
}

// Finest returns the finest calendar period the format prints in full: Day
// for a format with year, month and day, Month for year and month, Year for
// a year alone, otherwise Never. A sequence may only reset on a period at
// least this coarse.
func (d *Date) Finest() Period {
	y := d.has('y') || d.has('Y')
	switch {
	case y && d.has('M') && d.has('d'):
		return Day
	case y && d.has('M'):
		return Month
	case y:
		return Year
	}
	return Never
}

// FullYear reports whether the format tells every year it can print from
// every other: it prints yyyy, or yy with a window.
func (d *Date) FullYear() bool { return d.has('y') || d.has('Y') && d.Window >= 0 }

// Years returns the years the part can print: 0 to 9999 for a format with
// yyyy, no year field or yy without a window, the window's hundred years
// for yy with one.
func (d *Date) Years() (first, last int) {
	if d.has('Y') && d.Window >= 0 {
		return d.Window, d.Window + 99
	}
	return 0, 9999
}

// Fits returns an error when the part cannot print t: a year outside
// [Date.Years].
func (d *Date) Fits(t time.Time) error {
	first, last := d.Years()
	if y := t.In(d.Loc).Year(); y < first || y > last {
		if first == 0 {
			return fmt.Errorf("the year %d of %s is outside 0000-9999, which a date prints", y, t.Format(time.RFC3339))
		}
		return fmt.Errorf("the year %d of %s is outside the window %d-%d of format=%s", y, t.Format(time.RFC3339), first, last, d.Format)
	}
	return nil
}

// Append prints the call's instant. An instant the part cannot print (see
// [Date.Fits]) is an error.
func (d *Date) Append(dst []byte, c *Context) ([]byte, error) {
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
		switch f.kind {
		case 0:
			dst = append(dst, f.lit...)
		case 'y':
			dst = append2(dst, y/100)
			dst = append2(dst, y%100)
		case 'Y':
			dst = append2(dst, y%100)
		case 'M':
			dst = append2(dst, int(mo))
		case 'd':
			dst = append2(dst, day)
		case 'H':
			dst = append2(dst, h)
		case 'm':
			dst = append2(dst, mi)
		case 's':
			dst = append2(dst, s)
		}
	}
	return dst
}

func append2(dst []byte, n int) []byte { return append(dst, byte('0'+n/10), byte('0'+n%10)) }

// Order returns Before.
func (*Date) Order() Order { return Before }

// MaxLen returns the printed length, which is fixed.
func (d *Date) MaxLen() int { return d.maxLen }

// Pattern matches the printed fields with their real ranges: months 01-12,
// days 01-31, hours 00-23, minutes and seconds 00-59.
func (d *Date) Pattern() string {
	var b strings.Builder
	for _, f := range d.fields {
		switch f.kind {
		case 0:
			b.WriteString(regexp.QuoteMeta(f.lit))
		case 'y':
			b.WriteString(`[0-9]{4}`)
		case 'Y':
			b.WriteString(`[0-9]{2}`)
		case 'M':
			b.WriteString(`(?:0[1-9]|1[0-2])`)
		case 'd':
			b.WriteString(`(?:0[1-9]|[12][0-9]|3[01])`)
		case 'H':
			b.WriteString(`(?:[01][0-9]|2[0-3])`)
		case 'm', 's':
			b.WriteString(`[0-5][0-9]`)
		}
	}
	return b.String()
}

// Read reads back text printed by the part and returns an instant that
// prints it, in the part's time zone: fields the format does not print are
// the earliest possible (January, the 1st, minute and second 0, and for a
// format without a year the year 2000), but for the hour, which is noon
// (some zones skip midnight on the day they spring forward). It checks
// that the date is real: no month 13, no February 30, no hour 24.
func (d *Date) Read(text string) (time.Time, error) {
	year, month, day, hour, minute, sec := 2000, 1, 1, 0, 0, 0
	if d.has('Y') && d.Window >= 0 {
		year = d.Window
	}
	i := 0
	for _, f := range d.fields {
		if f.kind == 0 {
			if !strings.HasPrefix(text[i:], f.lit) {
				return time.Time{}, fmt.Errorf("%q is not a date in format %s", text, d.Format)
			}
			i += len(f.lit)
			continue
		}
		n := 2
		if f.kind == 'y' {
			n = 4
		}
		if i+n > len(text) {
			return time.Time{}, fmt.Errorf("%q is too short for format %s", text, d.Format)
		}
		v, err := strconv.ParseUint(text[i:i+n], 10, 16)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a date in format %s", text, d.Format)
		}
		i += n
		x := int(v)
		bad := false
		switch f.kind {
		case 'y':
			year = x
		case 'Y':
			if d.Window >= 0 {
				year = d.Window + (x-d.Window%100+100)%100
			} else {
				year = 2000 + x
			}
		case 'M':
			month, bad = x, x < 1 || x > 12
		case 'd':
			day, bad = x, x < 1 || x > 31
		case 'H':
			hour, bad = x, x > 23
		case 'm':
			minute, bad = x, x > 59
		case 's':
			sec, bad = x, x > 59
		}
		if bad {
			return time.Time{}, fmt.Errorf("%q is not a date in format %s: %s out of range", text, d.Format, string(f.kind)+string(f.kind))
		}
	}
	if i != len(text) {
		return time.Time{}, fmt.Errorf("%q is too long for format %s", text, d.Format)
	}
	// The calendar is checked in UTC, where every day has all its hours.
	if u := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC); u.Day() != day {
		return time.Time{}, fmt.Errorf("%q is not a date in format %s: day %d out of range for the month", text, d.Format, day)
	}
	if !d.has('H') {
		hour = 12 // midnight is missing on the days some zones spring forward
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, d.Loc), nil
}

// Check checks that the text read back is a real date and time.
func (d *Date) Check(part string, _ *Context) error {
	_, err := d.Read(part)
	return err
}
