package expression_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/sequence"
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
			e, err := expression.NewDate(tt.args)
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
		{expression.Args{"format": "yyy"}, "format", `format="yyy": unknown field "yyy" (use yyyy, yy, MM, dd, HH, mm, ss)`},
		{expression.Args{"format": "yyyyMMyyyy"}, "format", `format="yyyyMMyyyy": field "yyyy" appears twice`},
		{expression.Args{"format": "M"}, "format", `format="M": unknown field "M" (use yyyy, yy, MM, dd, HH, mm, ss)`},
		{expression.Args{"tz": "Local"}, "tz", `tz="Local": unknown time zone (use an IANA name such as Asia/Shanghai, or UTC)`},
		{expression.Args{"zone": "UTC"}, "zone", `unknown argument "zone" (known: format, tz)`},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			_, err := expression.NewDate(tt.args)
			var ae *expression.ArgError
			if !errors.As(err, &ae) || ae.Arg != tt.arg || err.Error() != tt.msg || !errors.Is(err, expression.ErrBadArg) {
				t.Errorf("NewDate(%v) = %v (arg %v), want %q on %q", tt.args, err, ae, tt.msg, tt.arg)
			}
		})
	}
}

func TestDateFinest(t *testing.T) {
	tests := map[string]expression.Period{
		"yyyyMMdd": expression.Day, "yyMMddHHmmss": expression.Day, "ddMMyy": expression.Day,
		"yyyyMM": expression.Month, "yyyy": expression.Year, "MMdd": expression.Never, "HHmm": expression.Never,
	}
	for f, want := range tests {
		e, err := expression.NewDate(expression.Args{"format": f})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.(*expression.Date).Finest(); got != want {
			t.Errorf("Finest(%s) = %v, want %v", f, got, want)
		}
	}
}

func TestArgs(t *testing.T) {
	a := expression.Args{"width": "8", "mode": "x", "zz": "1"}
	if err := a.Check("width", "mode"); err == nil || err.Error() != `unknown argument "zz" (known: mode, width)` {
		t.Errorf("Check: %v", err)
	}
	if err := (expression.Args{"a": "1"}).Check(); err == nil || err.Error() != `unknown argument "a" (takes no arguments)` {
		t.Errorf("Check(): %v", err)
	}
	if n, err := a.Int("width", 0, 1, 19); n != 8 || err != nil {
		t.Errorf("Int = %d, %v", n, err)
	}
	if n, err := a.Int("missing", 5, 1, 19); n != 5 || err != nil {
		t.Errorf("Int default = %d, %v", n, err)
	}
	if _, err := a.Int("mode", 0, 1, 19); err == nil || err.Error() != `mode="x": want a whole number from 1 to 19` {
		t.Errorf("Int bad: %v", err)
	}
	if _, err := a.OneOf("mode", "a", "a", "b"); err == nil || err.Error() != `mode="x": want one of a, b` {
		t.Errorf("OneOf bad: %v", err)
	}
	if got := expression.Before.String() + expression.Normal.String() + expression.After.String() + expression.Order(9).String(); got != "BeforeNormalAfterOrder(9)" {
		t.Errorf("Order strings: %s", got)
	}
}

// printedRecorder records what Context.Printed shows it.
type printedRecorder struct{ got *[]string }

func (p printedRecorder) Append(dst []byte, c *expression.Context) ([]byte, error) {
	*p.got = append(*p.got, string(c.Printed()))
	return append(dst, '!'), nil
}
func (printedRecorder) Order() expression.Order { return expression.After }
func (printedRecorder) MaxLen() int             { return 1 }

// The Program evaluates by Order then position, outputs by position, and
// shows After parts the text printed before them.
func TestProgramOrder(t *testing.T) {
	seq, err := expression.NewSeq("seq", sequence.NewMemory(), expression.Args{"width": "3"})
	if err != nil {
		t.Fatal(err)
	}
	seq.Bind(nil, "k", true)
	date, _ := expression.NewDate(expression.Args{"format": "yyMM"})
	var printed []string
	parts := []expression.Part{
		{Name: "seq", Expr: seq},
		{Name: "text", Expr: expression.Text("/"), Static: true},
		{Name: "date", Offset: 10, Expr: date},
		{Name: "rec", Offset: 20, Expr: printedRecorder{&printed}},
		{Name: "text", Expr: expression.Text("."), Static: true},
	}
	p := expression.NewProgram(parts, "k", nil)
	if diff := cmp.Diff([]int{2, 0, 1, 3, 4}, p.Order()); diff != "" {
		t.Errorf("evaluation order (-want +got):\n%s", diff)
	}
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	got, err := p.Render(ctx, &expression.Call{At: at})
	if err != nil || got != "001/2405!." {
		t.Errorf("Render = %q, %v", got, err)
	}
	if diff := cmp.Diff([]string{"001/2405"}, printed); diff != "" {
		t.Errorf("Printed (-want +got):\n%s", diff)
	}
	many, err := p.RenderN(nil, ctx, &expression.Call{At: at}, 2)
	if err != nil || !cmp.Equal(many, []string{"002/2405!.", "003/2405!."}) {
		t.Errorf("RenderN = %q, %v", many, err)
	}
	prev, err := p.RenderN(nil, ctx, &expression.Call{At: at, Preview: true, Sample: 7}, 2)
	if err != nil || !cmp.Equal(prev, []string{"007/2405!.", "008/2405!."}) {
		t.Errorf("preview = %q, %v", prev, err)
	}
	if s, _ := p.Render(ctx, &expression.Call{At: at}); s != "004/2405!." {
		t.Errorf("after preview: %q (a preview consumed a number)", s)
	}
}

