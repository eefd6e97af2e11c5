package bmd

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// BMD version 1 is the format of the original tools published in 2014 (a
// Java cruncher and decruncher, "hprof-tools"): varint records with explicit
// dense IDs, names hashed with Java's String.hashCode(), one ROOT OBJECTS
// record with all roots, and top-level HPROF records wrapped unchanged as
// LEGACY records. spec/bmd.md §11 describes it as this package reads and
// writes it. V1Reader and V1Writer work on the records themselves; the
// conversions to and from HPROF live in the crunch and decrunch packages.

// Version1 is the version number of the original tools' format.
const Version1 = 1

// HashJava names the string hash of version 1 in Metadata.Hash: Java's
// String.hashCode() over the UTF-16 code units of the name, as a 32-bit
// two's-complement value (stored in a uint64 as its low 32 bits).
const HashJava = "java-hashcode"

// V1Tag is the tag of a BMD version 1 record.
type V1Tag uint8

// Record tags of BMD version 1. There are no others: the original reader
// stops at any other tag, and records have no length that would let a reader
// skip one.
const (
	V1String          V1Tag = 1 // a name in the clear
	V1HashedString    V1Tag = 2 // a name as its UTF-8 length and Java hash
	V1ClassDefinition V1Tag = 3 // a class: super, name, constants, statics, kept instance fields
	V1InstanceDump    V1Tag = 4 // an instance: the values of its kept fields
	V1RootObjects     V1Tag = 5 // GC roots, kinds not recorded
	V1ObjectArray     V1Tag = 6
	V1PrimitiveArray  V1Tag = 7 // PRIMITIVE ARRAY PLACEHOLDER: element type and count, no contents
	V1Legacy          V1Tag = 8 // a top-level HPROF record, body unchanged
	v1MaxTag                = 8
)

var v1TagNames = [...]string{
	V1String: "STRING", V1HashedString: "HASHED STRING", V1ClassDefinition: "CLASS DEFINITION",
	V1InstanceDump: "INSTANCE DUMP", V1RootObjects: "ROOT OBJECTS", V1ObjectArray: "OBJECT ARRAY",
	V1PrimitiveArray: "PRIMITIVE ARRAY PLACEHOLDER", V1Legacy: "LEGACY HPROF RECORD",
}

// String returns the record's name as the original tools spell it.
func (t V1Tag) String() string {
	if t >= 1 && t <= v1MaxTag {
		return v1TagNames[t]
	}
	return fmt.Sprintf("tag %d", uint8(t))
}

// v1Types maps the version 1 type codes 0…8 to HPROF type codes.
var v1Types = [...]Type{Object, Int, Boolean, Byte, Char, Float, Double, Long, Short}

// V1TypeCode returns the version 1 code of a type (0 object, 1 int,
// 2 boolean, 3 byte, 4 char, 5 float, 6 double, 7 long, 8 short).
func V1TypeCode(t Type) (uint8, bool) {
	for i, u := range v1Types {
		if u == t {
			return uint8(i), true
		}
	}
	return 0, false
}

// TypeFromV1 returns the type of a version 1 type code.
func TypeFromV1(code uint64) (Type, bool) {
	if code >= uint64(len(v1Types)) {
		return 0, false
	}
	return v1Types[code], true
}

// V1Class is a CLASS DEFINITION. Types are HPROF type codes; values are
// held as in version 2 records (Static.Value): an object ID, or the bits of
// the primitive value. Version 1 has no "kept" flag: every constant and
// static carries a value, and Fields lists the instance fields whose values
// the instances carry, in declaration order; the other instance fields of
// the class are known only by their total size, Discarded.
type V1Class struct {
	ID        uint32
	Super     uint32 // 0 for none
	Name      uint32 // string ID
	Constants []Constant
	Statics   []Static
	Fields    []Field
	Discarded uint32 // bytes of the instance fields not listed
}

// MinFields returns the fewest Java fields whose sizes (1, 2, 4 or 8
// bytes) add up to n bytes: n/8 of 8 bytes and one for each bit of n%8.
func MinFields(n uint32) int { return int(n/8) + bits.OnesCount32(n%8) }

