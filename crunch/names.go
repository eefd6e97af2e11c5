package crunch

import "strings"

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

// classNameSpellings returns the spellings under which a VM may write the
// class name given by a user (dotted or slashed).
func classNameSpellings(name string) []string {
	d := strings.ReplaceAll(name, "/", ".")
	return []string{d, strings.ReplaceAll(d, ".", "/")}
}
