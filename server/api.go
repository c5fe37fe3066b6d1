package server

import (
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/wire"
)

func parseResponse(p sn.Parsed) wire.ParseResponse {
	out := wire.ParseResponse{Key: p.Key, Seq: p.Seq, Vars: p.Vars, Draws: make([]wire.Draw, len(p.Draws))}
	for i, d := range p.Draws {
		out.Draws[i] = wire.Draw(d)
	}
	return out
}

func (s *Server) templateOf(name string, g *sn.Generator, parts bool) wire.TemplateInfo {
	e := g.Explain()
	t := wire.TemplateInfo{Name: name, Template: e.Template, MaxLen: e.MaxLen, Regexp: e.Regexp, Engine: sn.Engine()}
	if src := s.sources[name]; src.alloc != nil {
		t.MaxBlock = src.max
	} else {
		t.NoBlocks = src.why
	}
	if parts {
		for _, p := range e.Parts {
			t.Parts = append(t.Parts, wire.Part{Source: p.Source, Name: p.Name, Kind: p.Kind, Offset: p.Offset,
				Order: p.Order.String(), MaxLen: p.MaxLen, Pattern: p.Pattern, Key: p.Key})
		}
	}
	return t
}

// instant reads NextRequest.At.
func instant(at string) (time.Time, error) {
	if at == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, at)
}