// fits reports whether the class could be a Java class, as HPROF holds
// one: its listed fields and the fewest that its discarded bytes can be
// (MinFields) are at most 65535 in all, the count a CLASS DUMP holds.
func (c *V1Class) fits() bool {
	return c.Discarded <= MaxV1Discarded && len(c.Fields)+MinFields(c.Discarded) <= 0xFFFF
}

// Clone returns a deep copy of c.
func (c *V1Class) Clone() *V1Class {
	d := *c
	d.Constants = append([]Constant(nil), c.Constants...)
	d.Statics = append([]Static(nil), c.Statics...)
	d.Fields = append([]Field(nil), c.Fields...)
	return &d
}

// V1Record is one decoded version 1 record; which fields are set depends on
// Tag. Slices are reused and valid until the next call to Next.
type V1Record struct {
	Tag    V1Tag
	Offset int64

	ID     uint32   // STRING, HASHED STRING: string ID; INSTANCE DUMP, OBJECT ARRAY, PRIMITIVE ARRAY: object ID
	Text   []byte   // STRING: the bytes; LEGACY: the HPROF body
	Length uint32   // HASHED STRING: byte length of the name in UTF-8
	Hash   int32    // HASHED STRING: Java hash of the name
	Class  V1Class  // CLASS DEFINITION
	Of     uint32   // INSTANCE DUMP, OBJECT ARRAY: the class ID
	Values []uint64 // INSTANCE DUMP: one per field of V1Reader.Layout(Of)
	IDs    []uint32 // OBJECT ARRAY: elements; ROOT OBJECTS: the root objects
	Type   Type     // PRIMITIVE ARRAY: element type (HPROF code)
	Count  uint32   // PRIMITIVE ARRAY: element count
	HTag   uint8    // LEGACY: the HPROF record tag
}

// appendInt32 appends v as protobuf int32 does (and the original tools'
// writeInt32): a varint of v sign-extended to 64 bits, so a negative value
// always takes 10 bytes.
func appendInt32(b []byte, v int32) []byte { return protowire.AppendVarint(b, uint64(int64(v))) }

// appendV1Value appends a field value in the original tools' encoding:
// object and int as int32 varints, short sign-extended to an int32 varint,
// long as a varint of its two's complement, float and double little-endian,
// boolean and byte one raw byte, char two raw bytes big-endian (as in
// HPROF). A boolean is written as 0 or 1.
func appendV1Value(b []byte, t Type, v uint64) []byte {
	switch t {
	case Object, Int:
		return appendInt32(b, int32(uint32(v)))
	case Short:
		return appendInt32(b, int32(int16(uint16(v))))
	case Long:
		return protowire.AppendVarint(b, v)
	case Float:
		return binary.LittleEndian.AppendUint32(b, uint32(v))
	case Double:
		return binary.LittleEndian.AppendUint64(b, v)
	case Boolean:
		if v&0xFF != 0 {
			return append(b, 1)
		}
		return append(b, 0)
	case Byte:
		return append(b, byte(v))
	case Char:
		return binary.BigEndian.AppendUint16(b, uint16(v))
	}
	return b
}

// v1Layouts holds the classes of a version 1 file by ID, for walking the
// chain of an instance as the original reader does: the class's kept
// fields, then its super class's, while the super class is defined. Chains
// are walked, not flattened and stored: flattening every class's chain
// costs memory quadratic in the depth of the hierarchy. Each class keeps
// instead a link to its super class and the length of its chain, found
// once for the classes defined (chart), so that a walk looks nothing up.
type v1Layouts struct {
	classes map[uint32]*v1Entry
	path    []*v1Entry // chart's, kept for the next
}

// v1Entry is a class of v1Layouts and its chain as last charted: up, its
// super class's entry (nil if not defined), and depth, the classes of its
// chain, each once; valid while no class has been defined since
// (len(v1Layouts.classes) == chartedAt).
type v1Entry struct {
	V1Class   // ID, Super, Fields and Discarded only
	up        *v1Entry
	depth     int
	chartedAt int
}

func (l *v1Layouts) has(id uint32) bool { _, ok := l.classes[id]; return ok }

func (l *v1Layouts) add(c *V1Class) bool {
	if l.classes == nil {
		l.classes = map[uint32]*v1Entry{}
	}
	if _, dup := l.classes[c.ID]; dup {
		return false
	}
	l.classes[c.ID] = &v1Entry{V1Class: V1Class{ID: c.ID, Super: c.Super, Fields: append([]Field(nil), c.Fields...), Discarded: c.Discarded}}
	return true
}

