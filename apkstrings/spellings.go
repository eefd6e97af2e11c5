package apkstrings

import (
	"bytes"
	"strings"
	"sync"
)

// Spellings calls emit with s itself and then with every other spelling a VM
// or a heap dump may use for the same name. Each distinct spelling is emitted
// once per call. The rules:
//
//   - A type descriptor "Lcom/a/B;" gives "com.a.B" (Android, HotSpot before
//     9) and "com/a/B" (HotSpot 9+).
//   - A dotted name "com.a.B" gives "com/a/B" and a slashed name "com/a/B"
//     gives "com.a.B"; "$" of inner classes is kept.
//   - For each class name X, whatever its source, the array classes of one and
//     two dimensions are spelled "X[]" and "X[][]", dotted and slashed (Android
//     writes "java.lang.String[]"), and "[LX;" and "[[LX;", slashed (HotSpot
//     writes "[Ljava/lang/String;") and dotted (Class.getName gives
//     "[Ljava.lang.String;").
//   - An array descriptor "[Lcom/a/B;" gives "[Lcom.a.B;", "com.a.B[]" and
//     "com/a/B[]", plus the spellings of its element class as above; an array
//     class name "com.a.B[]" gives the same set. Arrays of three and more
//     dimensions get their own spellings as well as those of one and two.
//   - A primitive descriptor gives its Java name ("I" gives "int"; likewise J
//     long, Z boolean, B byte, C char, S short, F float, D double, V void)
//     and, except for V, its arrays of one and two dimensions ("int[]",
//     "[I", "int[][]", "[[I"). A primitive array "[[I" gives "int[][]", and
//     "int[]" gives "[I".
//   - A method descriptor such as "(ILjava/lang/String;)V", or a generic
//     signature such as "Ljava/util/List<Lcom/a/B;>;", gives the spellings of
//     every class it names (and of every array type in it), so that classes
//     named only in signatures can be recovered.
//   - Anything else, such as a field or method name like "mDestroyed", is
//     emitted only as itself. So is a dotted or slashed string whose parts are
//     not Java identifiers (such as "1.0" or "a b.c"), since it cannot name a
//     class.
//
// Emitted strings other than s share one allocation per call; emit may keep
// them.
func Spellings(s string, emit func(string)) {
	emit(s)
	if !maySpell(s) {
		return
	}
	sp := spellerPool.Get().(*speller)
	sp.s, sp.buf, sp.spans, sp.nseen, sp.index = s, sp.buf[:0], sp.spans[:0], 0, nil
	sp.expand()
	if len(sp.spans) > 0 {
		all := string(sp.buf)
		for _, x := range sp.spans {
			emit(all[x.start:x.end])
		}
	}
	// Keep nothing of s alive from the pool, nor buffers grown huge.
	sp.s, sp.index = "", nil
	clear(sp.seen[:sp.nseen])
	if cap(sp.buf) <= 64<<10 && cap(sp.spans) <= 4096 {
		spellerPool.Put(sp)
	}
}

var spellerPool = sync.Pool{New: func() any {
	return &speller{buf: make([]byte, 0, 512), spans: make([]span, 0, 32)}
}}

// maySpell is a quick test that rules out plain identifiers, which are most
// strings.
func maySpell(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '(' || c == '<' || c == '[':
		return true
	case len(s) == 1:
		return primName(c) != ""
	}
	if s[len(s)-1] == ']' || s[len(s)-1] == ';' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == '/' {
			return true
		}
	}
	return false
}

type span struct{ start, end int }

type seenType struct {
	name string
	dims int
}

// speller collects the spellings of one string in buf, one span each.
type speller struct {
	s     string
	buf   []byte
	spans []span
	seen  [8]seenType // class types already spelled, from a signature
	nseen int
	// index holds every spelling once there are too many to compare one
	// by one (a long signature).
	index map[string]struct{}
}

// maxLinearSpans is the number of spellings up to which a new one is checked
// for repeats by comparing it with each.
const maxLinearSpans = 48

// commit keeps buf[start:] as a spelling unless it repeats s or an earlier one.
func (sp *speller) commit(start int) {
	c := sp.buf[start:]
	if string(c) == sp.s {
		sp.buf = sp.buf[:start]
		return
	}
	if sp.index != nil {
		if _, dup := sp.index[string(c)]; dup {
			sp.buf = sp.buf[:start]
			return
		}
		sp.index[string(c)] = struct{}{}
		sp.spans = append(sp.spans, span{start, len(sp.buf)})
		return
	}
	for _, x := range sp.spans {
		if x.end-x.start == len(c) && bytes.Equal(sp.buf[x.start:x.end], c) {
			sp.buf = sp.buf[:start]
			return
		}
	}
	sp.spans = append(sp.spans, span{start, len(sp.buf)})
	if len(sp.spans) > maxLinearSpans {
		sp.index = make(map[string]struct{}, 2*len(sp.spans))
		for _, x := range sp.spans {
			sp.index[string(sp.buf[x.start:x.end])] = struct{}{}
		}
	}
}

