// Package parser turns sn template text into an AST of [Text] and [Dynamic]
// nodes, and prints an AST back as canonical template text.
//
// The grammar:
//
//	template := ( text | "@@" | dynamic )*
//	dynamic  := "@<" name ( "," arg )* ">"
//	arg      := key "=" value | key
//	name     := [A-Za-z_][A-Za-z0-9_.-]*     (a key is spelled like a name)
//	value    := bare | quoted
//	bare     := one or more characters other than whitespace , = > < "
//	quoted   := '"' ( any character but " and \ | `\"` | `\\` )* '"'
//
// Outside expressions, "@@" is a literal "@" and an "@" followed by neither
// "<" nor "@" is literal text, so "a@b" and "a@" are plain text. Adjacent text
// is merged into one [Text] node. Inside "@< >", whitespace (Unicode spaces,
// tabs and newlines included) around tokens is ignored. A key written alone
// means key=true and is marked [Arg].Bare. Keys are unique within an
// expression. Values such as yyyyMMdd, Asia/Shanghai, mod11-2 and 0-9A-Z are
// bare; a value with whitespace or one of , = > < " must be quoted, and inside
// quotes only \" and \\ are escapes.
//
// [Parse] reports every syntax error as an *[Error] carrying the byte offset
// of the first offending byte; its message ends with an excerpt of the
// template and a caret under that byte:
//
//	template: offset 7: unexpected "=" in expression, expected a name
//		@<seq, =8>
//		       ^
//
// The String methods print canonical text: text with every "@" doubled,
// expressions as "@<name, k1=v1, k2>" with ", " between arguments and values
// quoted only when they must be. Parsing canonical text yields the same nodes
// (offsets aside) and prints the same text again.
//
// Parsing uses github.com/alecthomas/participle/v2 with a hand-written
// tokenizer; none of its types appear in this package's API. The package
// knows nothing of what names mean: binding names and arguments is the
// caller's job, which can report its errors at a node's offset with an
// [Error] of its own.
package parser
