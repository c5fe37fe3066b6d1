package sn_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn"
)

// An instant a date cannot print is refused before anything is drawn.
func TestInstantOutOfRange(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
		at   time.Time
		msg  string
	}{
		{"year -5", `INV-@<date, format=yyyy>-@<seq, width=4, reset=year>`, time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
			`sn: date at offset 4: instant out of range: the year -5 of -0005-01-01T00:00:00Z is outside 0000-9999, which a date prints`},
		{"year 10000", `INV-@<date, format=yyyyMMdd>-@<seq>`, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
			`sn: date at offset 4: instant out of range: the year 10000 of 10000-01-01T00:00:00Z is outside 0000-9999, which a date prints`},
		{"yy without window", `INV-@<date, format=yy>-@<seq>`, time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
			`sn: date at offset 4: instant out of range: the year -5 of -0005-01-01T00:00:00Z is outside 0000-9999, which a date prints`},
		{"outside the window", `INV-@<date, format=yy, window=2000>-@<seq, width=4, reset=year>`, time.Date(2117, 6, 1, 0, 0, 0, 0, time.UTC),
			`sn: date at offset 4: instant out of range: the year 2117 of 2117-06-01T00:00:00Z is outside the window 2000-2099 of format=yy`},
		{"in a time zone", `@<date, format=yyyy, tz=Asia/Shanghai>@<seq>`, time.Date(9999, 12, 31, 20, 0, 0, 0, time.UTC),
			`sn: date at offset 0: instant out of range: the year 10000 of 9999-12-31T20:00:00Z is outside 0000-9999, which a date prints`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &keyRecorder{}
			g := sn.MustNew(tt.tpl, sn.WithSequence("seq", r), sn.WithClock(func() time.Time { return tt.at }))
			calls := map[string]func() error{
				"NextAt": func() error { _, err := first(g.Issue(ctx, sn.Request{At: tt.at})); return err },
				"Next":   func() error { _, err := g.Next(ctx); return err },
				"NextN":  func() error { _, err := g.Issue(ctx, sn.Request{N: 3, At: tt.at}); return err },
				"Preview": func() error {
					_, err := g.Preview(ctx, sn.Request{N: 3, At: tt.at})
					return err
				},
			}
			for name, call := range calls {
				err := call()
				if !errors.Is(err, sn.ErrInstant) || err.Error() != tt.msg {
					t.Errorf("%s: %v\nwant %s", name, err, tt.msg)
				}
			}
			if len(r.keys) != 0 {
				t.Errorf("the sequence was asked for %d numbers", len(r.keys))
			}
		})
	}
	// Inside the window, yy carries the reset.
	g := sn.MustNew(`INV-@<date, format=yy, window=2000>-@<seq, width=4, reset=year>`, mem())
	if s, err := first(g.Issue(ctx, sn.Request{At: time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC)})); err != nil || s != "INV-99-0001" {
		t.Errorf("NextAt 2099 = %q, %v", s, err)
	}
	if s, err := first(g.Issue(ctx, sn.Request{At: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})); err != nil || s != "INV-00-0001" {
		t.Errorf("NextAt 2000 = %q, %v", s, err)
	}
	if p, err := g.Parse("INV-99-0001"); err != nil || p.Key != "INV-@<date>-@<seq, reset=year>|2099" {
		t.Errorf("Parse = %+v, %v", p, err)
	}
}

// Batches have a cap, checked before anything is drawn.
func TestBatchCap(t *testing.T) {
	r := &keyRecorder{}
	g := sn.MustNew(`N@<seq>`, sn.WithSequence("seq", r))
	for _, n := range []int{-1, sn.MaxN + 1, 1 << 40} {
		if _, err := g.Issue(ctx, sn.Request{N: n}); !errors.Is(err, sn.ErrTooMany) {
			t.Errorf("NextN(%d): %v, want ErrTooMany", n, err)
		}
		if _, err := g.Preview(ctx, sn.Request{N: n}); !errors.Is(err, sn.ErrTooMany) {
			t.Errorf("Preview(%d): %v, want ErrTooMany", n, err)
		}
	}
	if len(r.keys) != 0 {
		t.Errorf("the sequence was asked for %d numbers", len(r.keys))
	}
	got, err := g.Issue(ctx, sn.Request{N: 3})
	if err != nil || len(got) != 3 {
		t.Errorf("NextN(3) = %v, %v", got, err)
	}
}