func (sp *speller) expand() {
	s := sp.s
	c := s[0]
	switch {
	case c == '(' || c == '<':
		sp.signature()
	case c == '[':
		d := 0
		for d < len(s) && s[d] == '[' {
			d++
		}
		rest := s[d:]
		switch {
		case len(rest) == 1 && primName(rest[0]) != "" && rest[0] != 'V':
			sp.prim(rest[0], d)
		case len(rest) >= 3 && rest[0] == 'L' && rest[len(rest)-1] == ';':
			inner := rest[1 : len(rest)-1]
			if strings.IndexByte(inner, '<') >= 0 {
				sp.signature()
			} else if validDescName(inner) {
				sp.class(inner, d)
			}
		}
	case c == 'L' && len(s) >= 3 && s[len(s)-1] == ';':
		inner := s[1 : len(s)-1]
		if strings.IndexByte(inner, '<') >= 0 {
			sp.signature()
		} else if validDescName(inner) {
			sp.class(inner, 0)
		}
	case len(s) == 1:
		sp.prim(c, 0)
	case strings.HasSuffix(s, "[]"):
		base, dims := s, 0
		for strings.HasSuffix(base, "[]") {
			base = base[:len(base)-2]
			dims++
		}
		if p := primCode(base); p != 0 {
			if p != 'V' {
				sp.prim(p, dims)
			}
		} else if validName(base) {
			sp.class(base, dims)
		}
	default:
		if validName(s) {
			sp.class(s, 0)
		}
	}
}

// class spells the class name (dotted, slashed, or without a package) and
// its arrays of one and two dimensions, and of dims dimensions.
func (sp *speller) class(name string, dims int) {
	sp.form(name, 0, '.', false)
	sp.form(name, 0, '/', false)
	for k := 1; k <= 2 || k == dims; k++ {
		sp.form(name, k, '.', false)
		sp.form(name, k, '/', false)
		sp.form(name, k, '/', true)
		sp.form(name, k, '.', true)
		if k == 2 && dims > 2 {
			k = dims - 1
		}
	}
}

// form appends one spelling of name with separator sep and dims array
// dimensions, as "[[Lname;" when desc is set and as "name[][]" otherwise.
func (sp *speller) form(name string, dims int, sep byte, desc bool) {
	start := len(sp.buf)
	if desc {
		for range dims {
			sp.buf = append(sp.buf, '[')
		}
		sp.buf = append(sp.buf, 'L')
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '/' || c == '.' {
			c = sep
		}
		sp.buf = append(sp.buf, c)
	}
	if desc {
		sp.buf = append(sp.buf, ';')
	} else {
		for range dims {
			sp.buf = append(sp.buf, '[', ']')
		}
	}
	sp.commit(start)
}

// prim spells the primitive type with descriptor c: with dims 0, its name and
// arrays of one and two dimensions; otherwise its array of dims dimensions.
func (sp *speller) prim(c byte, dims int) {
	name := primName(c)
	if name == "" {
		return
	}
	if dims == 0 {
		sp.primArray(name, c, 0)
		if c != 'V' {
			sp.primArray(name, c, 1)
			sp.primArray(name, c, 2)
		}
		return
	}
	sp.primArray(name, c, dims)
}

func (sp *speller) primArray(name string, c byte, dims int) {
	start := len(sp.buf)
	sp.buf = append(sp.buf, name...)
	for range dims {
		sp.buf = append(sp.buf, '[', ']')
	}
	sp.commit(start)
	if dims == 0 {
		return
	}
	start = len(sp.buf)
	for range dims {
		sp.buf = append(sp.buf, '[')
	}
	sp.buf = append(sp.buf, c)
	sp.commit(start)
}

// primName gives the Java name of a primitive type descriptor, or "".
func primName(c byte) string {
	switch c {
	case 'I':
		return "int"
	case 'J':
		return "long"
	case 'Z':
		return "boolean"
	case 'B':
		return "byte"
	case 'C':
		return "char"
	case 'S':
		return "short"
	case 'F':
		return "float"
	case 'D':
		return "double"
	case 'V':
		return "void"
	}
	return ""
}

// primCode gives the descriptor of a primitive type's Java name, or 0.
func primCode(name string) byte {
	switch name {
	case "int":
		return 'I'
	case "long":
		return 'J'
	case "boolean":
		return 'Z'
	case "byte":
		return 'B'
	case "char":
		return 'C'
	case "short":
		return 'S'
	case "float":
		return 'F'
	case "double":
		return 'D'
	case "void":
		return 'V'
	}
	return 0
}

// validDescName reports whether the name inside "L...;" can be a class name:
// parts separated by "/" (or, in a dotted descriptor, by "."), none empty, and
// none of the characters a descriptor cannot hold in a name.
func validDescName(name string) bool {
	if name == "" {
		return false
	}
	var sep byte
	prev := byte('/')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '/' || c == '.':
			if sep != 0 && c != sep || prev == '/' || prev == '.' {
				return false
			}
			sep = c
		case c <= ' ' || c == 0x7F || c == ';' || c == '[' || c == ']' || c == '<' || c == '>' || c == '(' || c == ')':
			return false
		}
		prev = c
	}
	return prev != '/' && prev != '.'
}

