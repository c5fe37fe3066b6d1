package expression

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Date is the part "@<date, format=yyyyMMdd, tz=Area/City>": the call's
// instant in a time zone (UTC unless tz says otherwise). The format is made
// of the fields yyyy (year), yy (year in the century), MM (month), dd (day),
// HH (hour 00-23), mm (minute) and ss (second); other characters that are not
// ASCII letters print as they are. The default format is yyyyMMdd.
type Date struct {
	Format string
	Loc    *time.Location
	fields []dateField
	maxLen int
}

type dateField struct {
	kind byte // 'y' (4 digits), 'Y' (2-digit year), 'M', 'd', 'H', 'm', 's', or 0 for literal text
	lit  string
}

// NewDate is the [Factory] of the date part.
func NewDate(args Args) (Expression, error) {
	if err := args.Check("format", "tz"); err != nil {
		return nil, err
	}
	d := &Date{Format: "yyyyMMdd", Loc: time.UTC}
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

// Finest returns the finest calendar period the format prints in full: Day
// for a format with year, month and day, Month for year and month, Year for
// a year alone, otherwise Never. A sequence may only reset on a period at
// least this coarse.
func (d *Date) Finest() Period {
	has := map[byte]bool{}
	for _, f := range d.fields {
		if f.kind == 'Y' {
			has['y'] = true
		} else {
			has[f.kind] = true
		}
	}
	switch {
	case has['y'] && has['M'] && has['d']:
		return Day
	case has['y'] && has['M']:
		return Month
	case has['y']:
		return Year
	}
	return Never
}

// Append prints the instant.
func (d *Date) Append(dst []byte, c *Context) ([]byte, error) {
	t := c.Time().In(d.Loc)
	y, mo, day := t.Date()
	h, mi, s := t.Clock()
	for _, f := range d.fields {
		switch f.kind {
		case 0:
			dst = append(dst, f.lit...)
		case 'y':
			if y < 0 || y > 9999 {
				return dst, fmt.Errorf("year %d does not fit yyyy", y)
			}
			dst = appendInt(dst, int64(y), 4)
		case 'Y':
			dst = appendInt(dst, int64(y%100), 2)
		case 'M':
			dst = appendInt(dst, int64(mo), 2)
		case 'd':
			dst = appendInt(dst, int64(day), 2)
		case 'H':
			dst = appendInt(dst, int64(h), 2)
		case 'm':
			dst = appendInt(dst, int64(mi), 2)
		case 's':
			dst = appendInt(dst, int64(s), 2)
		}
	}
	return dst, nil
}

// Order returns Before.
func (*Date) Order() Order { return Before }

// MaxLen returns the printed length, which is fixed.
func (d *Date) MaxLen() int { return d.maxLen }

// Pattern matches the printed fields.
func (d *Date) Pattern() string {
	var b strings.Builder
	for _, f := range d.fields {
		switch f.kind {
		case 0:
			b.WriteString(regexp.QuoteMeta(f.lit))
		case 'y':
			b.WriteString(`[0-9]{4}`)
		default:
			b.WriteString(`[0-9]{2}`)
		}
	}
	return b.String()
}

// Check checks that the digits read back are a real date and time: no
// month 13, no February 30, no hour 24.
func (d *Date) Check(part string, _ *Context) error {
	year, month, day := 2000, 1, 1
	hasDay := false
	i := 0
	for _, f := range d.fields {
		if f.kind == 0 {
			i += len(f.lit)
			continue
		}
		n := 2
		if f.kind == 'y' {
			n = 4
		}
		if i+n > len(part) {
			return fmt.Errorf("%q is too short for format %s", part, d.Format)
		}
		v, err := strconv.Atoi(part[i : i+n])
		if err != nil {
			return fmt.Errorf("%q is not a date in format %s", part, d.Format)
		}
		i += n
		var bad bool
		switch f.kind {
		case 'y':
			year = v
		case 'Y':
			year = 2000 + v
		case 'M':
			month, bad = v, v < 1 || v > 12
		case 'd':
			day, hasDay, bad = v, true, v < 1 || v > 31
		case 'H':
			bad = v > 23
		case 'm', 's':
			bad = v > 59
		}
		if bad {
			return fmt.Errorf("%q is not a date in format %s: %s out of range", part, d.Format, string(f.kind)+string(f.kind))
		}
	}
	if hasDay {
		t := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
		if t.Day() != day {
			return fmt.Errorf("%q is not a date in format %s: day %d out of range for the month", part, d.Format, day)
		}
	}
	return nil
}
