package parser

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzParse checks that Parse never panics, agrees with refParse (a
// character-level parser written independently of the tokenizer and the
// participle grammar) on every node, offset and error offset, and that
// canonical printing round-trips.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>",
		"@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>",
		"@<area>-@<unit>-@<seq, width=5, key=unit>",
		"QJ@<seq, width=6>",
		"RR@<seq, width=8>@<checksum, algo=s10>CN",
		"a@@b@c@",
		"@@@<a>",
		"@<\n\tseq ,\n  width = 8 ,\treset\n=\r\nday >",
		`@<x, a="", b="a, b>c", c="say \"hi\"", d="C:\\dir", e=C:\dir\>`,
		"订单@<ownerKey, value=京东>号",
		"@<seq, strict, width=8>",
		"@<seq, =8>",
		"@<a, b, b>",
		`@<a, b="x\n">`,
		`@<a, b="x`,
		"@<9x>",
		"@<a, k=x<y>",
		"@<seq, width=8",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		want, wantOff := refParse(src)
		tpl, err := Parse(src)
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Parse(%q) error is %T, want *Error", src, err)
			}
			if wantOff < 0 {
				t.Fatalf("Parse(%q) failed at %d (%s), reference parser accepts it", src, e.Offset, e.Msg)
			}
			if e.Offset != wantOff {
				t.Fatalf("Parse(%q) failed at %d (%s), reference parser at %d", src, e.Offset, e.Msg, wantOff)
			}
			if e.Template != src || e.Msg == "" || strings.Contains(e.Msg, "\n") {
				t.Fatalf("Parse(%q) returned a malformed error %#v", src, e)
			}
			_ = e.Error()
			return
		}
		if wantOff >= 0 {
			t.Fatalf("Parse(%q) succeeded, reference parser fails at %d", src, wantOff)
		}
		if diff := cmp.Diff(want, tpl.Nodes); diff != "" {
			t.Fatalf("Parse(%q) differs from the reference parser (-ref +got):\n%s", src, diff)
		}
		canon := tpl.String()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical text %q of %q does not parse: %v", canon, src, err)
		}
		ignoreOffsets := cmp.Options{
			cmpopts.IgnoreFields(Text{}, "Offset"),
			cmpopts.IgnoreFields(Dynamic{}, "Offset", "End", "NameOffset"),
			cmpopts.IgnoreFields(Arg{}, "Offset", "ValueOffset"),
		}
		if diff := cmp.Diff(tpl.Nodes, again.Nodes, ignoreOffsets); diff != "" {
			t.Fatalf("nodes of %q and of its canonical text %q differ (-first +second):\n%s", src, canon, diff)
		}
		if s := again.String(); s != canon {
			t.Fatalf("canonical text is not stable: %q -> %q -> %q", src, canon, s)
		}
	})
}

// refParse is a reference parser for the template grammar that walks bytes
// directly. It returns the nodes, and -1, or the offset of the first
// offending byte.
func refParse(s string) (nodes []Node, errOff int) {
	var text *Text
	addText := func(off int, t string) {
		if text == nil {
			text = &Text{Offset: off}
			nodes = append(nodes, text)
		}
		text.Text += t
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "@@"):
			addText(i, "@")
			i += 2
		case strings.HasPrefix(s[i:], "@<"):
			text = nil
			d, end, off := refDynamic(s, i)
			if off >= 0 {
				return nil, off
			}
			nodes = append(nodes, d)
			i = end
		default:
			addText(i, s[i:i+1])
			i++
		}
	}
	return nodes, -1
}

// refDynamic parses the expression at s[start:], which begins with "@<".
func refDynamic(s string, start int) (d *Dynamic, end, errOff int) {
	i := start + 2
	space := func() {
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				return
			}
			i += n
		}
	}
	word := func() (string, int) {
		from := i
		for i < len(s) && !strings.ContainsRune(",=<>\"", rune(s[i])) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += n
		}
		return s[from:i], from
	}
	name := func() (string, int, bool) {
		w, off := word()
		if w == "" {
			return "", off, false
		}
		for j := 0; j < len(w); j++ {
			c := w[j]
			letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
			if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '.' || c == '-')) {
				return w, off, false
			}
		}
		return w, off, true
	}
	d = &Dynamic{Offset: start}
	space()
	n, off, ok := name()
	if !ok {
		return nil, 0, off
	}
	d.Name, d.NameOffset = n, off
	seen := map[string]bool{}
	for {
		space()
		if i == len(s) {
			return nil, 0, i
		}
		if s[i] == '>' {
			d.End = i + 1
			return d, i + 1, -1
		}
		if s[i] != ',' {
			return nil, 0, i
		}
		i++
		space()
		k, off, ok := name()
		if !ok || seen[k] {
			return nil, 0, off
		}
		seen[k] = true
		a := Arg{Offset: off, ValueOffset: off, Key: k, Value: "true", Bare: true}
		space()
		if i < len(s) && s[i] == '=' {
			i++
			space()
			a.Bare, a.ValueOffset = false, i
			if i < len(s) && s[i] == '"' {
				// Find the closing quote first, then check the escapes.
				j := i + 1
				for j < len(s) && s[j] != '"' {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				if j >= len(s) {
					return nil, 0, i
				}
				var v strings.Builder
				for k := i + 1; k < j; k++ {
					if s[k] == '\\' {
						if s[k+1] != '"' && s[k+1] != '\\' {
							return nil, 0, k
						}
						k++
					}
					v.WriteByte(s[k])
				}
				a.Value = v.String()
				i = j + 1
			} else {
				v, off := word()
				if v == "" {
					return nil, 0, off
				}
				a.Value = v
			}
		}
		d.Args = append(d.Args, a)
	}
}
