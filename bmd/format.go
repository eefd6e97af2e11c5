// Package bmd reads and writes BMD ("Badoo Memory Dump") files: a compact,
// flat encoding of a Java heap dump made of varint records, with object IDs
// remapped densely, names hashed and primitive contents dropped.
//
// Version 2 is this project's format, specified in spec/bmd.md; version 1 is
// the format of the original 2014 tools (see V1Reader and V1Writer). The
// package knows nothing of HPROF: callers convert.
package bmd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heapcrunch/heapcrunch/internal/javatype"
	"google.golang.org/protobuf/encoding/protowire"
)

// Version2 is the format version this package writes by default.
const Version2 = 2

// Kind is the tag of a BMD version 2 record.
type Kind uint8

// Record kinds of BMD version 2 (see spec/bmd.md for each layout).
const (
	KindString          Kind = 1  // a name in the clear
	KindHashedString    Kind = 2  // a name as its byte length and xxhash64
	KindLoadClass       Kind = 3  // HPROF LOAD CLASS
	KindUnloadClass     Kind = 4  // HPROF UNLOAD CLASS
	KindStackFrame      Kind = 5  // HPROF STACK FRAME
	KindStackTrace      Kind = 6  // HPROF STACK TRACE
	KindStartThread     Kind = 7  // HPROF START THREAD
	KindEndThread       Kind = 8  // HPROF END THREAD
	KindRawRecord       Kind = 9  // any other top-level HPROF record, body unchanged
	KindTime            Kind = 10 // sets the time of the top-level records that follow
	KindHeapDump        Kind = 11 // starts an HPROF HEAP DUMP or HEAP DUMP SEGMENT
	KindHeapDumpEnd     Kind = 12 // HPROF HEAP DUMP END
	KindClass           Kind = 13 // a class definition (CLASS DUMP)
	KindInstance        Kind = 14 // INSTANCE DUMP
	KindObjectArray     Kind = 15 // OBJECT ARRAY DUMP
	KindPrimitiveArray  Kind = 16 // PRIMITIVE ARRAY DUMP, as type and length
	KindPrimitiveNoData Kind = 17 // Android PRIMITIVE ARRAY NODATA
	KindRoot            Kind = 18 // a GC root of any kind, or UNREACHABLE
	KindHeapInfo        Kind = 19 // Android HEAP DUMP INFO
	KindTrace           Kind = 20 // sets the stack trace serial of the objects that follow
	KindEnd             Kind = 21 // the last record: object and string counts
	KindPlaceClasses    Kind = 22 // the next class definitions were dumped here, among the objects
	KindArrayName       Kind = 23 // an array class name, made of its element name
	KindObjectID        Kind = 24 // sets the ID of the next object record (files with several heap dumps)
	KindObjects         Kind = 25 // frames a run of object records: its bytes, records and HPROF bytes (Next returns it only with SkipObjects, for a run it skips)
	maxKind                  = 25
)

var kindNames = [...]string{
	KindString: "STRING", KindHashedString: "HASHED STRING", KindLoadClass: "LOAD CLASS",
	KindUnloadClass: "UNLOAD CLASS", KindStackFrame: "STACK FRAME", KindStackTrace: "STACK TRACE",
	KindStartThread: "START THREAD", KindEndThread: "END THREAD", KindRawRecord: "RAW RECORD",
	KindTime: "TIME", KindHeapDump: "HEAP DUMP", KindHeapDumpEnd: "HEAP DUMP END", KindClass: "CLASS",
	KindInstance: "INSTANCE", KindObjectArray: "OBJECT ARRAY", KindPrimitiveArray: "PRIMITIVE ARRAY",
	KindPrimitiveNoData: "PRIMITIVE ARRAY NODATA", KindRoot: "ROOT", KindHeapInfo: "HEAP INFO",
	KindTrace: "TRACE", KindEnd: "END", KindPlaceClasses: "PLACE CLASSES", KindArrayName: "ARRAY NAME", KindObjectID: "OBJECT ID",
	KindObjects: "OBJECTS",
}

// object reports whether k is a kind of object record, which an OBJECTS
// run holds.
func (k Kind) object() bool {
	return k == KindInstance || k == KindObjectArray || k == KindPrimitiveArray || k == KindPrimitiveNoData
}

