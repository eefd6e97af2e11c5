// Package hprof reads and writes the HPROF binary heap dump format written by
// HotSpot (JAVA PROFILE 1.0.1 and 1.0.2) and by Android's Dalvik and ART
// (JAVA PROFILE 1.0.3), with 4- or 8-byte identifiers.
//
// The Reader streams: it holds one top-level record header and one heap
// sub-record at a time, so files of any size (including files over 4 GiB made
// of many HEAP DUMP SEGMENTs) are read in constant memory. The Writer is its
// mirror; it cuts heap dumps into HEAP DUMP SEGMENTs of bounded size so that
// its output is valid whatever the size of the heap.
package hprof

import (
	"encoding/binary"
	"fmt"

	"github.com/heapcrunch/heapcrunch/internal/javatype"
)

// Tag is the tag of a top-level HPROF record.
type Tag uint8

// Top-level record tags.
const (
	TagString          Tag = 0x01
	TagLoadClass       Tag = 0x02
	TagUnloadClass     Tag = 0x03
	TagStackFrame      Tag = 0x04
	TagStackTrace      Tag = 0x05
	TagAllocSites      Tag = 0x06
	TagHeapSummary     Tag = 0x07
	TagStartThread     Tag = 0x0A
	TagEndThread       Tag = 0x0B
	TagHeapDump        Tag = 0x0C
	TagCPUSamples      Tag = 0x0D
	TagControlSettings Tag = 0x0E
	TagHeapDumpSegment Tag = 0x1C
	TagHeapDumpEnd     Tag = 0x2C
)

var tagNames = [256]string{
	TagString: "STRING", TagLoadClass: "LOAD CLASS", TagUnloadClass: "UNLOAD CLASS",
	TagStackFrame: "STACK FRAME", TagStackTrace: "STACK TRACE", TagAllocSites: "ALLOC SITES",
	TagHeapSummary: "HEAP SUMMARY", TagStartThread: "START THREAD", TagEndThread: "END THREAD",
	TagHeapDump: "HEAP DUMP", TagCPUSamples: "CPU SAMPLES", TagControlSettings: "CONTROL SETTINGS",
	TagHeapDumpSegment: "HEAP DUMP SEGMENT", TagHeapDumpEnd: "HEAP DUMP END",
}

// String returns the record's name as the HPROF documentation spells it.
func (t Tag) String() string {
	if n := tagNames[t]; n != "" {
		return n
	}
	return fmt.Sprintf("record 0x%02X", uint8(t))
}

// IsHeapDump reports whether records with this tag hold heap sub-records.
func (t Tag) IsHeapDump() bool { return t == TagHeapDump || t == TagHeapDumpSegment }

// SubTag is the tag of a sub-record inside a HEAP DUMP or HEAP DUMP SEGMENT.
type SubTag uint8

// Heap dump sub-record tags, HotSpot's and Android's: Sub and the name the
// HPROF documentation gives the sub-record (as top-level tags are Tag and
// the record's name).
const (
	SubRootUnknown          SubTag = 0xFF
	SubRootJNIGlobal        SubTag = 0x01
	SubRootJNILocal         SubTag = 0x02
	SubRootJavaFrame        SubTag = 0x03
	SubRootNativeStack      SubTag = 0x04
	SubRootStickyClass      SubTag = 0x05
	SubRootThreadBlock      SubTag = 0x06
	SubRootMonitorUsed      SubTag = 0x07
	SubRootThreadObject     SubTag = 0x08
	SubClassDump            SubTag = 0x20
	SubInstanceDump         SubTag = 0x21
	SubObjectArrayDump      SubTag = 0x22
	SubPrimitiveArrayDump   SubTag = 0x23
	SubRootInternedString   SubTag = 0x89 // Android
	SubRootFinalizing       SubTag = 0x8A // Android
	SubRootDebugger         SubTag = 0x8B // Android
	SubRootReferenceCleanup SubTag = 0x8C // Android
	SubRootVMInternal       SubTag = 0x8D // Android
	SubRootJNIMonitor       SubTag = 0x8E // Android
	SubUnreachable          SubTag = 0x90 // Android
	SubPrimitiveArrayNoData SubTag = 0xC3 // Android
	SubHeapDumpInfo         SubTag = 0xFE // Android
)

