package sn_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// Every key a template makes passes its CheckKey, for every period kind,
// key= variable and owner key; a key of another template, another shape
// or a period that is not one does not.
func TestCheckKey(t *testing.T) {
	templates := []string{
		`SN-@<seq, width=8>`,
		`@<ownerKey, value=A|B\x>-@<seq>`,
		`@<ownerKey, chars=A-Z, maxlen=4>-@<seq>`,
		`@<area, chars=0-9|, maxlen=3>-@<seq, width=5, key=area>`,
		`@<unit, value=U7>-@<seq, key=unit>`,
		`D@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		`M@<date, format=yyyyMM>@<seq, reset=month>`,
		`Y@<date, format=yyyy, tz=America/New_York>@<seq, reset=year>`,
		`W@<date, format=YYYYww>@<seq, reset=week>`,
		`Q@<date, format=yyyyMM>@<seq, reset=quarter>`,
		`F@<date, format='FY'ffff, fiscal=4>-@<seq, reset=fiscal-year>`,
		`H@<date, format=yyyyMMddHH>@<seq, reset=hour>`,
		`N@<date, format=yyyyMMddHHmm>@<seq, reset=minute>`,
		`S@<date, format=yyyyMMddHHmmss>@<seq, reset=second>`,
		`@<area, chars=0-9, maxlen=3>@<date, format=yyyyMMdd>@<seq, width=5, key=area, reset=day>`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for _, text := range templates {
		g, err := sn.New(text, sn.WithSequence("seq", sequence.NewMemory()))
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		for range 300 {
			at := time.Unix(r.Int64N(4e9), 0)
			vars := map[string]string{"area": []string{"010", "7", "99|"}[r.IntN(3)], "ownerKey": []string{"AB", "ZZZZ"}[r.IntN(2)]}
			if _, err := g.Preview(t.Context(), sn.Request{At: at, Vars: vars}); err != nil {
				continue // a variable the template refuses
			}
			key, err := g.Key(sn.Request{At: at, Vars: vars})
			if err != nil {
				t.Fatal(err)
			}
			checked++
			if err := g.CheckKey(key); err != nil {
				t.Errorf("%s: its own key %q at %v: %v", text, key, at, err)
			}
			bads := []string{key + "|2026", key + `\`, "\x00" + key}
			if strings.Contains(key, "|") {
				bads = append(bads, strings.Replace(key, "|", "||", 1))
			}
			for _, bad := range bads {
				if err := g.CheckKey(bad); err == nil {
					t.Errorf("%s: %q passes CheckKey; it is no key of the template", text, bad)
				} else if !errors.Is(err, sequence.ErrInvalidArgument) {
					t.Errorf("%s: %q: %v; want ErrInvalidArgument", text, bad, err)
				}
			}
		}
	}
	if checked < 3000 {
		t.Errorf("only %d keys checked", checked)
	}
	// The periods that are not: read back, each is another period's key
	// or none.
	g, _ := sn.New(`D@<date, format=yyyyMMdd>@<seq, reset=day>`, sn.WithSequence("seq", sequence.NewMemory()))
	key, _ := g.Key(sn.Request{At: time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC)})
	base := strings.TrimSuffix(key, "2026-02-28")
	for _, p := range []string{"2026-13-01", "2026-02-30", "2026-1-01", "26-01-01", "2026-01-01T00", ""} {
		if err := g.CheckKey(base + p); err == nil {
			t.Errorf("period %q passes", p)
		}
	}
	if err := g.CheckKey(key); err != nil {
		t.Errorf("the control, a real day: %v", err)
	}
	// A variable out of its limits.
	g, _ = sn.New(`@<area, chars=0-9, maxlen=3>-@<seq, key=area>`, sn.WithSequence("seq", sequence.NewMemory()))
	key, _ = g.Key(sn.Request{Vars: map[string]string{"area": "010"}})
	base = strings.TrimSuffix(key, "area=010")
	for _, k := range []string{base + "area=0101", base + "area=0A", base + "unit=010", base + "area="} {
		if err := g.CheckKey(k); err == nil {
			t.Errorf("%q passes", k)
		}
	}
	if err := g.CheckKey(key); err != nil {
		t.Errorf("the control: %v", err)
	}
}

// The engine's fingerprint is stable in one build, and its corpus
// compiles: a corpus of errors would fingerprint nothing.
func TestEngine(t *testing.T) {
	if a, b := sn.Engine(), sn.Engine(); a != b || !strings.HasPrefix(a, "sn-engine-") || len(a) != len("sn-engine-")+24 {
		t.Errorf("Engine() = %q, %q", a, b)
	}
}

// Every key of a template whose zone skips a midnight (a clock change at
// 00:00: America/Santiago, Havana, Sao_Paulo before 2019) passes its
// CheckKey: a period is read back at noon of its first day, which every
// day has.
func TestCheckKeyMidnightSkipped(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, zone := range []string{"America/Santiago", "America/Havana", "America/Sao_Paulo", "Asia/Tehran", "Pacific/Apia"} {
		for _, reset := range []string{"day", "month", "year", "week", "quarter"} {
			text := `Z@<date, format=yyyyMMdd, tz=` + zone + `>-@<seq, reset=` + reset + `>`
			if reset == "week" {
				text = `Z@<date, format=YYYYww, tz=` + zone + `>-@<seq, reset=week>`
			}
			g, err := sn.New(text, sn.WithSequence("seq", sequence.NewMemory()))
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			refused := 0
			for range 4000 {
				at := time.Unix(631152000+r.Int64N(3_500_000_000), 0) // 1990 to 2100
				key, _ := g.Key(sn.Request{At: at})
				if err := g.CheckKey(key); err != nil {
					refused++
					if refused < 3 {
						t.Errorf("%s at %v: its own key refused: %v", text, at, err)
					}
				}
			}
			// The days whose midnight is skipped, each tried.
			for _, day := range []string{"2026-09-06", "2026-03-08", "2018-11-04"} {
				loc, _ := time.LoadLocation(zone)
				d, _ := time.ParseInLocation("2006-01-02", day, loc)
				key, _ := g.Key(sn.Request{At: d.Add(13 * time.Hour)})
				if err := g.CheckKey(key); err != nil {
					t.Errorf("%s on %s: its own key refused: %v", text, day, err)
				}
			}
		}
	}
}

// A period the date part cannot print is no key of the template: a
// two-digit year's window bounds the years.
func TestCheckKeyWindow(t *testing.T) {
	g, err := sn.New(`Y@<date, format=yy, window=2000>-@<seq, reset=year>`, sn.WithSequence("seq", sequence.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := g.Key(sn.Request{At: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err := g.CheckKey(key); err != nil {
		t.Fatalf("the control, 2026: %v", err)
	}
	base := strings.TrimSuffix(key, "2026")
	for _, y := range []string{"1926", "2100", "0000", "9999"} {
		if err := g.CheckKey(base + y); err == nil {
			t.Errorf("year %s, outside the window 2000-2099, passes", y)
		}
	}
}