// class returns the definition of class id, or nil.
func (l *v1Layouts) class(id uint32) *V1Class {
	if e := l.classes[id]; e != nil {
		return &e.V1Class
	}
	return nil
}

// walk calls f with class id and then each defined super class in turn,
// each class once. It stops at an undefined super class, at a class it
// has visited already (a cycle, in damaged or crafted input only: the
// original reader would loop), or when f returns false. It returns the
// number of classes visited, and false if class id is not defined.
func (l *v1Layouts) walk(id uint32, f func(*V1Class) bool) (int, bool) {
	e, ok := l.classes[id]
	if !ok {
		return 0, false
	}
	if e.chartedAt != len(l.classes) {
		l.chart(e)
	}
	depth := e.depth
	for n := range depth {
		if !f(&e.V1Class) {
			return n + 1, true
		}
		e = e.up
	}
	return depth, true
}

// chart finds the chain of e with the classes defined now: each class's
// up and depth, for e and the classes up its chain not charted since the
// last class was defined. It walks the chain once, to the first class
// that is undefined, charted already or on the path (a cycle).
func (l *v1Layouts) chart(e *v1Entry) {
	const onPath = -1 // in v1Entry.chartedAt, while depth is the position
	now := len(l.classes)
	path := l.path[:0]
	beyond, cycle := 0, -1 // the classes after the path; where a cycle starts
	for c := e; ; {
		c.chartedAt, c.depth = onPath, len(path)
		path = append(path, c)
		c.up = l.classes[c.Super]
		if c.up == nil {
			break
		}
		if c.up.chartedAt == now {
			beyond = c.up.depth
			break
		}
		if c.up.chartedAt == onPath {
			cycle = c.up.depth
			break
		}
		c = c.up
	}
	k := len(path)
	for i, c := range path {
		c.chartedAt, c.depth = now, k-i+beyond
		if cycle >= 0 && i >= cycle {
			c.depth = k - cycle // a class of the cycle: the cycle's
		}
	}
	clear(path)
	l.path = path[:0]
}

// layout returns the flattened kept fields of class id's chain.
func (l *v1Layouts) layout(id uint32) ([]Field, bool) {
	ch := []Field{}
	_, ok := l.walk(id, func(c *V1Class) bool { ch = append(ch, c.Fields...); return true })
	return ch, ok
}

// V1MarkerPrefix starts the text of the STRING record that this project
// writes first in a version 1 file (spec/bmd.md §11.5). The rest of the
// text is URL query syntax: what a version 2 header says and version 1
// cannot (the original identifier size, the timestamp, the hash, the tool,
// the options). The original decruncher writes it as one more HPROF STRING,
// unused. Its presence also says that the file's LEGACY records were
// rewritten with the file's own IDs, at 4 bytes.
const V1MarkerPrefix = "heapcrunch-bmd1?"

// AppendV1Marker appends the marker text for m to b.
func AppendV1Marker(b []byte, m *Metadata) []byte {
	v := url.Values{}
	v.Set("id_size", strconv.Itoa(m.IDSize))
	v.Set("timestamp", strconv.FormatUint(m.Timestamp, 10))
	v.Set("hash", m.Hash)
	if m.Tool != "" {
		v.Set("tool", m.Tool)
	}
	if m.Options != "" {
		v.Set("options", m.Options)
	}
	return append(append(b, V1MarkerPrefix...), v.Encode()...)
}

// ParseV1Marker reads a marker text into m (HPROFVersion is left as it is).
// It returns false if text is not a marker.
func ParseV1Marker(text []byte, m *Metadata) bool {
	s, ok := strings.CutPrefix(string(text), V1MarkerPrefix)
	if !ok {
		return false
	}
	v, err := url.ParseQuery(s)
	if err != nil {
		return false
	}
	if n, err := strconv.Atoi(v.Get("id_size")); err == nil && (n == 4 || n == 8) {
		m.IDSize = n
	}
	if t, err := strconv.ParseUint(v.Get("timestamp"), 10, 64); err == nil {
		m.Timestamp = t
	}
	if h := v.Get("hash"); h != "" {
		m.Hash = h
	}
	m.Tool, m.Options = v.Get("tool"), v.Get("options")
	return true
}
