package server

import (
	"errors"

	"github.com/sngen/sn"
	"github.com/sngen/sn/wire"
)

// errorOf turns err into the Error of a response, and its status.
func errorOf(err error) (wire.Error, int) {
	code, status := wire.Classify(err)
	e := wire.Error{Code: code, Message: err.Error()}
	var ve *sn.VarError
	if errors.As(err, &ve) {
		e.Field = "vars." + ve.Name
	}
	var ne *sn.ValidationError
	if errors.As(err, &ne) {
		e.Field = "number"
		if ne.Part != "" {
			e.Part, e.Offset = ne.Part, &ne.Offset
		}
		e.Pos = &ne.Pos
	}
	if code == wire.CodeInstant {
		e.Field = "at"
	}
	if code == wire.CodeTooMany {
		e.Field = "n"
	}
	return e, status
}
