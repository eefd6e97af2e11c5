package decrunch

import (
	_ "embed"
	"strings"
)

//go:embed builtin_names.txt
var builtinNames string

// BuiltinNames returns the names decrunch offers as candidates besides the
// app's own files: the primitive types and the class and field names that
// analyzers (Shark, VisualVM, MAT) look up, which a cruncher may have hashed
// (version 1 files hash every name). Names are in Java's dotted spelling;
// callers add their other spellings (apkstrings.Spellings).
func BuiltinNames() []string {
	var out []string
	for _, l := range strings.Split(builtinNames, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