// String returns the record kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("tag %d", uint8(k))
}

// Metadata is the header metadata of a version 2 file, encoded in protobuf
// wire format so that fields can be added without breaking readers.
type Metadata struct {
	HPROFVersion string // e.g. "JAVA PROFILE 1.0.3"
	IDSize       int    // identifier size of the original dump: 4 or 8
	Timestamp    uint64 // the original header's timestamp, ms since the epoch
	Hash         string // hash of hashed strings: "xxhash64"
	Options      string // crunch options that shaped the content, e.g. "--keep-strings"
	Tool         string // the tool and version that wrote the file
	Objects      uint64 // object records (classes included) in the file
	Classes      uint64 // class records in the file
	Strings      uint64 // string records (clear and hashed) in the file
	// ClassesPlaced says that PLACE CLASSES records give the position of
	// every class dump among the other heap records; without it, class
	// dumps go where their CLASS records are.
	ClassesPlaced bool
	// Alignment is the largest power of two, 16 to 256, that divides
	// every object ID of the original dump (0 for 8, which is not
	// written; readers refuse 8 and any other value); UncompressedRefs says
	// that no two object arrays of the dump, in file order, overlap when
	// references take 8 bytes (only set for 8-byte IDs). Object IDs are
	// addresses in HotSpot dumps, and Eclipse MAT infers the object
	// alignment and whether references are compressed from them; decrunch
	// spaces the IDs it makes up so that MAT infers the same.
	Alignment        uint32
	UncompressedRefs bool
	// Blocks says that the records follow the header in checksummed
	// blocks (spec/bmd.md §3.1). Every file this package writes sets it;
	// the Reader refuses a file without it (a development version).
	Blocks bool
	// Labels are the caller's key=value pairs, in order: which app,
	// version and build a dump came from (crunch --label).
	Labels []string
}

// MaxSharedPrefix bounds the prefix a STRING shares with the previous
// one: names share tens of bytes, and a bound keeps a few bytes of input
// from standing for a long text (each STRING's text costs at most this
// many bytes more than the record's own).
const MaxSharedPrefix = 255

// MaxLabels and MaxLabelSize bound the labels of a file.
const (
	MaxLabels    = 64
	MaxLabelSize = 1024
)

// CheckLabel reports what is wrong with a label, or nil: it must be
// key=value, the key made of letters, digits, '.', '_' and '-' (1 to 64 of
// them), the value printable UTF-8 without control characters, the whole at
// most MaxLabelSize bytes.
func CheckLabel(l string) error {
	if err := checkLabel(l); err != nil {
		return fmt.Errorf("bmd: %v", err)
	}
	return nil
}

func checkLabel(l string) error {
	k, v, ok := strings.Cut(l, "=")
	switch {
	case !ok:
		return fmt.Errorf("label %q is not key=value", l)
	case len(l) > MaxLabelSize:
		return fmt.Errorf("label of %d bytes (at most %d)", len(l), MaxLabelSize)
	case k == "" || len(k) > 64:
		return fmt.Errorf("label %q: the key must have 1 to 64 characters", l)
	case !utf8.ValidString(v):
		return fmt.Errorf("label %q: the value is not UTF-8", l)
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("label %q: the key may hold only letters, digits, '.', '_' and '-'", l)
		}
	}
	for _, c := range v {
		if unicode.IsControl(c) {
			return fmt.Errorf("label %q: the value holds a control character", l)
		}
	}
	return nil
}

// Label returns the value of the last label with that key.
func (m *Metadata) Label(key string) (string, bool) {
	for i := len(m.Labels) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(m.Labels[i], "="); k == key {
			return v, true
		}
	}
	return "", false
}