// validName reports whether a bare string can be a class name: Java
// identifiers separated by "." or "/" (not both), where an identifier is
// letters, digits, "_", "$", "-" and non-ASCII characters and does not start
// with a digit.
func validName(name string) bool {
	if name == "" {
		return false
	}
	var sep byte
	start := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '/' || c == '.':
			if start || sep != 0 && c != sep {
				return false
			}
			sep = c
			start = true
			continue
		case c >= '0' && c <= '9':
			if start {
				return false
			}
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$', c == '-', c >= 0x80:
		default:
			return false
		}
		start = false
	}
	return !start
}

// signature spells the classes and array types named in a method descriptor
// or a generic signature (JVMS §4.7.9.1). Parsing stops at the first thing it
// does not understand; what was found before stays.
func (sp *speller) signature() {
	p := sigParser{s: sp.s, sp: sp}
	if p.peek() == '<' && !p.typeParams() {
		return
	}
	if p.peek() == '(' {
		p.i++
		for p.peek() != ')' {
			if !p.typ() {
				return
			}
		}
		p.i++
		if p.peek() == 'V' {
			p.i++
		} else if !p.typ() {
			return
		}
		for p.peek() == '^' {
			p.i++
			if !p.typ() {
				return
			}
		}
		return
	}
	// A class signature (superclass, interfaces) or a field's type.
	for p.i < len(p.s) {
		if !p.typ() {
			return
		}
	}
}

// maxSigDepth bounds the nesting of type arguments in a signature.
const maxSigDepth = 32

type sigParser struct {
	s     string
	i     int
	sp    *speller
	depth int
}

func (p *sigParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// typeParams skips formal type parameters "<T:Ljava/lang/Object;U::I;>",
// spelling the classes of their bounds.
func (p *sigParser) typeParams() bool {
	p.i++ // '<'
	for p.peek() != '>' {
		j := strings.IndexByte(p.s[p.i:], ':')
		if j <= 0 {
			return false
		}
		p.i += j
		for p.peek() == ':' {
			p.i++
			if c := p.peek(); c == ':' || c == '>' {
				continue
			}
			if !p.typ() {
				return false
			}
		}
	}
	p.i++
	return true
}

// typ reads one type (descriptor or type signature) and spells what it names.
func (p *sigParser) typ() bool {
	if p.depth >= maxSigDepth {
		return false
	}
	p.depth++
	ok := p.typ1()
	p.depth--
	return ok
}

func (p *sigParser) typ1() bool {
	dims := 0
	for p.peek() == '[' {
		dims++
		p.i++
	}
	c := p.peek()
	switch {
	case c == 'T': // type variable
		j := strings.IndexByte(p.s[p.i:], ';')
		if j < 0 {
			return false
		}
		p.i += j + 1
		return true
	case c == 'L':
		p.i++
		name := ""
		var inner []byte // Outer<...>.Inner is the class Outer$Inner
		for {
			start := p.i
			for p.i < len(p.s) && p.s[p.i] != ';' && p.s[p.i] != '<' && p.s[p.i] != '.' {
				p.i++
			}
			if p.i >= len(p.s) {
				return false
			}
			// Appended, so that many inner parts cost their length once.
			switch part := p.s[start:p.i]; {
			case inner != nil:
				inner = append(append(inner, '$'), part...)
			case name != "":
				inner = append(append([]byte(name), '$'), part...)
			default:
				name = part
			}
			if p.s[p.i] == '<' && !p.typeArgs() {
				return false
			}
			switch p.peek() {
			case ';':
				p.i++
				if inner != nil {
					name = string(inner)
				}
				p.class(name, dims)
				return true
			case '.':
				p.i++
			default:
				return false
			}
		}
	case c != 0 && c != 'V' && primName(c) != "":
		p.i++
		if dims > 0 {
			p.sp.prim(c, dims)
		}
		return true
	}
	return false
}

// typeArgs reads "<...>" after a class name.
func (p *sigParser) typeArgs() bool {
	p.i++ // '<'
	for p.peek() != '>' {
		switch p.peek() {
		case 0:
			return false
		case '*':
			p.i++
			continue
		case '+', '-':
			p.i++
		}
		if !p.typ() {
			return false
		}
	}
	p.i++
	return true
}

// class spells a class named in a signature, once per signature.
func (p *sigParser) class(name string, dims int) {
	if !validDescName(name) {
		return
	}
	sp := p.sp
	for _, t := range sp.seen[:sp.nseen] {
		if t.dims == dims && t.name == name {
			return
		}
	}
	if sp.nseen < len(sp.seen) {
		sp.seen[sp.nseen] = seenType{name, dims}
		sp.nseen++
	}
	sp.class(name, dims)
}