type failing struct{ err error }

func (f failing) Append(dst []byte, _ *expression.Context) ([]byte, error) { return dst, f.err }
func (failing) Order() expression.Order                                    { return expression.Normal }
func (failing) MaxLen() int                                                { return 0 }

func TestProgramErrors(t *testing.T) {
	boom := errors.New("boom")
	p := expression.NewProgram([]expression.Part{
		{Name: "text", Expr: expression.Text("A"), Static: true},
		{Name: "bad", Offset: 1, Expr: failing{boom}},
	}, "k", nil)
	_, err := p.Render(ctx, &expression.Call{})
	var pe *expression.PartError
	if !errors.As(err, &pe) || pe.Name != "bad" || pe.Offset != 1 || !errors.Is(err, boom) || err.Error() != "bad at offset 1: boom" {
		t.Errorf("Render error = %v", err)
	}
}

func TestSeqKeys(t *testing.T) {
	mem := sequence.NewMemory()
	newSeq := func(args expression.Args) *expression.Seq {
		s, err := expression.NewSeq("seq", mem, args)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name string
		seq  *expression.Seq
		base string
		want string
	}{
		{"plain", newSeq(nil), "SN", "SN"},
		{"escaped base", newSeq(nil), `a|b\c`, `a\|b\\c`},
		{"key var", newSeq(expression.Args{"key": "unit"}), "SN", "SN|unit=<unit>"},
		{"day", newSeq(expression.Args{"reset": "day", "key": "u"}), "SN", "SN|u=<u>|<yyyy-MM-dd>"},
		{"month", newSeq(expression.Args{"reset": "month"}), "SN", "SN|<yyyy-MM>"},
		{"year", newSeq(expression.Args{"reset": "year"}), "SN", "SN|<yyyy>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.seq.KeyPattern(tt.base); got != tt.want {
				t.Errorf("KeyPattern = %q, want %q", got, tt.want)
			}
		})
	}
	// The real keys reach the generator.
	s := newSeq(expression.Args{"reset": "day", "key": "u"})
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	s.Bind(shanghai, `S|N`, true)
	c := expression.NewContext(ctx, time.Date(2024, 5, 1, 16, 0, 0, 0, time.UTC), map[string]string{"u": `x|y`})
	if _, err := s.Append(nil, c); err != nil {
		t.Fatal(err)
	}
	if n, _ := mem.Next(ctx, `S\|N|u=x\|y|2024-05-02`); n != 2 {
		t.Errorf("the key used was not S\\|N|u=x\\|y|2024-05-02 (next there is %d, want 2)", n)
	}
}

func TestRandom(t *testing.T) {
	e, err := expression.NewRandom(expression.Args{"width": "64", "alphabet": "AB"})
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
		if _, err := expression.NewRandom(bad); err == nil {
			t.Errorf("NewRandom(%v) accepted", bad)
		}
	}
	if p := mustPattern(t, expression.Args{"width": "2", "alphabet": "a-c-"}); p != `[\-a-c]{2}` {
		t.Errorf("Pattern = %s", p)
	}
}

func mustPattern(t *testing.T, args expression.Args) string {
	e, err := expression.NewRandom(args)
	if err != nil {
		t.Fatal(err)
	}
	return e.(expression.Patterner).Pattern()
}

func TestVarLimits(t *testing.T) {
	v, err := expression.NewVar("unit", expression.Args{"maxlen": "4", "chars": "0-9"})
	if err != nil {
		t.Fatal(err)
	}
	v.Forbid("-")
	for val, want := range map[string]string{
		"6541":  "",
		"65":    "",
		"65411": `variable invalid: "unit" is 5 bytes long, more than maxlen=4`,
		"65a":   `variable invalid: "unit"="65a" has a character outside [0-9]`,
		"":      `variable missing: "unit" was not given`,
	} {
		_, err := v.Append(nil, expression.NewContext(ctx, time.Time{}, map[string]string{"unit": val}))
		if got := errString(err); got != want {
			t.Errorf("%q: %q, want %q", val, got, want)
		}
	}
	if !strings.HasPrefix(v.Pattern(), "[0-9]{1,4}") {
		t.Errorf("Pattern = %s", v.Pattern())
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