// Two templates of a set must not print one number from two counters.
func TestCheckSet(t *testing.T) {
	mk := func(tpl string) *sn.Generator { return sn.MustNew(tpl, mem()) }
	tests := []struct {
		name    string
		members []sn.Member
		number  string // the witness, "" when accepted
	}{
		{"prefix inside another", []sn.Member{{"a", mk(`1@<seq>`), "s"}, {"b", mk(`@<seq>`), "s"}}, "11"},
		{"disjoint", []sn.Member{{"a", mk(`A@<seq>`), "s"}, {"b", mk(`B@<seq>`), "s"}}, ""},
		{"one counter, widths apart", []sn.Member{{"a", mk(`QJ@<seq, width=6>`), "s"}, {"b", mk(`QJ@<seq, width=8>`), "s"}}, ""},
		{"one counter, growing", []sn.Member{{"a", mk(`QJ@<seq, width=6, overflow=grow>`), "s"}, {"b", mk(`QJ@<seq, width=8>`), "s"}}, ""},
		{"two stores", []sn.Member{{"a", mk(`QJ@<seq, width=6, overflow=grow>`), "s"}, {"b", mk(`QJ@<seq, width=8>`), "t"}}, "QJ00000000"},
		{"same text, two stores", []sn.Member{{"a", mk(`QJ@<seq, width=6>`), "s"}, {"b", mk(`QJ@<seq, width=6>`), "t"}}, "QJ000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sn.CheckSet(tt.members)
			if tt.number == "" {
				if err != nil {
					t.Fatalf("CheckSet: %v", err)
				}
				return
			}
			var ae *sn.AmbiguityError
			if !errors.Is(err, sn.ErrAmbiguous) || !errors.As(err, &ae) {
				t.Fatalf("CheckSet: %v, want an *AmbiguityError", err)
			}
			w := ae.Witness
			if !w.Verified || w.A.Template != "a" || w.B.Template != "b" {
				t.Errorf("witness %+v", w)
			}
			for _, side := range []struct {
				g  *sn.Generator
				in sn.Input
			}{{tt.members[0].Gen, w.A}, {tt.members[1].Gen, w.B}} {
				p, err := side.g.Parse(w.Number)
				if err != nil || p.Key != side.in.Draws[0].Key || p.Seq != side.in.Draws[0].Seq {
					t.Errorf("Parse(%q) = %+v, %v; want the witness's %+v", w.Number, p, err, side.in.Draws)
				}
			}
			if len(w.Number) != len(tt.number) {
				t.Errorf("witness %q, want one like %q", w.Number, tt.number)
			}
		})
	}
}

// Editing a template in place keeps its counter when only the formatting
// changes; CheckSet says whether the old and the new numbers can meet.
func TestCheckSetTemplateEdit(t *testing.T) {
	old := sn.MustNew(`@<date, format=yyyyMMdd>@<seq, width=4>`, mem())
	risky := sn.MustNew(`@<date, format=yyMMdd, window=2000>@<seq, width=6>`, mem())
	safe := sn.MustNew(`@<date, format=yyyyMMdd>-@<seq, width=6>`, mem())
	err := sn.CheckSet([]sn.Member{{"old", old, "db"}, {"new", risky, "db"}})
	var ae *sn.AmbiguityError
	if !errors.As(err, &ae) || !ae.Witness.Verified {
		t.Fatalf("old and risky edit: %v", err)
	}
	if err := sn.CheckSet([]sn.Member{{"old", old, "db"}, {"new", safe, "db"}}); err != nil {
		t.Errorf("old and safe edit: %v", err)
	}
}
