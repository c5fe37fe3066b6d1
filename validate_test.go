package sn_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/sngen/sn"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		tpl    string
		number string
		part   string // "" for valid, "-" for an error about the whole number
		msg    string
	}{
		{"valid", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, "SN-00000001-8", "", ""},
		{"wrong check digit", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, "SN-00000001-3", "checksum",
			`sn: invalid number "SN-00000001-3": checksum at offset 38: check "3" is wrong for "00000001" (luhn)`},
		{"short sequence", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, "SN-0000001-3", "seq",
			`sn: invalid number "SN-0000001-3": seq at offset 22: want [0-9]{8} at byte 3, found "0000001-3"`},
		{"wrong prefix", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, "SX-00000001-8", "ownerKey",
			`sn: invalid number "SX-00000001-8": ownerKey at offset 0: want SN at byte 0, found "SX-00000001-8"`},
		{"missing separator", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, "SN00000001-8", "text",
			`sn: invalid number "SN00000001-8": text at offset 21: want "-" at byte 2, found "00000001-8"`},
		{"truncated", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, "SN-00000001-", "checksum",
			`sn: invalid number "SN-00000001-": checksum at offset 38: want [0-9] at byte 12, found the end`},
		{"trailing text", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, "SN-00000001-8x", "-",
			`sn: invalid number "SN-00000001-8x": unexpected "x" after byte 13`},
		{"empty", `QJ@<seq, width=6>`, "", "text", `sn: invalid number "": text at offset 0: want "QJ" at byte 0, found the end`},
		{"date month 13", `@<date, format=yyyyMMdd>@<seq, width=5>`, "2017130400001", "date",
			`sn: invalid number "2017130400001": date at offset 0: "20171304" is not a date in format yyyyMMdd: MM out of range`},
		{"date february 30", `@<date, format=yyyyMMdd>@<seq, width=5>`, "2017023000001", "date",
			`sn: invalid number "2017023000001": date at offset 0: "20170230" is not a date in format yyyyMMdd: day 30 out of range for the month`},
		{"leap day", `@<date, format=yyyyMMdd>@<seq, width=5>`, "2024022900001", "", ""},
		{"hour 24", `@<date, format=yyMMddHH>@<seq, width=2>`, "2401012401", "date",
			`sn: invalid number "2401012401": date at offset 0: "24010124" is not a date in format yyMMddHH: HH out of range`},
		{"variable too long", `@<area, maxlen=3>-@<unit>-@<seq, width=5, key=unit>`, "0101-6541-00001", "text",
			`sn: invalid number "0101-6541-00001": text at offset 17: want "-" at byte 3, found "1-6541-00001"`},
		{"variables", `@<area, maxlen=3>-@<unit>-@<seq, width=5, key=unit>`, "010-6541-00001", "", ""},
		{"variable chars", `@<area, chars=0-9>-@<seq>`, "01A-1", "text",
			`sn: invalid number "01A-1": text at offset 18: want "-" at byte 2, found "A-1"`},
		{"grow accepts wider", `@<seq, width=2, overflow=grow>`, "123", "", ""},
		{"grow refuses padded wide", `@<seq, width=2, overflow=grow>`, "0123", "-",
			`sn: invalid number "0123": unexpected "23" after byte 2`},
		{"s10", `RR@<seq, width=8>@<checksum, algo=s10>CN`, "RR473124829CN", "", ""},
		{"s10 wrong", `RR@<seq, width=8>@<checksum, algo=s10>CN`, "RR473124828CN", "checksum",
			`sn: invalid number "RR473124828CN": checksum at offset 17: check "8" is wrong for "47312482" (s10)`},
		{"checksum over all", `A@<seq, width=3>@<checksum, algo=mod37-2, over=all>`, "A001" + mod372(t, "A001"), "", ""},
		{"random", `@<seq, width=3>-@<random, width=4, alphabet=A-F>`, "001-ABCD", "", ""},
		{"random outside alphabet", `@<seq, width=3>-@<random, width=4, alphabet=A-F>`, "001-ABCG", "random",
			`sn: invalid number "001-ABCG": random at offset 16: want [A-F]{4} at byte 4, found "ABCG"`},
		{"literal at", `a@@b@<seq>`, "a@b7", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, tt.tpl)
			err := g.Validate(tt.number)
			if tt.part == "" {
				if err != nil {
					t.Fatalf("Validate(%q) = %v, want nil", tt.number, err)
				}
				if !regexp.MustCompile(g.Regexp()).MatchString(tt.number) {
					t.Errorf("Regexp %s does not match valid %q", g.Regexp(), tt.number)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%q) = nil, want an error", tt.number)
			}
			if err.Error() != tt.msg {
				t.Errorf("error:\n got %s\nwant %s", err, tt.msg)
			}
			if !errors.Is(err, sn.ErrInvalidNumber) {
				t.Errorf("errors.Is(ErrInvalidNumber) = false")
			}
			var ve *sn.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("not a *ValidationError: %T", err)
			}
			if want := tt.part; want != "-" && ve.Part != want || want == "-" && ve.Part != "" {
				t.Errorf("Part = %q, want %q", ve.Part, tt.part)
			}
		})
	}
}

