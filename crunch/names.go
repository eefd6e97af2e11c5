package crunch

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

var primitiveNames = map[string]bool{
	"boolean": true, "byte": true, "char": true, "short": true, "int": true,
	"long": true, "float": true, "double": true, "void": true,
}

// analyzerFieldNames are names of JDK fields that analyzers read to make
// sense of a heap (String contents and coder, Reference links, the system
// properties VisualVM reads to size objects, hash table links). They are
// JDK names, not application names, so they stay in the clear.
var analyzerFieldNames = map[string]bool{
	"value": true, "count": true, "offset": true, "hash": true, "coder": true,
	"referent": true, "queue": true, "next": true, "discovered": true,
	"props": true, "table": true, "key": true, "elementData": true, "size": true,
	"name": true, "tid": true, "threadStatus": true, "contextClassLoader": true,
	"<resolved_references>": true, "<constant_pool>": true, "<classLoader>": true,
	"$staticOverhead": true, "$classOverhead": true, // Dalvik's pseudo-statics: analyzers skip them by name
}

// KeepInClear reports whether a name stays readable in a BMD file written
// with default options, whatever it names: the empty name (a hashed name
// is never empty, so a hashed entry of length 0 can mean "length not
// known"), primitive type names and their array classes in every VM
// spelling, java.lang and java/lang class names (subpackages and arrays
// included), "V", and the JDK field names analyzers rely on.
func KeepInClear(name []byte) bool {
	s := string(name) // the compiler does not allocate for map lookups and comparisons below
	if s == "" || s == "V" || primitiveNames[s] || analyzerFieldNames[s] {
		return true
	}
	// Array spellings: "int[][]", "java.lang.String[]".
	base := s
	for strings.HasSuffix(base, "[]") {
		base = base[:len(base)-2]
	}
	if base != s {
		return primitiveNames[base] || isJavaLang(base)
	}
	// Descriptors: "[I", "[[Ljava/lang/String;", "[Ljava.lang.Object;".
	if strings.HasPrefix(s, "[") {
		d := strings.TrimLeft(s, "[")
		if len(d) == 1 {
			return strings.Contains("ZBCSIJFD", d)
		}
		if strings.HasPrefix(d, "L") && strings.HasSuffix(d, ";") {
			return isJavaLang(d[1 : len(d)-1])
		}
		return false
	}
	return isJavaLang(s)
}

func isJavaLang(s string) bool {
	return (strings.HasPrefix(s, "java.lang.") || strings.HasPrefix(s, "java/lang/")) && len(s) > len("java.lang.")
}

// HashName returns the version 2 hash of a name: xxhash64 of
// NormalizeName(b).
func HashName(b []byte) uint64 { return xxhash.Sum64(NormalizeName(b)) }

// NormalizeName returns a name from a dump as standard UTF-8. Names from
// Android and HotSpot dumps are modified UTF-8 (CESU-8 surrogate pairs, C0 80
// for NUL); converting them makes the hash and the byte length match the same
// name taken from a DEX or class file. Plain names are returned as they are.
func NormalizeName(b []byte) []byte {
	if isPlainUTF8(b) {
		return b
	}
	return mutf8ToUTF8(b)
}

func isPlainUTF8(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return utf8.Valid(b) && !bytes.Contains(b, []byte{0xED})
		}
	}
	return true
}

// mutf8ToUTF8 converts modified UTF-8 to UTF-8: C0 80 to NUL, CESU-8
// surrogate pairs to 4-byte sequences, anything invalid to U+FFFD.
func mutf8ToUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			out = append(out, c)
			i++
		case c == 0xC0 && i+1 < len(b) && b[i+1] == 0x80:
			out = append(out, 0)
			i += 2
		case c == 0xED && i+5 < len(b) && b[i+1] >= 0xA0 && b[i+1] <= 0xAF && b[i+3] == 0xED && b[i+4] >= 0xB0 && b[i+4] <= 0xBF:
			hi := rune(b[i+1]&0x0F)<<6 | rune(b[i+2]&0x3F)
			lo := rune(b[i+4]&0x0F)<<6 | rune(b[i+5]&0x3F)
			r := 0x10000 + (hi << 10) + lo
			out = utf8.AppendRune(out, r)
			i += 6
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r >= 0xD800 && r <= 0xDFFF || r == utf8.RuneError && n <= 1 {
				// lone surrogate encoded in 3 bytes, or invalid byte
				if c == 0xED && i+2 < len(b) {
					n = 3
				} else {
					n = 1
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			i += n
		}
	}
	return out
}

// classNameSpellings returns the spellings under which a VM may write the
// class name given by a user (dotted or slashed).
func classNameSpellings(name string) []string {
	d := strings.ReplaceAll(name, "/", ".")
	return []string{d, strings.ReplaceAll(d, ".", "/")}
}