// check reports metadata that a reader must refuse.
func (m *Metadata) check() error {
	if m.IDSize != 4 && m.IDSize != 8 {
		return fmt.Errorf("identifier size %d in metadata (must be 4 or 8)", m.IDSize)
	}
	// 8, the default, is written as no alignment (0): field 11 holds 16
	// to 256 (spec/bmd.md §3).
	if a := m.Alignment; a != 0 && (a < 16 || a > 256 || a&(a-1) != 0) {
		return fmt.Errorf("alignment %d in metadata (must be a power of two from 16 to 256, or absent for 8)", a)
	}
	// The HPROF header text goes into the HPROF file decrunch writes: it
	// must be one an HPROF reader accepts.
	if v := m.HPROFVersion; v != "" && (!strings.HasPrefix(v, "JAVA PROFILE ") || strings.IndexByte(v, 0) >= 0 || len(v) > 50) {
		return fmt.Errorf("HPROF version %q in metadata is not \"JAVA PROFILE …\"", v)
	}
	if len(m.Labels) > MaxLabels {
		return fmt.Errorf("%d labels in metadata (at most %d)", len(m.Labels), MaxLabels)
	}
	for _, l := range m.Labels {
		if err := checkLabel(l); err != nil {
			return fmt.Errorf("metadata: %v", err)
		}
	}
	return nil
}

// HashXX64 names the string hash of version 2.
const HashXX64 = "xxhash64"

const (
	metaHPROFVersion = 1
	metaIDSize       = 2
	metaTimestamp    = 3
	metaHash         = 4
	metaOptions      = 5
	metaTool         = 6
	metaObjects      = 7
	metaClasses      = 8
	metaStrings      = 9
	metaPlaced       = 10
	metaAlignment    = 11
	metaUncompressed = 12
	metaBlocks       = 13
	metaLabel        = 14
)

// AppendMetadata appends m in protobuf wire format.
func AppendMetadata(b []byte, m *Metadata) []byte {
	str := func(n protowire.Number, s string) {
		if s != "" {
			b = protowire.AppendTag(b, n, protowire.BytesType)
			b = protowire.AppendString(b, s)
		}
	}
	num := func(n protowire.Number, v uint64) {
		b = protowire.AppendTag(b, n, protowire.VarintType)
		b = protowire.AppendVarint(b, v)
	}
	str(metaHPROFVersion, m.HPROFVersion)
	num(metaIDSize, uint64(m.IDSize))
	num(metaTimestamp, m.Timestamp)
	str(metaHash, m.Hash)
	str(metaOptions, m.Options)
	str(metaTool, m.Tool)
	num(metaObjects, m.Objects)
	num(metaClasses, m.Classes)
	num(metaStrings, m.Strings)
	if m.ClassesPlaced {
		num(metaPlaced, 1)
	}
	if m.Alignment != 0 {
		num(metaAlignment, uint64(m.Alignment))
	}
	if m.UncompressedRefs {
		num(metaUncompressed, 1)
	}
	if m.Blocks {
		num(metaBlocks, 1)
	}
	for _, l := range m.Labels {
		b = protowire.AppendTag(b, metaLabel, protowire.BytesType)
		b = protowire.AppendString(b, l)
	}
	return b
}

// ParseMetadata decodes metadata written by AppendMetadata; unknown fields
// are skipped.
func ParseMetadata(b []byte) (Metadata, error) {
	m, err := parseMetadata(b)
	if err != nil {
		return m, fmt.Errorf("bmd: %v", err)
	}
	return m, nil
}

func parseMetadata(b []byte) (Metadata, error) {
	var m Metadata
	for len(b) > 0 {
		n, t, k := protowire.ConsumeTag(b)
		if k < 0 {
			return m, fmt.Errorf("bad metadata field tag: %v", protowire.ParseError(k))
		}
		b = b[k:]
		switch t {
		case protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return m, fmt.Errorf("bad metadata field %d: %v", n, protowire.ParseError(k))
			}
			b = b[k:]
			switch n {
			case metaIDSize:
				m.IDSize = int(v)
			case metaTimestamp:
				m.Timestamp = v
			case metaObjects:
				m.Objects = v
			case metaClasses:
				m.Classes = v
			case metaStrings:
				m.Strings = v
			case metaPlaced:
				m.ClassesPlaced = v != 0
			case metaAlignment:
				m.Alignment = uint32(min(v, 1<<31))
			case metaUncompressed:
				m.UncompressedRefs = v != 0
			case metaBlocks:
				m.Blocks = v != 0
			}
		case protowire.BytesType:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return m, fmt.Errorf("bad metadata field %d: %v", n, protowire.ParseError(k))
			}
			b = b[k:]
			switch n {
			case metaHPROFVersion:
				m.HPROFVersion = string(v)
			case metaHash:
				m.Hash = string(v)
			case metaOptions:
				m.Options = string(v)
			case metaTool:
				m.Tool = string(v)
			case metaLabel:
				m.Labels = append(m.Labels, string(v))
			}
		default:
			k := protowire.ConsumeFieldValue(n, t, b)
			if k < 0 {
				return m, fmt.Errorf("bad metadata field %d: %v", n, protowire.ParseError(k))
			}
			b = b[k:]
		}
	}
	return m, nil
}

