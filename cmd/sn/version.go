package main

import (
	"fmt"
	"runtime/debug"
)

// cmdVersion prints the module's version and the revision it was built
// from, as the build recorded them.
func cmdVersion(e *env, args []string) error {
	if len(args) > 0 {
		return usagef("version", "unexpected argument %q", args[0])
	}
	fmt.Fprintln(e.out, version())
	return nil
}

// version describes the build: "sn v1.2.3 (go1.26.0)", and the revision
// with its time when the build recorded them ("revision 1a2b3c4d5e6f,
// 2026-11-25T23:37:00Z, modified" for a work tree with changes).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "sn (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	out := fmt.Sprintf("sn %s (%s)", v, bi.GoVersion)
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		out += " revision " + rev[:min(12, len(rev))]
		if at != "" {
			out += ", " + at
		}
		if modified {
			out += ", modified"
		}
	}
	return out
}
