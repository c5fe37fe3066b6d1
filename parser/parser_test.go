package parser

import (
	"errors"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2"
	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Node
	}{
		{"empty", "", nil},
		{"text only", "abc", []Node{&Text{0, "abc"}}},
		{
			"seed owner key luhn",
			"@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>",
			[]Node{
				&Dynamic{Offset: 0, End: 21, Name: "ownerKey", NameOffset: 2, Args: []Arg{{Offset: 12, ValueOffset: 18, Key: "value", Value: "SN"}}},
				&Text{21, "-"},
				&Dynamic{Offset: 22, End: 37, Name: "seq", NameOffset: 24, Args: []Arg{{Offset: 29, ValueOffset: 35, Key: "width", Value: "8"}}},
				&Text{37, "-"},
				&Dynamic{Offset: 38, End: 60, Name: "checksum", NameOffset: 40, Args: []Arg{{Offset: 50, ValueOffset: 55, Key: "algo", Value: "luhn"}}},
			},
		},
		{
			"seed date and daily seq",
			"@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>",
			[]Node{
				&Dynamic{Offset: 0, End: 42, Name: "date", NameOffset: 2, Args: []Arg{
					{Offset: 8, ValueOffset: 15, Key: "format", Value: "yyyyMMdd"},
					{Offset: 25, ValueOffset: 28, Key: "tz", Value: "Asia/Shanghai"},
				}},
				&Dynamic{Offset: 42, End: 68, Name: "seq", NameOffset: 44, Args: []Arg{
					{Offset: 49, ValueOffset: 55, Key: "width", Value: "5"},
					{Offset: 58, ValueOffset: 64, Key: "reset", Value: "day"},
				}},
			},
		},
		{
			"seed area unit",
			"@<area>-@<unit>-@<seq, width=5, key=unit>",
			[]Node{
				&Dynamic{Offset: 0, End: 7, Name: "area", NameOffset: 2},
				&Text{7, "-"},
				&Dynamic{Offset: 8, End: 15, Name: "unit", NameOffset: 10},
				&Text{15, "-"},
				&Dynamic{Offset: 16, End: 41, Name: "seq", NameOffset: 18, Args: []Arg{
					{Offset: 23, ValueOffset: 29, Key: "width", Value: "5"},
					{Offset: 32, ValueOffset: 36, Key: "key", Value: "unit"},
				}},
			},
		},
		{
			"seed prefix",
			"QJ@<seq, width=6>",
			[]Node{
				&Text{0, "QJ"},
				&Dynamic{Offset: 2, End: 17, Name: "seq", NameOffset: 4, Args: []Arg{{Offset: 9, ValueOffset: 15, Key: "width", Value: "6"}}},
			},
		},
		{
			"seed S10",
			"RR@<seq, width=8>@<checksum, algo=s10>CN",
			[]Node{
				&Text{0, "RR"},
				&Dynamic{Offset: 2, End: 17, Name: "seq", NameOffset: 4, Args: []Arg{{Offset: 9, ValueOffset: 15, Key: "width", Value: "8"}}},
				&Dynamic{Offset: 17, End: 38, Name: "checksum", NameOffset: 19, Args: []Arg{{Offset: 29, ValueOffset: 34, Key: "algo", Value: "s10"}}},
				&Text{38, "CN"},
			},
		},
		{"double at", "@@", []Node{&Text{0, "@"}}},
		{"double at merges with text", "a@@b", []Node{&Text{0, "a@b"}}},
		{"lone at inside text", "a@b", []Node{&Text{0, "a@b"}}},
		{"lone at at end", "a@", []Node{&Text{0, "a@"}}},
		{"lone at alone", "@", []Node{&Text{0, "@"}}},
		{"three ats", "@@@", []Node{&Text{0, "@@"}}},
		{"escaped at before expression", "@@@<a>", []Node{&Text{0, "@"}, &Dynamic{Offset: 2, End: 6, Name: "a", NameOffset: 4}}},
		{"escaped open", "@@<a>", []Node{&Text{0, "@<a>"}}},
		{"greater than in text", "a>b,c=d", []Node{&Text{0, "a>b,c=d"}}},
		{
			"text after expression merges",
			"@<a>x@@y@z",
			[]Node{&Dynamic{Offset: 0, End: 4, Name: "a", NameOffset: 2}, &Text{4, "x@y@z"}},
		},
		{"name characters", "@<_a.b-c9>", []Node{&Dynamic{Offset: 0, End: 10, Name: "_a.b-c9", NameOffset: 2}}},
		{
			"whitespace and newlines inside",
			"@<\n\tseq ,\n  width = 8 ,\treset\n=\r\nday >",
			[]Node{&Dynamic{Offset: 0, End: 38, Name: "seq", NameOffset: 4, Args: []Arg{
				{Offset: 12, ValueOffset: 20, Key: "width", Value: "8"},
				{Offset: 24, ValueOffset: 33, Key: "reset", Value: "day"},
			}}},
		},
		{
			"ideographic space inside",
			"@<seq,\u3000width=8>",
			[]Node{&Dynamic{Offset: 0, End: 17, Name: "seq", NameOffset: 2, Args: []Arg{{Offset: 9, ValueOffset: 15, Key: "width", Value: "8"}}}},
		},
		{
			"bare argument",
			"@<seq, width=8, strict>",
			[]Node{&Dynamic{Offset: 0, End: 23, Name: "seq", NameOffset: 2, Args: []Arg{
				{Offset: 7, ValueOffset: 13, Key: "width", Value: "8"},
				{Offset: 16, ValueOffset: 16, Key: "strict", Value: "true", Bare: true},
			}}},
		},
		{
			"bare values",
			"@<x, a=mod11-2, b=0-9A-Z, c=@, d=a:b/c;d, e=9x>",
			[]Node{&Dynamic{Offset: 0, End: 47, Name: "x", NameOffset: 2, Args: []Arg{
				{Offset: 5, ValueOffset: 7, Key: "a", Value: "mod11-2"},
				{Offset: 16, ValueOffset: 18, Key: "b", Value: "0-9A-Z"},
				{Offset: 26, ValueOffset: 28, Key: "c", Value: "@"},
				{Offset: 31, ValueOffset: 33, Key: "d", Value: "a:b/c;d"},
				{Offset: 42, ValueOffset: 44, Key: "e", Value: "9x"},
			}}},
		},
		{
			"quoted values",
			`@<x, a="", b="a, b>c", c="say \"hi\"", d="C:\\dir", e="@<y>", f="x=1"> `,
			[]Node{
				&Dynamic{Offset: 0, End: 70, Name: "x", NameOffset: 2, Args: []Arg{
					{Offset: 5, ValueOffset: 7, Key: "a", Value: ""},
					{Offset: 11, ValueOffset: 13, Key: "b", Value: "a, b>c"},
					{Offset: 23, ValueOffset: 25, Key: "c", Value: `say "hi"`},
					{Offset: 39, ValueOffset: 41, Key: "d", Value: `C:\dir`},
					{Offset: 52, ValueOffset: 54, Key: "e", Value: "@<y>"},
					{Offset: 62, ValueOffset: 64, Key: "f", Value: "x=1"},
				}},
				&Text{70, " "},
			},
		},
		{
			"quoted value with newline and non-ASCII",
			"@<x, a=\"第一\n行\">",
			[]Node{&Dynamic{Offset: 0, End: 20, Name: "x", NameOffset: 2, Args: []Arg{{Offset: 5, ValueOffset: 7, Key: "a", Value: "第一\n行"}}}},
		},
		{
			"non-ASCII text and value",
			"订单@<ownerKey, value=京东>号@<seq, width=4>",
			[]Node{
				&Text{0, "订单"},
				&Dynamic{Offset: 6, End: 31, Name: "ownerKey", NameOffset: 8, Args: []Arg{{Offset: 18, ValueOffset: 24, Key: "value", Value: "京东"}}},
				&Text{31, "号"},
				&Dynamic{Offset: 34, End: 49, Name: "seq", NameOffset: 36, Args: []Arg{{Offset: 41, ValueOffset: 47, Key: "width", Value: "4"}}},
			},
		},
		{
			"same key in two expressions",
			"@<a, k=1>@<b, k=2>",
			[]Node{
				&Dynamic{Offset: 0, End: 9, Name: "a", NameOffset: 2, Args: []Arg{{Offset: 5, ValueOffset: 7, Key: "k", Value: "1"}}},
				&Dynamic{Offset: 9, End: 18, Name: "b", NameOffset: 11, Args: []Arg{{Offset: 14, ValueOffset: 16, Key: "k", Value: "2"}}},
			},
		},
		{
			"key equal to name",
			"@<seq, seq=1>",
			[]Node{&Dynamic{Offset: 0, End: 13, Name: "seq", NameOffset: 2, Args: []Arg{{Offset: 7, ValueOffset: 11, Key: "seq", Value: "1"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			if got.Source != tt.src {
				t.Errorf("Source = %q, want %q", got.Source, tt.src)
			}
			if diff := cmp.Diff(tt.want, got.Nodes); diff != "" {
				t.Errorf("Parse(%q) nodes (-want +got):\n%s", tt.src, diff)
			}
			for _, n := range got.Nodes {
				switch n := n.(type) {
				case *Dynamic:
					if n.Pos() != n.Offset || tt.src[n.Offset:n.Offset+2] != "@<" || tt.src[n.End-1] != '>' {
						t.Errorf("%v: Pos %d, Offset %d and End %d do not enclose the expression", n, n.Pos(), n.Offset, n.End)
					}
				case *Text:
					if n.Pos() != n.Offset {
						t.Errorf("%v: Pos %d, want %d", n, n.Pos(), n.Offset)
					}
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		offset int
		want   string // the full Error()
	}{
		{
			"missing key", "@<seq, =8>", 7,
			"template: offset 7: unexpected \"=\" in expression, expected a name\n" +
				"\t@<seq, =8>\n" +
				"\t       ^",
		},
		{
			"empty expression", "@<>", 2,
			"template: offset 2: unexpected \">\" in expression, expected a name\n" +
				"\t@<>\n" +
				"\t  ^",
		},
		{
			"trailing comma", "@<a, >", 5,
			"template: offset 5: unexpected \">\" in expression, expected a name\n" +
				"\t@<a, >\n" +
				"\t     ^",
		},
		{
			"double comma", "@<a,, b>", 4,
			"template: offset 4: unexpected \",\" in expression, expected a name\n" +
				"\t@<a,, b>\n" +
				"\t    ^",
		},
		{
			"quoted key", `@<a, "k"=1>`, 5,
			"template: offset 5: unexpected quoted value in expression, expected a name\n" +
				"\t@<a, \"k\"=1>\n" +
				"\t     ^",
		},
		{
			"quoted name with bad escape", `@<"\0">`, 2,
			"template: offset 2: unexpected quoted value in expression, expected a name\n" +
				"\t@<\"\\0\">\n" +
				"\t  ^",
		},
		{
			"name starts with digit", "x@<9x>", 3,
			"template: offset 3: bad name \"9x\": a name starts with a letter or \"_\"\n" +
				"\tx@<9x>\n" +
				"\t   ^",
		},
		{
			"name with slash", "@<a/b>", 2,
			"template: offset 2: bad name \"a/b\": a name has only letters, digits, \"_\", \".\" and \"-\"\n" +
				"\t@<a/b>\n" +
				"\t  ^",
		},
		{
			"bad key", "@<seq, 8=width>", 7,
			"template: offset 7: bad name \"8\": a name starts with a letter or \"_\"\n" +
				"\t@<seq, 8=width>\n" +
				"\t       ^",
		},
		{
			"missing comma after name", "@<seq width=8>", 6,
			"template: offset 6: unexpected \"width\" in expression, expected \",\" or \">\"\n" +
				"\t@<seq width=8>\n" +
				"\t      ^",
		},
		{
			"missing comma after key", "@<seq, width 8>", 13,
			"template: offset 13: unexpected \"8\" in expression, expected \"=\", \",\" or \">\"\n" +
				"\t@<seq, width 8>\n" +
				"\t             ^",
		},
		{
			"missing comma after value", "@<seq, width=8 reset=day>", 15,
			"template: offset 15: unexpected \"reset\" in expression, expected \",\" or \">\"\n" +
				"\t@<seq, width=8 reset=day>\n" +
				"\t               ^",
		},
		{
			"space in bare value", "@<date, tz=Asia Shanghai>", 16,
			"template: offset 16: unexpected \"Shanghai\" in expression, expected \",\" or \">\"\n" +
				"\t@<date, tz=Asia Shanghai>\n" +
				"\t                ^",
		},
		{
			"less than in bare value", "@<x, a=1<2>", 8,
			"template: offset 8: unexpected \"<\" in expression, expected \",\" or \">\" (quote a value that contains \"<\")\n" +
				"\t@<x, a=1<2>\n" +
				"\t        ^",
		},
		{
			"equals in bare value", "@<x, a=b=c>", 8,
			"template: offset 8: unexpected \"=\" in expression, expected \",\" or \">\" (quote a value that contains \"=\")\n" +
				"\t@<x, a=b=c>\n" +
				"\t        ^",
		},
		{
			"missing value", "@<seq, width=>", 13,
			"template: offset 13: unexpected \">\" in expression, expected a value after \"=\"\n" +
				"\t@<seq, width=>\n" +
				"\t             ^",
		},
		{
			"missing value before comma", "@<seq, width= , reset=day>", 14,
			"template: offset 14: unexpected \",\" in expression, expected a value after \"=\"\n" +
				"\t@<seq, width= , reset=day>\n" +
				"\t              ^",
		},
		{
			"unterminated expression", "QJ@<seq, width=6", 16,
			"template: offset 16: unterminated expression: missing \">\"\n" +
				"\tQJ@<seq, width=6\n" +
				"\t                ^",
		},
		{
			"unterminated open", "ab@<", 4,
			"template: offset 4: unterminated expression: missing \">\"\n" +
				"\tab@<\n" +
				"\t    ^",
		},
		{
			"unterminated after equals", "@<a, b=  ", 9,
			"template: offset 9: unterminated expression: missing \">\"\n" +
				"\t@<a, b=  \n" +
				"\t         ^",
		},
		{
			"unterminated before next expression", "@<seq, width=8-@<checksum>", 16,
			"template: offset 16: unexpected \"<\" in expression, expected \",\" or \">\" (quote a value that contains \"<\")\n" +
				"\t@<seq, width=8-@<checksum>\n" +
				"\t                ^",
		},
		{
			"unterminated quote", `@<a, b="x>y`, 7,
			"template: offset 7: unterminated quoted value\n" +
				"\t@<a, b=\"x>y\n" +
				"\t       ^",
		},
		{
			"quote ends in backslash", `@<a, b="x\`, 7,
			"template: offset 7: unterminated quoted value\n" +
				"\t@<a, b=\"x\\\n" +
				"\t       ^",
		},
		{
			"escaped closing quote leaves it open", `@<a, b="x\">`, 7,
			"template: offset 7: unterminated quoted value\n" +
				"\t@<a, b=\"x\\\">\n" +
				"\t       ^",
		},
		{
			"unknown escape", `@<a, b="x\n">`, 9,
			"template: offset 9: unknown escape \"\\n\" in quoted value\n" +
				"\t@<a, b=\"x\\n\">\n" +
				"\t         ^",
		},
		{
			"backslash before newline", "@<a, b=\"\\\n\">", 8,
			"template: offset 8: unknown escape in quoted value: backslash followed by \"\\n\"\n" +
				"\t@<a, b=\"\\ \">\n" +
				"\t        ^",
		},
		{
			"unknown escape after grammar error", `@<a b="\q">`, 4,
			"template: offset 4: unexpected \"b\" in expression, expected \",\" or \">\"\n" +
				"\t@<a b=\"\\q\">\n" +
				"\t    ^",
		},
		{
			"duplicate bare key", "@<a, b, b>", 8,
			"template: offset 8: duplicate argument \"b\"\n" +
				"\t@<a, b, b>\n" +
				"\t        ^",
		},
		{
			"duplicate key", "@<seq, width=5, reset=day, width=8>", 27,
			"template: offset 27: duplicate argument \"width\"\n" +
				"\t@<seq, width=5, reset=day, width=8>\n" +
				"\t                           ^",
		},
		{
			"duplicate key before later error", `@<a, k, k="\q`, 8,
			"template: offset 8: duplicate argument \"k\"\n" +
				"\t@<a, k, k=\"\\q\n" +
				"\t        ^",
		},
		{
			"error after non-ASCII text", "订单号@<seq, width 8>", 22,
			"template: offset 22: unexpected \"8\" in expression, expected \"=\", \",\" or \">\"\n" +
				"\t订单号@<seq, width 8>\n" +
				"\t                ^",
		},
		{
			"tab and newline in excerpt", "a\tb\n@<seq,\n\t,>", 12,
			"template: offset 12: unexpected \",\" in expression, expected a name\n" +
				"\ta b @<seq,  ,>\n" +
				"\t            ^",
		},
		{
			"long template window", strings.Repeat("x", 50) + "@<seq, width 8>" + strings.Repeat("y", 50), 63,
			"template: offset 63: unexpected \"8\" in expression, expected \"=\", \",\" or \">\"\n" +
				"\t..." + strings.Repeat("x", 17) + "@<seq, width 8>" + strings.Repeat("y", 28) + "...\n" +
				"\t                                 ^",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want an error", tt.src, tpl)
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Parse(%q) error is %T, want *Error", tt.src, err)
			}
			if e.Offset != tt.offset {
				t.Errorf("Offset = %d, want %d", e.Offset, tt.offset)
			}
			if e.Template != tt.src {
				t.Errorf("Template = %q, want %q", e.Template, tt.src)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", ""},
		{"seed unchanged", "@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>", "@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>"},
		{"whitespace normalised", "@<  seq ,width=8,\n reset = day  >", "@<seq, width=8, reset=day>"},
		{"lone at doubled", "a@b@", "a@@b@@"},
		{"double at kept", "a@@b", "a@@b"},
		{"text merged around escapes", "@@@<a>@@", "@@@<a>@@"},
		{"needless quotes dropped", `@<x, a="b", tz="Asia/Shanghai">`, "@<x, a=b, tz=Asia/Shanghai>"},
		{"quoted true is not bare", `@<x, a="true", b=true, c>`, "@<x, a=true, b=true, c>"},
		{"quotes kept where needed", `@<x, a="", b="a b", c="x,y", d="1>0", e="a=b", f="<">`, `@<x, a="", b="a b", c="x,y", d="1>0", e="a=b", f="<">`},
		{"escapes", `@<x, a="say \"hi\"", b="C:\\dir", c="\\ \"">`, `@<x, a="say \"hi\"", b=C:\dir, c="\\ \"">`},
		{"backslash alone needs no quotes", `@<x, a="C:\\dir\\">`, `@<x, a=C:\dir\>`},
		{"newline in value quoted", "@<x, a=\"1\n2\">", "@<x, a=\"1\n2\">"},
		{"ideographic space quoted", "@<x, a=\"1\u30002\">", "@<x, a=\"1\u30002\">"},
		{"non-ASCII", "订单@<ownerKey, value = 京东>", "订单@<ownerKey, value=京东>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			got := tpl.String()
			if got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			again, err := Parse(got)
			if err != nil {
				t.Fatalf("canonical text %q does not parse: %v", got, err)
			}
			if s := again.String(); s != got {
				t.Errorf("String() of canonical text = %q, want %q", s, got)
			}
		})
	}
}

func TestNodeString(t *testing.T) {
	tests := []struct {
		name string
		node Node
		want string
	}{
		{"text", &Text{Text: "a@<b"}, "a@@<b"},
		{"dynamic without args", &Dynamic{Name: "seq"}, "@<seq>"},
		{"bare arg", &Dynamic{Name: "seq", Args: []Arg{{Key: "strict", Value: "true", Bare: true}}}, "@<seq, strict>"},
		{"empty value", &Dynamic{Name: "x", Args: []Arg{{Key: "a"}}}, `@<x, a="">`},
		{"value with quote", &Dynamic{Name: "x", Args: []Arg{{Key: "a", Value: `"`}}}, `@<x, a="\"">`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.node.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorExcerpt(t *testing.T) {
	long := strings.Repeat("一二三四五", 20) // 100 runes, 300 bytes
	tests := []struct {
		name string
		err  Error
		want string
	}{
		{"empty template", Error{Template: "", Offset: 0}, "\t\n\t^"},
		{"past the end clamped", Error{Template: "abc", Offset: 10}, "\tabc\n\t   ^"},
		{"negative clamped", Error{Template: "abc", Offset: -4}, "\tabc\n\t^"},
		{"mid-rune moves to rune start", Error{Template: "a订b", Offset: 2}, "\ta订b\n\t ^"},
		{"non-ASCII column in runes", Error{Template: "订单@<seq>", Offset: 10}, "\t订单@<seq>\n\t      ^"},
		{
			"long non-ASCII window",
			Error{Template: long, Offset: 150}, // rune 50
			"\t..." + strings.Repeat("一二三四五", 12) + "...\n\t" + strings.Repeat(" ", 33) + "^",
		},
		{"invalid UTF-8 and control characters", Error{Template: "a\xff\x00\rb", Offset: 4}, "\ta\ufffd  b\n\t    ^"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Excerpt(); got != tt.want {
				t.Errorf("Excerpt() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestErrorBuiltByCaller(t *testing.T) {
	src := "@<seq, widht=8>"
	err := error(&Error{Template: src, Offset: 7, Msg: `unknown argument "widht" for seq`})
	want := "template: offset 7: unknown argument \"widht\" for seq\n" +
		"\t@<seq, widht=8>\n" +
		"\t       ^"
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Offset != 7 {
		t.Errorf("errors.As(%v) did not find the *Error", err)
	}
}

func TestIsName(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"seq", true},
		{"ownerKey", true},
		{"_", true},
		{"a.b-c_9", true},
		{"Z", true},
		{"", false},
		{"9x", false},
		{"-a", false},
		{".a", false},
		{"a b", false},
		{"a/b", false},
		{"a=b", false},
		{"名字", false},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := IsName(tt.s); got != tt.want {
				t.Errorf("IsName(%q) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestDynamicArg(t *testing.T) {
	tpl, err := Parse("@<seq, width=8, strict>")
	if err != nil {
		t.Fatal(err)
	}
	d := tpl.Nodes[0].(*Dynamic)
	tests := []struct {
		key    string
		want   Arg
		wantOK bool
	}{
		{"width", Arg{Offset: 7, ValueOffset: 13, Key: "width", Value: "8"}, true},
		{"strict", Arg{Offset: 16, ValueOffset: 16, Key: "strict", Value: "true", Bare: true}, true},
		{"reset", Arg{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := d.Arg(tt.key)
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("Arg(%q) = %+v, %v; want %+v, %v", tt.key, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseConcurrent(t *testing.T) {
	const src = "@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>"
	want, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 100 {
				got, err := Parse(src)
				if err != nil {
					errs <- err
					return
				}
				if diff := cmp.Diff(want, got); diff != "" {
					errs <- errors.New(diff)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestTokenDefLex(t *testing.T) {
	// participle may lex through the Definition; it must agree with tokenize.
	const src = `订单@<seq, width=8, sep="a\"b">@@`
	want, lexErr := tokenize(src)
	if lexErr != nil {
		t.Fatal(lexErr)
	}
	lex, err := tokenDef{}.Lex("", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		got, err := lex.Next()
		if err != nil || got != w {
			t.Fatalf("token %d = %v, %v; want %v", i, got, err, w)
		}
	}
	if _, err := (tokenDef{}).Lex("", strings.NewReader(`@<a, b="`)); err == nil {
		t.Error("Lex of an unterminated quoted value succeeded")
	}
}

func BenchmarkParse(b *testing.B) {
	const src = "@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>"
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseTooLong(t *testing.T) {
	// participle bounds repetitions; lower the bound rather than build a
	// template of a million parts.
	old := participle.MaxIterations
	participle.MaxIterations = 5
	t.Cleanup(func() { participle.MaxIterations = old })
	tests := []struct {
		name, src string
		offset    int
	}{
		{"parts", "a@<b>c@<d>e@<f>g", 11},
		{"arguments", "@<a, b, c, d, e, f, g>", 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) = %v, want an *Error", tt.src, err)
			}
			if want := "template too long: 5 or more parts or arguments"; e.Offset != tt.offset || e.Msg != want {
				t.Errorf("Parse(%q) error at %d %q, want at %d %q", tt.src, e.Offset, e.Msg, tt.offset, want)
			}
		})
	}
}