// AppendArrayName appends to out the name of the array class with dims
// dimensions whose element class is named elem: "elem[]…" or, with
// descriptor, "[…Lelem;".
func AppendArrayName(out []byte, elem string, dims int, descriptor bool) []byte {
	if descriptor {
		for range dims {
			out = append(out, '[')
		}
		out = append(out, 'L')
		out = append(out, elem...)
		return append(out, ';')
	}
	out = append(out, elem...)
	for range dims {
		out = append(out, '[', ']')
	}
	return out
}

// Type is a field or array element type, with the HPROF basic type codes.
type Type uint8

// Field and element types (the HPROF codes).
const (
	Object  Type = 2
	Boolean Type = 4
	Char    Type = 5
	Float   Type = 6
	Double  Type = 7
	Byte    Type = 8
	Short   Type = 9
	Int     Type = 10
	Long    Type = 11
)

// Valid reports whether t is a known type.
func (t Type) Valid() bool { return t == Object || (t >= Boolean && t <= Long) }

// Size returns the size in bytes of a primitive value of type t in HPROF
// (0 for Object and invalid types).
func (t Type) Size() int { return javatype.Size(uint8(t), 0) }

// Field is an instance field of a class definition. Kept says whether the
// instances carry its value (object fields always do).
type Field struct {
	Name uint64 // string ID
	Type Type
	Kept bool
}

// Static is a static field with its value (zero when not Kept).
type Static struct {
	Name  uint64
	Type  Type
	Kept  bool
	Value uint64 // dense object ID for Object, else the value's bits
}

// Constant is a constant pool entry (zero Value when not Kept).
type Constant struct {
	Index uint16
	Type  Type
	Kept  bool
	Value uint64
}

// Class is a class definition. Its object ID is its Index, from 1 to the
// metadata's class count; the other objects are numbered after the classes.
type Class struct {
	Index uint64
	// Redump marks another dump of a class defined before, in a file with
	// several heap dumps: its statics may differ, not its layout, and its
	// CLASS DUMP goes where the record is.
	Redump           bool
	StackTrace       uint32
	Super            uint64 // dense object IDs, 0 for none
	Loader           uint64
	Signers          uint64
	ProtectionDomain uint64
	Reserved1        uint64
	Reserved2        uint64
	InstanceSize     uint32
	Constants        []Constant
	Statics          []Static
	Fields           []Field
}

// Root kinds are HPROF sub-record tags; these are the ones with extra fields.
const (
	rootJNIGlobal    = 0x01
	rootJNILocal     = 0x02
	rootJavaFrame    = 0x03
	rootNativeStack  = 0x04
	rootThreadBlock  = 0x06
	rootThreadObject = 0x08
	rootJNIMonitor   = 0x8E
)

// RootKindValid reports whether k is an HPROF root sub-record tag (or
// UNREACHABLE).
func RootKindValid(k uint8) bool {
	switch k {
	case 0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90:
		return true
	}
	return false
}

// rawTagHasKind reports whether an HPROF top-level tag has a record kind of
// its own, and so may not be carried by a RAW RECORD: STRING, LOAD CLASS,
// UNLOAD CLASS, STACK FRAME, STACK TRACE, START THREAD, END THREAD, HEAP
// DUMP, HEAP DUMP SEGMENT and HEAP DUMP END. A raw HEAP DUMP would give an
// HPROF file with a body no reader can parse.
func rawTagHasKind(tag uint8) bool {
	switch tag {
	case 0x01, 0x02, 0x03, 0x04, 0x05, 0x0A, 0x0B, 0x0C, 0x1C, 0x2C:
		return true
	}
	return false
}
