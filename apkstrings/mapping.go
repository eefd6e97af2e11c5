package apkstrings

import (
	"fmt"
	"io"
	"strings"
)

// Mapping is a parsed ProGuard/R8 mapping.txt: it maps obfuscated class, field
// and method names back to the original ones. Its methods may be called from
// several goroutines at once.
type Mapping struct {
	// classes is keyed by the obfuscated class name, dotted.
	classes map[string]*mappedClass
}

type mappedClass struct {
	original  string // dotted
	ambiguous bool   // several originals have this obfuscated name
	fields    map[string]mappedName
	methods   map[string]mappedName
}

type mappedName struct {
	name      string
	ambiguous bool
}

func (n *mappedName) add(name string) {
	if n.name == "" {
		n.name = name
	} else if n.name != name {
		n.ambiguous = true
	}
}

// ParseMapping reads a ProGuard or R8 mapping file:
//
//	com.example.Original -> a.b:
//	    int count -> a
//	    1:5:void run(int):10:14 -> b
//	    # {"id":"sourceFile","fileName":"Original.kt"}
//
// Lines starting with "#" (after any indentation) are comments. Of the lines
// R8 writes for inlined code (several lines with the same obfuscated name and
// the same line range), the last one names the method that holds the code;
// the others name methods inlined into it and are not taken as originals.
// A malformed line is a *FormatError whose message gives its line number.
func ParseMapping(r io.Reader) (*Mapping, error) {
	m := &Mapping{classes: make(map[string]*mappedClass)}
	var cur *mappedClass
	// The pending method line: R8's inline frames share obfuscated name and
	// range, and the last of them is the real method.
	var pendName, pendObf, pendRange string
	flush := func() {
		if pendObf != "" && cur != nil {
			if cur.methods == nil {
				cur.methods = make(map[string]mappedName)
			}
			n := cur.methods[pendObf]
			n.add(pendName)
			cur.methods[pendObf] = n
		}
		pendName, pendObf, pendRange = "", "", ""
	}
	err := scanLines(r, func(raw []byte, lineNo int, off int64) error {
		if lineNo == 1 {
			raw = trimBOM(raw)
		}
		line := string(raw)
		body := strings.TrimLeft(line, " \t")
		if body == "" || body[0] == '#' {
			return nil
		}
		bad := func(msg string) error {
			return formatErr(off, fmt.Sprintf("mapping line %d: %s", lineNo, msg))
		}
		left, right, ok := strings.Cut(body, " -> ")
		if !ok {
			return bad(`no " -> "`)
		}
		left = strings.TrimSpace(left)
		right = strings.TrimSpace(right)
		if len(body) == len(line) {
			// A class line: "original -> obfuscated:".
			flush()
			obf, ok := strings.CutSuffix(right, ":")
			obf = strings.TrimSpace(obf)
			if !ok || obf == "" || left == "" || strings.ContainsAny(obf, " \t") || strings.ContainsAny(left, " \t") {
				return bad(`class line is not "original -> obfuscated:"`)
			}
			c := m.classes[obf]
			if c == nil {
				c = &mappedClass{original: left}
				m.classes[obf] = c
			} else if c.original != left {
				c.ambiguous = true
			}
			cur = c
			return nil
		}
		if cur == nil {
			return bad("member line before any class line")
		}
		if right == "" || strings.ContainsAny(right, " \t") {
			return bad("bad obfuscated member name")
		}
		// Member: [a:b:]type name[(args)[:c[:d]]]
		var lineRange string
		if left != "" && isDigit(left[0]) {
			i := 0
			for k := 0; k < 2; k++ {
				j := i
				for j < len(left) && isDigit(left[j]) {
					j++
				}
				if j == i || j >= len(left) || left[j] != ':' {
					return bad("bad line range")
				}
				i = j + 1
			}
			lineRange = left[:i]
			left = left[i:]
		}
		sp := strings.LastIndexAny(left, " \t")
		open := strings.IndexByte(left, '(')
		if open < 0 {
			// A field: "type name".
			flush()
			if lineRange != "" {
				return bad("field with a line range")
			}
			if sp <= 0 || sp == len(left)-1 {
				return bad(`field is not "type name"`)
			}
			if cur.fields == nil {
				cur.fields = make(map[string]mappedName)
			}
			n := cur.fields[right]
			n.add(simpleName(left[sp+1:]))
			cur.fields[right] = n
			return nil
		}
		// A method: "type name(args)" with an optional ":c" or ":c:d".
		head := left[:open]
		sp = strings.LastIndexAny(head, " \t")
		if sp <= 0 || sp == len(head)-1 {
			return bad(`method is not "type name(arguments)"`)
		}
		if strings.IndexByte(left[open:], ')') < 0 {
			return bad(`method arguments have no ")"`)
		}
		name := simpleName(head[sp+1:])
		if lineRange == "" || lineRange != pendRange || right != pendObf {
			flush()
		}
		pendName, pendObf, pendRange = name, right, lineRange
		return nil
	})
	flush()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// simpleName drops the class of a member that R8 writes qualified
// ("com.a.Util.helper" for a method inlined from, or moved out of, another
// class).
func simpleName(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return name
}

// Class returns the original name of an obfuscated class. The name may be
// dotted ("a.b") or slashed ("a/b"), and may be an array class ("a.b[]",
// "a/b[][]", "[La/b;", "[La.b;") or a descriptor ("La/b;"); the answer is
// spelled the same way, e.g. "[Lcom/example/Original;" for "[La/b;". A name
// without any "." or "/" is answered dotted. ok is false when the class is not
// in the mapping or when several original classes have this obfuscated name.
func (m *Mapping) Class(obfuscated string) (string, bool) {
	if m == nil {
		return "", false
	}
	name, dims, desc := obfuscated, 0, false
	if strings.HasPrefix(name, "[") || strings.HasPrefix(name, "L") && strings.HasSuffix(name, ";") && len(name) > 2 {
		for dims < len(name) && name[dims] == '[' {
			dims++
		}
		name = name[dims:]
		if len(name) < 3 || name[0] != 'L' || name[len(name)-1] != ';' {
			return "", false
		}
		name = name[1 : len(name)-1]
		desc = true
	} else {
		for strings.HasSuffix(name, "[]") {
			name = name[:len(name)-2]
			dims++
		}
	}
	slashed := strings.IndexByte(name, '/') >= 0 || desc && strings.IndexByte(name, '.') < 0
	c := m.classes[strings.ReplaceAll(name, "/", ".")]
	if c == nil || c.ambiguous {
		return "", false
	}
	orig := c.original
	if slashed {
		orig = strings.ReplaceAll(orig, ".", "/")
	}
	if desc {
		return strings.Repeat("[", dims) + "L" + orig + ";", true
	}
	return orig + strings.Repeat("[]", dims), true
}

// Field returns the original name of a field of an obfuscated class (dotted
// or slashed). ok is false when the class or field is not in the mapping, or
// when several fields with different original names have this obfuscated
// name in the class.
func (m *Mapping) Field(obfClass, obfField string) (string, bool) {
	c := m.class(obfClass)
	if c == nil {
		return "", false
	}
	n, ok := c.fields[obfField]
	if !ok || n.ambiguous {
		return "", false
	}
	return n.name, true
}

// Method returns the original name of a method of an obfuscated class (dotted
// or slashed). When several methods of the class have this obfuscated name
// (R8 gives overloads with different signatures the same name), ok is false
// unless their original names are all the same. Methods inlined into others
// do not count.
func (m *Mapping) Method(obfClass, obfMethod string) (string, bool) {
	c := m.class(obfClass)
	if c == nil {
		return "", false
	}
	n, ok := c.methods[obfMethod]
	if !ok || n.ambiguous {
		return "", false
	}
	return n.name, true
}

func (m *Mapping) class(obf string) *mappedClass {
	if m == nil {
		return nil
	}
	if strings.IndexByte(obf, '/') >= 0 {
		obf = strings.ReplaceAll(obf, "/", ".")
	}
	return m.classes[obf]
}
