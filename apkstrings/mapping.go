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
	// The longest obfuscated class and member names in the file: a
	// lookup of a longer name fails before any work sized by it, so that
	// a dump's long names (a heap record may name a 1 MB string many
	// times) cost each lookup no more than the mapping's own names do.
	longestClass, longestMember int
}

// maxArraySpelling is the most that an array class's spelling adds to
// its element class's name: 255 dimensions (the JVM's limit) of "[]".
const maxArraySpelling = 2 * 255

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
	p := &mappingParser{m: &Mapping{classes: make(map[string]*mappedClass)}}
	err := scanLines(r, p.line)
	p.flush()
	if err != nil {
		return nil, err
	}
	return p.m, nil
}

// mappingParser is the state of ParseMapping between lines.
type mappingParser struct {
	m   *Mapping
	cur *mappedClass // the class of the member lines that follow
	// The pending method line: R8's inline frames share obfuscated name
	// and range, and the last of them is the real method.
	pendName, pendObf, pendRange string
}

// flush records the pending method line, if any.
func (p *mappingParser) flush() {
	if p.pendObf != "" && p.cur != nil {
		if p.cur.methods == nil {
			p.cur.methods = make(map[string]mappedName)
		}
		n := p.cur.methods[p.pendObf]
		n.add(p.pendName)
		p.cur.methods[p.pendObf] = n
	}
	p.pendName, p.pendObf, p.pendRange = "", "", ""
}

// line parses one line of the file, numbered from 1, at offset off.
func (p *mappingParser) line(raw []byte, lineNo int, off int64) error {
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
		if msg := p.class(left, right); msg != "" {
			return bad(msg)
		}
		return nil
	}
	if p.cur == nil {
		return bad("member line before any class line")
	}
	if right == "" || strings.ContainsAny(right, " \t") {
		return bad("bad obfuscated member name")
	}
	if msg := p.member(left, right); msg != "" {
		return bad(msg)
	}
	return nil
}

// class takes a class line, "original -> obfuscated:", split at the
// arrow. It returns what is wrong with it, or "".
func (p *mappingParser) class(left, right string) string {
	p.flush()
	obf, ok := strings.CutSuffix(right, ":")
	obf = strings.TrimSpace(obf)
	if !ok || obf == "" || left == "" || strings.ContainsAny(obf, " \t") || strings.ContainsAny(left, " \t") {
		return `class line is not "original -> obfuscated:"`
	}
	p.m.longestClass = max(p.m.longestClass, len(obf))
	c := p.m.classes[obf]
	if c == nil {
		c = &mappedClass{original: left}
		p.m.classes[obf] = c
	} else if c.original != left {
		c.ambiguous = true
	}
	p.cur = c
	return ""
}

// member takes a member line of the current class, split at the arrow:
// "[a:b:]type name[(args)[:c[:d]]] -> obfuscated". It returns what is
// wrong with it, or "".
func (p *mappingParser) member(left, obf string) string {
	lineRange, left, ok := cutLineRange(left)
	if !ok {
		return "bad line range"
	}
	p.m.longestMember = max(p.m.longestMember, len(obf))
	open := strings.IndexByte(left, '(')
	if open < 0 {
		// A field: "type name".
		p.flush()
		if lineRange != "" {
			return "field with a line range"
		}
		sp := strings.LastIndexAny(left, " \t")
		if sp <= 0 || sp == len(left)-1 {
			return `field is not "type name"`
		}
		if p.cur.fields == nil {
			p.cur.fields = make(map[string]mappedName)
		}
		n := p.cur.fields[obf]
		n.add(simpleName(left[sp+1:]))
		p.cur.fields[obf] = n
		return ""
	}
	// A method: "type name(args)" with an optional ":c" or ":c:d".
	head := left[:open]
	sp := strings.LastIndexAny(head, " \t")
	if sp <= 0 || sp == len(head)-1 {
		return `method is not "type name(arguments)"`
	}
	if strings.IndexByte(left[open:], ')') < 0 {
		return `method arguments have no ")"`
	}
	name := simpleName(head[sp+1:])
	if lineRange == "" || lineRange != p.pendRange || obf != p.pendObf {
		p.flush()
	}
	p.pendName, p.pendObf, p.pendRange = name, obf, lineRange
	return ""
}

// cutLineRange splits the "a:b:" line range off the left side of a member
// line, if it starts with a digit. ok is false when the range is
// malformed.
func cutLineRange(left string) (lineRange, rest string, ok bool) {
	if left == "" || !isDigit(left[0]) {
		return "", left, true
	}
	i := 0
	for range 2 {
		j := i
		for j < len(left) && isDigit(left[j]) {
			j++
		}
		if j == i || j >= len(left) || left[j] != ':' {
			return "", left, false
		}
		i = j + 1
	}
	return left[:i], left[i:], true
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

// Classes returns how many classes the mapping names.
func (m *Mapping) Classes() int { return len(m.classes) }

// Class returns the original name of an obfuscated class. The name may be
// dotted ("a.b") or slashed ("a/b"), and may be an array class ("a.b[]",
// "a/b[][]", "[La/b;", "[La.b;") or a descriptor ("La/b;"); the answer is
// spelled the same way, e.g. "[Lcom/example/Original;" for "[La/b;". A name
// without any "." or "/" is answered dotted. ok is false when the class is not
// in the mapping or when several original classes have this obfuscated name.
func (m *Mapping) Class(obfuscated string) (string, bool) {
	if m == nil || len(obfuscated) > m.longestClass+maxArraySpelling {
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
	if c == nil || len(obfField) > m.longestMember {
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
	if c == nil || len(obfMethod) > m.longestMember {
		return "", false
	}
	n, ok := c.methods[obfMethod]
	if !ok || n.ambiguous {
		return "", false
	}
	return n.name, true
}

func (m *Mapping) class(obf string) *mappedClass {
	if m == nil || len(obf) > m.longestClass {
		return nil
	}
	if strings.IndexByte(obf, '/') >= 0 {
		obf = strings.ReplaceAll(obf, "/", ".")
	}
	return m.classes[obf]
}
