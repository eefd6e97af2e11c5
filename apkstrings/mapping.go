package apkstrings

import (
	"bytes"
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
	// classLines counts the class lines read, kept or not.
	classLines int
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
	return ParseMappingOf(r, nil)
}

// ParseMappingOf is ParseMapping keeping only the classes for whose
// obfuscated name, dotted ("a.b"), keep returns true, and their members;
// a nil keep keeps every class. Every line is checked as ParseMapping
// checks it. A dump holds a part of an app's classes, so that a server
// that knows which (decrunch.FileNames) need not hold the rest: of a
// generated 69 MB mapping of 30,000 classes (BenchmarkParseMapping),
// kept whole, the maps of members took most of the time and memory.
func ParseMappingOf(r io.Reader, keep func(obfuscated string) bool) (*Mapping, error) {
	p := &mappingParser{m: &Mapping{classes: make(map[string]*mappedClass)}, keep: keep}
	err := scanLines(r, p.line)
	p.flush()
	if err != nil {
		return nil, err
	}
	return p.m, nil
}

// mappingParser is the state of ParseMapping between lines.
type mappingParser struct {
	m    *Mapping
	keep func(string) bool
	// inClass: a class line has been read; cur is its class, nil when
	// it is not kept (its members are checked, not stored).
	inClass bool
	cur     *mappedClass
	// The pending method line: R8's inline frames share obfuscated name
	// and range, and the last of them is the real method. The three are
	// copies, their buffers used again from line to line.
	pendName, pendObf, pendRange []byte
}

// flush records the pending method line, if any.
func (p *mappingParser) flush() {
	if len(p.pendObf) > 0 && p.cur != nil {
		if p.cur.methods == nil {
			p.cur.methods = make(map[string]mappedName)
		}
		addMember(p.cur.methods, p.pendObf, p.pendName)
	}
	p.pendName, p.pendObf, p.pendRange = p.pendName[:0], p.pendObf[:0], p.pendRange[:0]
}

// addMember records that obfuscated member obf of a class is named name.
func addMember(m map[string]mappedName, obf, name []byte) {
	n, ok := m[string(obf)]
	if ok && n.name == string(name) {
		return
	}
	if !ok {
		n.name = string(name)
	} else {
		n.ambiguous = true
	}
	m[string(obf)] = n
}

var arrow = []byte(" -> ")

// line parses one line of the file, numbered from 1, at offset off.
func (p *mappingParser) line(line []byte, lineNo int, off int64) error {
	if lineNo == 1 {
		line = trimBOM(line)
	}
	body := bytes.TrimLeft(line, " \t")
	if len(body) == 0 || body[0] == '#' {
		return nil
	}
	bad := func(msg string) error {
		return formatErr(off, fmt.Sprintf("mapping line %d: %s", lineNo, msg))
	}
	left, right, ok := bytes.Cut(body, arrow)
	if !ok {
		return bad(`no " -> "`)
	}
	left = bytes.TrimSpace(left)
	right = bytes.TrimSpace(right)
	if len(body) == len(line) {
		if msg := p.class(left, right); msg != "" {
			return bad(msg)
		}
		return nil
	}
	if !p.inClass {
		return bad("member line before any class line")
	}
	if len(right) == 0 || bytes.ContainsAny(right, " \t") {
		return bad("bad obfuscated member name")
	}
	if msg := p.member(left, right); msg != "" {
		return bad(msg)
	}
	return nil
}

// class takes a class line, "original -> obfuscated:", split at the
// arrow. It returns what is wrong with it, or "".
func (p *mappingParser) class(left, right []byte) string {
	p.flush()
	obf, ok := bytes.CutSuffix(right, []byte(":"))
	obf = bytes.TrimSpace(obf)
	if !ok || len(obf) == 0 || len(left) == 0 || bytes.ContainsAny(obf, " \t") || bytes.ContainsAny(left, " \t") {
		return `class line is not "original -> obfuscated:"`
	}
	p.inClass, p.cur = true, nil
	p.m.classLines++
	c := p.m.classes[string(obf)]
	if c == nil && p.keep != nil && !p.keep(string(obf)) {
		return ""
	}
	p.m.longestClass = max(p.m.longestClass, len(obf))
	if c == nil {
		c = &mappedClass{original: string(left)}
		p.m.classes[string(obf)] = c
	} else if c.original != string(left) {
		c.ambiguous = true
	}
	p.cur = c
	return ""
}

// member takes a member line of the current class, split at the arrow:
// "[a:b:]type name[(args)[:c[:d]]] -> obfuscated". It returns what is
// wrong with it, or "".
func (p *mappingParser) member(left, obf []byte) string {
	lineRange, left, ok := cutLineRange(left)
	if !ok {
		return "bad line range"
	}
	if p.cur != nil {
		p.m.longestMember = max(p.m.longestMember, len(obf))
	}
	open := bytes.IndexByte(left, '(')
	if open < 0 {
		// A field: "type name".
		p.flush()
		if len(lineRange) > 0 {
			return "field with a line range"
		}
		sp := bytes.LastIndexAny(left, " \t")
		if sp <= 0 || sp == len(left)-1 {
			return `field is not "type name"`
		}
		if p.cur != nil {
			if p.cur.fields == nil {
				p.cur.fields = make(map[string]mappedName)
			}
			addMember(p.cur.fields, obf, simpleName(left[sp+1:]))
		}
		return ""
	}
	// A method: "type name(args)" with an optional ":c" or ":c:d".
	head := left[:open]
	sp := bytes.LastIndexAny(head, " \t")
	if sp <= 0 || sp == len(head)-1 {
		return `method is not "type name(arguments)"`
	}
	if bytes.IndexByte(left[open:], ')') < 0 {
		return `method arguments have no ")"`
	}
	name := simpleName(head[sp+1:])
	if len(lineRange) == 0 || !bytes.Equal(lineRange, p.pendRange) || !bytes.Equal(obf, p.pendObf) {
		p.flush()
	}
	p.pendName = append(p.pendName[:0], name...)
	p.pendObf = append(p.pendObf[:0], obf...)
	p.pendRange = append(p.pendRange[:0], lineRange...)
	return ""
}

// cutLineRange splits the "a:b:" line range off the left side of a member
// line, if it starts with a digit. ok is false when the range is
// malformed.
func cutLineRange(left []byte) (lineRange, rest []byte, ok bool) {
	if len(left) == 0 || !isDigit(left[0]) {
		return nil, left, true
	}
	i := 0
	for range 2 {
		j := i
		for j < len(left) && isDigit(left[j]) {
			j++
		}
		if j == i || j >= len(left) || left[j] != ':' {
			return nil, left, false
		}
		i = j + 1
	}
	return left[:i], left[i:], true
}

// simpleName drops the class of a member that R8 writes qualified
// ("com.a.Util.helper" for a method inlined from, or moved out of, another
// class).
func simpleName(name []byte) []byte {
	if i := bytes.LastIndexByte(name, '.'); i >= 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return name
}

// Classes returns how many classes the mapping names: those kept, for a
// mapping of ParseMappingOf.
func (m *Mapping) Classes() int { return len(m.classes) }

// ClassLines returns how many class lines the file has, those of the
// classes kept or not (ParseMappingOf): 0 for a file that is no mapping
// (comments only, say).
func (m *Mapping) ClassLines() int { return m.classLines }

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
