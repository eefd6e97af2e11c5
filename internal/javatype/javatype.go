// Package javatype holds what the hprof and bmd packages both know of Java
// field and array element types: their HPROF basic type codes, which BMD
// uses too, and their sizes. The two format packages must not import each
// other; this is their one table.
package javatype

// The HPROF basic type codes.
const (
	Object  = 2
	Boolean = 4
	Char    = 5
	Float   = 6
	Double  = 7
	Byte    = 8
	Short   = 9
	Int     = 10
	Long    = 11
)

// sizes holds the size of each primitive type, 0 for the other codes.
var sizes = [Long + 1]uint8{Boolean: 1, Char: 2, Float: 4, Double: 8, Byte: 1, Short: 2, Int: 4, Long: 8}

// Size returns the size in bytes of a value of the type with code t in a
// file whose identifiers are idSize bytes wide (idSize for Object), or 0 if
// t is not a type code.
func Size(t uint8, idSize int) int {
	if t == Object {
		return idSize
	}
	if int(t) < len(sizes) {
		return int(sizes[t])
	}
	return 0
}
