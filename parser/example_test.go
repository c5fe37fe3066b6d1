package parser_test

import (
	"errors"
	"fmt"

	"github.com/sngen/sn/parser"
)

func ExampleParse() {
	tpl, err := parser.Parse("RR@<seq, width=8>@<checksum, algo=s10>CN")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range tpl.Nodes {
		switch n := n.(type) {
		case *parser.Text:
			fmt.Printf("%d: text %q\n", n.Offset, n.Text)
		case *parser.Dynamic:
			fmt.Printf("%d: expression %s\n", n.Offset, n.Name)
			for _, a := range n.Args {
				fmt.Printf("   %d: %s = %q\n", a.Offset, a.Key, a.Value)
			}
		}
	}
	// Output:
	// 0: text "RR"
	// 2: expression seq
	//    9: width = "8"
	// 17: expression checksum
	//    29: algo = "s10"
	// 38: text "CN"
}

func ExampleTemplate_String() {
	tpl, err := parser.Parse(`mail@@me: @<  seq ,width = 8,strict , sep=" - ", tz="Asia/Shanghai">`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tpl)
	// Output:
	// mail@@me: @<seq, width=8, strict, sep=" - ", tz=Asia/Shanghai>
}

func ExampleDynamic_Arg() {
	tpl, err := parser.Parse("@<seq, width=5, reset=day>")
	if err != nil {
		fmt.Println(err)
		return
	}
	seq := tpl.Nodes[0].(*parser.Dynamic)
	if a, ok := seq.Arg("reset"); ok {
		fmt.Printf("reset=%s at offset %d\n", a.Value, a.ValueOffset)
	}
	_, ok := seq.Arg("key")
	fmt.Println("has key:", ok)
	// Output:
	// reset=day at offset 22
	// has key: false
}

func ExampleError() {
	_, err := parser.Parse("@<seq, =8>")
	fmt.Println(err)
	var perr *parser.Error
	if errors.As(err, &perr) {
		fmt.Println("offset:", perr.Offset)
	}
	// Output:
	// template: offset 7: unexpected "=" in expression, expected a name
	// 	@<seq, =8>
	// 	       ^
	// offset: 7
}

func ExampleError_Excerpt() {
	// A caller reporting a semantic error at an argument's offset.
	src := "@<seq, widht=8>"
	tpl, _ := parser.Parse(src)
	arg := tpl.Nodes[0].(*parser.Dynamic).Args[0]
	err := &parser.Error{Template: src, Offset: arg.Offset, Msg: fmt.Sprintf("unknown argument %q for seq", arg.Key)}
	fmt.Println(err.Msg)
	fmt.Println(err.Excerpt())
	// Output:
	// unknown argument "widht" for seq
	// 	@<seq, widht=8>
	// 	       ^
}

func ExampleIsName() {
	fmt.Println(parser.IsName("ownerKey"), parser.IsName("order.no-2"), parser.IsName("9x"), parser.IsName("订单"))
	// Output:
	// true true false false
}
