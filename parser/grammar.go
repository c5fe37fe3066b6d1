package parser

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle grammar. These types are private: Parse converts them into
// the public AST in ast.go. Token types are those of tokenDef; whitespace
// never reaches the grammar.
//
//	template := ( Text | AtAt | dynamic )*
//	dynamic  := Open name ( "," arg )* ">"
//	arg      := name ( "=" value )?
//	value    := Ident | Bare | String

type gTemplate struct {
	Parts []*gPart `parser:"@@*"`
}

type gPart struct {
	Pos  lexer.Position
	Text *string   `parser:"  @(Text | AtAt)"`
	Expr *gDynamic `parser:"| @@"`
}

type gDynamic struct {
	Pos   lexer.Position
	Name  *gName  `parser:"Open @@"`
	Args  []*gArg `parser:"( \",\" @@ )*"`
	Close *gClose `parser:"@@"`
}

type gName struct {
	Pos  lexer.Position
	Name string `parser:"@Ident"`
}

type gArg struct {
	Key   *gName  `parser:"@@"`
	Value *gValue `parser:"( \"=\" @@ )?"`
}

type gValue struct {
	Pos    lexer.Position
	Bare   *string `parser:"  @(Ident | Bare)"`
	Quoted *string `parser:"| @String"`
}

type gClose struct {
	Pos lexer.Position
	Gt  string `parser:"@\">\""`
}

var grammar = participle.MustBuild[gTemplate](
	participle.Lexer(tokenDef{}),
	// The grammar is LL(1): once a group has consumed a token it must
	// match, so errors are reported at the offending token rather than at
	// the start of the group.
	participle.UseLookahead(0),
)