func mod372(t *testing.T, payload string) string {
	t.Helper()
	g := mustNew(t, `@<seq>@<checksum, algo=mod37-2, over=all>`)
	_ = g
	alg, err := lookupAlgo("mod37-2")
	if err != nil {
		t.Fatal(err)
	}
	c, err := alg.Compute(payload)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Everything the generator prints, Validate accepts and Regexp matches.
func TestValidateAcceptsOwnOutput(t *testing.T) {
	templates := []string{
		`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
		`@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		`@<area, maxlen=3>-@<unit, chars=0-9>-@<seq, width=5, key=unit>@<checksum, algo=jd>`,
		`RR@<seq, width=8>@<checksum, algo=s10>CN`,
		`X@<seq, width=4>@<checksum, algo=mod97-10, over=all>`,
		`@<seq, width=2, overflow=grow>/@<checksum, algo=verhoeff>@<checksum, algo=damm>`,
		`@<random, width=3, alphabet=A-Z>@<seq>@<checksum, algo=mod11-2>`,
		`@<seq, width=4, overflow=grow>X@<date, format=yyMM>Y@<random, width=3, alphabet=A-Z>@<checksum, algo=mod37-2, over=all>`,
		`@<random, width=5, alphabet="-]^\\0-3">@<seq, width=3>`,
		`@<date, format="yy-MM-dd HH:mm:ss">|@<seq, width=3>@<checksum, algo=gs1>@<checksum, algo=mod11-10>`,
	}
	vars := sn.Vars{"area": "010", "unit": "6541"}
	for _, tpl := range templates {
		t.Run(tpl, func(t *testing.T) {
			g := mustNew(t, tpl)
			re := regexp.MustCompile(g.Regexp())
			for i := 0; i < 300; i++ {
				s := next(t, g, vars)
				if err := g.Validate(s); err != nil {
					t.Fatalf("Validate(%q): %v", s, err)
				}
				if !re.MatchString(s) {
					t.Fatalf("Regexp %s does not match %q", g.Regexp(), s)
				}
				if g.MaxLen() >= 0 && len(s) > g.MaxLen() {
					t.Fatalf("len(%q) = %d > MaxLen %d", s, len(s), g.MaxLen())
				}
			}
		})
	}
}

func TestRegexpAndMaxLen(t *testing.T) {
	tests := []struct {
		tpl    string
		re     string
		maxLen int
	}{
		{`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, `^(?<ownerKey>SN)-(?<seq>[0-9]{8})-(?<checksum>[0-9])$`, 13},
		{`@<date, format=yyyyMMdd>@<seq, width=5, reset=day>`, `^(?<date>[0-9]{4}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01]))(?<seq>[0-9]{5})$`, 13},
		{`@<area>-@<unit>-@<seq, width=5, key=unit>`, `^(?<area>[^\-]+)-(?<unit>[^\-]+)-(?<seq>[0-9]{5})$`, -1},
		{`QJ@<seq, width=6>`, `^QJ(?<seq>[0-9]{6})$`, 8},
		{`a.b@<seq, width=2>@<seq>`, `^a\.b(?<seq>[0-9]{2})(?<seq_2>[1-9][0-9]{0,18})$`, 24},
		{`@<a-b>-@<a_b>-@<a_b_2>-@<seq>`, `^(?<a_b>[^\-]+)-(?<a_b_2>[^\-]+)-(?<a_b_2_2>[^\-]+)-(?<seq>[1-9][0-9]{0,18})$`, -1},
		{`@<seq, width=19, overflow=grow>`, `^(?<seq>[0-9]{19})$`, 19},
		{`@<seq, width=3, overflow=grow>@<checksum, algo=mod97-10>`, `^(?<seq>[0-9]{3}|[1-9][0-9]{3,18})(?<checksum>(?:0[2-9]|[1-8][0-9]|9[0-8]))$`, 21},
	}
	for _, tt := range tests {
		t.Run(tt.tpl, func(t *testing.T) {
			g := mustNew(t, tt.tpl)
			if got := g.Regexp(); got != tt.re {
				t.Errorf("Regexp() = %s\nwant       %s", got, tt.re)
			}
			if got := g.MaxLen(); got != tt.maxLen {
				t.Errorf("MaxLen() = %d, want %d", got, tt.maxLen)
			}
		})
	}
}