// subTagNames is an array, not a map: the reader names every sub-record it
// reads (for error messages), so this is on the hot path.
var subTagNames = [256]string{
	SubRootUnknown: "ROOT UNKNOWN", SubRootJNIGlobal: "ROOT JNI GLOBAL", SubRootJNILocal: "ROOT JNI LOCAL",
	SubRootJavaFrame: "ROOT JAVA FRAME", SubRootNativeStack: "ROOT NATIVE STACK", SubRootStickyClass: "ROOT STICKY CLASS",
	SubRootThreadBlock: "ROOT THREAD BLOCK", SubRootMonitorUsed: "ROOT MONITOR USED", SubRootThreadObject: "ROOT THREAD OBJECT",
	SubClassDump: "CLASS DUMP", SubInstanceDump: "INSTANCE DUMP", SubObjectArrayDump: "OBJECT ARRAY DUMP",
	SubPrimitiveArrayDump: "PRIMITIVE ARRAY DUMP", SubRootInternedString: "ROOT INTERNED STRING",
	SubRootFinalizing: "ROOT FINALIZING", SubRootDebugger: "ROOT DEBUGGER", SubRootReferenceCleanup: "ROOT REFERENCE CLEANUP",
	SubRootVMInternal: "ROOT VM INTERNAL", SubRootJNIMonitor: "ROOT JNI MONITOR", SubUnreachable: "UNREACHABLE",
	SubPrimitiveArrayNoData: "PRIMITIVE ARRAY NODATA", SubHeapDumpInfo: "HEAP DUMP INFO",
}

// String returns the sub-record's name as the HPROF documentation spells it.
func (t SubTag) String() string {
	if n := subTagNames[t]; n != "" {
		return n
	}
	return fmt.Sprintf("sub-record 0x%02X", uint8(t))
}

// IsRoot reports whether the sub-record is a GC root (or Android's
// UNREACHABLE marker, which has the same shape as a root).
func (t SubTag) IsRoot() bool {
	switch t {
	case SubRootUnknown, SubRootJNIGlobal, SubRootJNILocal, SubRootJavaFrame, SubRootNativeStack, SubRootStickyClass,
		SubRootThreadBlock, SubRootMonitorUsed, SubRootThreadObject, SubRootInternedString, SubRootFinalizing,
		SubRootDebugger, SubRootReferenceCleanup, SubRootVMInternal, SubRootJNIMonitor, SubUnreachable:
		return true
	}
	return false
}

// Known reports whether t is a sub-record this package can parse.
func (t SubTag) Known() bool { return subTagNames[t] != "" }

// BasicType is the HPROF code of a field or array element type.
type BasicType uint8

// HPROF basic types, named as Java names them (as bmd.Type's are).
const (
	Object  BasicType = javatype.Object
	Boolean BasicType = javatype.Boolean
	Char    BasicType = javatype.Char
	Float   BasicType = javatype.Float
	Double  BasicType = javatype.Double
	Byte    BasicType = javatype.Byte
	Short   BasicType = javatype.Short
	Int     BasicType = javatype.Int
	Long    BasicType = javatype.Long
)

var typeNames = [...]string{2: "object", 4: "boolean", 5: "char", 6: "float", 7: "double", 8: "byte", 9: "short", 10: "int", 11: "long"}

// Valid reports whether t is one of the HPROF basic types.
func (t BasicType) Valid() bool { return t == Object || (t >= Boolean && t <= Long) }

// String returns the Java name of the type ("int", "object", …).
func (t BasicType) String() string {
	if t.Valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// Size returns the size in bytes of a value of type t in a file whose
// identifiers are idSize bytes wide, or 0 if t is not a valid type.
func (t BasicType) Size(idSize int) int { return javatype.Size(uint8(t), idSize) }

// Header is the HPROF file header.
type Header struct {
	Version   string // e.g. "JAVA PROFILE 1.0.2"
	IDSize    int    // 4 or 8
	Timestamp uint64 // milliseconds since the epoch
}

// Known HPROF version strings.
const (
	Version101 = "JAVA PROFILE 1.0.1"
	Version102 = "JAVA PROFILE 1.0.2"
	Version103 = "JAVA PROFILE 1.0.3"
)

// MaxVersionLen is the longest version string (before its NUL) that the
// Reader accepts and the Writer writes: real ones have 18 bytes.
const MaxVersionLen = 50

// Record is the header of a top-level record.
type Record struct {
	Tag    Tag
	Time   uint32 // microseconds since the header's timestamp
	Length uint32 // bytes of body
	Offset int64  // file offset of the tag byte
}

// RecordHeaderSize is the bytes of a top-level record's header: its tag,
// time and body length.
const RecordHeaderSize = 9

// Body returns the file offset of the record's body (of a heap dump
// record, its first sub-record).
func (rec Record) Body() int64 { return rec.Offset + RecordHeaderSize }

// End returns the file offset where the record ends: where the next one
// starts.
func (rec Record) End() int64 { return rec.Body() + int64(rec.Length) }

// DecodeRecordHeader returns the record whose header is b[:9], at file
// offset off (as the Reader reads it; b must hold RecordHeaderSize bytes).
func DecodeRecordHeader(b []byte, off int64) Record {
	return Record{Tag: Tag(b[0]), Time: binary.BigEndian.Uint32(b[1:]), Length: binary.BigEndian.Uint32(b[5:]), Offset: off}
}

// Field is an instance field declared by a class.
type Field struct {
	Name uint64 // string ID
	Type BasicType
}

// StaticField is a static field of a class with its value.
type StaticField struct {
	Name  uint64
	Type  BasicType
	Value uint64 // the value's bits, zero-extended; an object ID for Object
}

// Constant is a constant pool entry of a CLASS DUMP.
type Constant struct {
	Index uint16
	Type  BasicType
	Value uint64
}

// ClassDump is the body of a CLASS DUMP sub-record.
type ClassDump struct {
	ID               uint64
	StackTrace       uint32
	Super            uint64
	Loader           uint64
	Signers          uint64
	ProtectionDomain uint64
	Reserved1        uint64
	Reserved2        uint64
	InstanceSize     uint32
	Constants        []Constant
	Statics          []StaticField
	Fields           []Field
}

// Clone returns a deep copy of c.
func (c *ClassDump) Clone() *ClassDump {
	d := *c
	d.Constants = append([]Constant(nil), c.Constants...)
	d.Statics = append([]StaticField(nil), c.Statics...)
	d.Fields = append([]Field(nil), c.Fields...)
	return &d
}

// SubRecord is one heap dump sub-record. Which fields are meaningful depends
// on Tag; slices are reused by the Reader and valid only until the next call.
type SubRecord struct {
	Tag    SubTag
	Offset int64 // file offset of the sub-tag byte

	// ID is the object of a root, instance, array or UNREACHABLE record and
	// the class of a CLASS DUMP (equal to Class.ID).
	ID uint64
	// StackTrace is the stack trace serial of an instance or array, or of a
	// ROOT THREAD OBJECT.
	StackTrace uint32
	// Thread is the thread serial of a root that names one.
	Thread uint32
	// Frame is the frame number of ROOT JNI LOCAL and ROOT JAVA FRAME, or
	// the stack depth of ROOT JNI MONITOR.
	Frame uint32
	// JNIRef is the JNI global reference ID of ROOT JNI GLOBAL.
	JNIRef uint64

	// ClassID is the class of an instance or of an object array.
	ClassID uint64
	// Data holds an instance's field bytes, or a primitive array's
	// elements when the Reader was asked for them (Reader.ArrayData).
	Data []byte
	// Length is the element count of an array.
	Length uint32
	// ElemType is the element type of a primitive array.
	ElemType BasicType
	// Elements holds the element IDs of an object array.
	Elements []uint64
	// Pending is the count of elements of an object array not read yet,
	// for Reader.NextElements: an array longer than Reader.MaxElements
	// comes with all of them pending.
	Pending uint32

	// Class is the parsed CLASS DUMP.
	Class ClassDump

	// HeapType and HeapName are the fields of Android's HEAP DUMP INFO.
	HeapType uint32
	HeapName uint64
}
