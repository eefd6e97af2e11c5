package bmd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNotBMD is wrapped by the error returned for input that is not a BMD file.
var ErrNotBMD = errors.New("not a BMD file")

// FormatError reports input that does not follow the BMD format: the byte
// offset (in the uncompressed stream) and the record being read.
type FormatError struct {
	Offset int64
	Record string // e.g. "INSTANCE", or "header"
	Msg    string
	Err    error // io.ErrUnexpectedEOF for truncation, ErrNotBMD, or nil
}

func (e *FormatError) Error() string {
	s := e.Msg
	if e.Record != "" {
		s += " in " + e.Record + " record"
	}
	return s + fmt.Sprintf(" at offset %d", e.Offset)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Record is one decoded BMD version 2 record. Which fields are set depends
// on Kind; slices are reused and valid until the next call to Next. Deltas
// are undone: every ID is absolute.
type Record struct {
	Kind   Kind
	Offset int64

	// ID is the ID the record implies: the string ID of a string, the
	// frame ID of a stack frame, the object ID of a class, instance or
	// array; for PLACE CLASSES, the first class placed.
	ID uint64

	Text   []byte // KindString; the raw body of KindRawRecord
	Length uint64 // byte length of a string (clear or hashed); PLACE CLASSES: how many (from class ID)
	Hash   uint64 // KindHashedString

	Serial uint32 // class serial, stack trace serial, thread serial
	Thread uint32 // thread serial of a stack trace or root
	Trace  uint32 // stack trace serial (LOAD CLASS, START THREAD, root)
	Frame  uint32 // frame number of a root (0xFFFFFFFF for none)

	Class  uint64 // class object ID (LOAD CLASS, INSTANCE, OBJECT ARRAY)
	Object uint64 // thread object of START THREAD, object of a root
	Name   uint64 // string ID (LOAD CLASS, START THREAD, HEAP INFO, element name of ARRAY NAME)
	Group  uint64
	Parent uint64

	Method, Signature, Source uint64 // STACK FRAME string IDs
	ClassSerial               uint32
	Line                      int32
	Frames                    []uint64

	Tag        uint8  // RAW RECORD's HPROF tag, or ROOT's HPROF kind
	Dims       uint8  // ARRAY NAME: dimensions (its element name is Name)
	Descriptor bool   // ARRAY NAME: "[Lelem;" spelling (else "elem[]")
	Time       uint32 // TIME
	Segment    bool   // HEAP DUMP: true for a HEAP DUMP SEGMENT

	Def      Class    // CLASS
	Values   []uint64 // INSTANCE: one per field of the class layout
	Elements []uint64 // OBJECT ARRAY
	Type     Type     // PRIMITIVE ARRAY element type
	Count    uint32   // array length
	JNIRef   uint64   // ROOT JNI GLOBAL
	HeapType uint32   // HEAP INFO
}

// Reader reads a BMD version 2 file record by record.
type Reader struct {
	input

	meta Metadata

	strings, frames  uint64
	classes, objects uint64
	objectsStarted   bool
	trace            uint32
	lastRoot         uint64
	lastJNI          uint64
	lastSerial       uint32
	lastLoaded       uint64

	lay      layouts
	rec      Record
	done     bool
	lastText []byte // the text of the last STRING

	runLeft  uint64 // entries left in the current run
	runKind  Kind
	runRoot  uint8
	lastName uint64
	lastCls  [5]uint64
	placed   uint64
}

func (r *Reader) name(record string) (uint64, error) {
	v, err := r.uvarint(record)
	r.lastName += uint64(unzigzag(v))
	return r.lastName, err
}

const readBufSize = 1 << 18

// NewReader reads the header of a BMD file. Version 2 files are read by
// the returned Reader; for a version 1 file it returns an error wrapping
// ErrVersion1 (use NewV1Reader).
func NewReader(r io.Reader) (*Reader, error) {
	br := &Reader{input: input{src: r, buf: make([]byte, readBufSize)}}
	v, err := br.uvarint("header")
	if err != nil {
		if br.srcErr != nil && br.srcErr != io.EOF {
			return nil, err // the source failed (a truncated compressed stream)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && br.base+int64(br.end) == 0 {
			return nil, &FormatError{Offset: 0, Record: "header", Msg: "empty input", Err: ErrNotBMD}
		}
		return nil, &FormatError{Offset: 0, Record: "header", Msg: "no version number", Err: ErrNotBMD}
	}
	if v == 1 {
		return nil, ErrVersion1
	}
	if v != Version2 {
		return nil, &FormatError{Offset: 0, Record: "header", Msg: fmt.Sprintf("unknown version %d", v), Err: ErrNotBMD}
	}
	n, err := br.uvarint("header")
	if err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, &FormatError{Offset: br.off(), Record: "header", Msg: fmt.Sprintf("metadata of %d bytes is implausible", n), Err: ErrNotBMD}
	}
	b, err := br.bytes(int(n), "header")
	if err != nil {
		return nil, err
	}
	br.meta, err = ParseMetadata(b)
	if err != nil {
		return nil, &FormatError{Offset: br.off(), Record: "header", Msg: err.Error(), Err: ErrNotBMD}
	}
	if br.meta.IDSize != 4 && br.meta.IDSize != 8 {
		return nil, &FormatError{Offset: br.off(), Record: "header", Msg: fmt.Sprintf("identifier size %d in metadata (must be 4 or 8)", br.meta.IDSize), Err: ErrNotBMD}
	}
	if a := br.meta.Alignment; a != 0 && (a < 8 || a > 256 || a&(a-1) != 0) {
		return nil, &FormatError{Offset: br.off(), Record: "header", Msg: fmt.Sprintf("alignment %d in metadata (must be a power of two from 8 to 256)", a), Err: ErrNotBMD}
	}
	// The HPROF header text goes into the HPROF file decrunch writes:
	// it must be one an HPROF reader accepts.
	if v := br.meta.HPROFVersion; v != "" && (!strings.HasPrefix(v, "JAVA PROFILE ") || strings.IndexByte(v, 0) >= 0 || len(v) > 50) {
		return nil, &FormatError{Offset: br.off(), Record: "header", Msg: fmt.Sprintf("HPROF version %q in metadata is not \"JAVA PROFILE …\"", v)}
	}
	return br, nil
}

// ErrVersion1 is returned by NewReader for a BMD version 1 file.
var ErrVersion1 = errors.New("bmd: version 1 file")

// Metadata returns the header metadata.
func (r *Reader) Metadata() Metadata { return r.meta }

// Offset returns the offset of the next byte to read.
func (r *Reader) Offset() int64 { return r.off() }

func (r *Reader) fail(record, msg string, err error) error {
	return r.formatError(r.rec.Offset, record, msg, err)
}

func (r *Reader) truncated(record string) error {
	return r.fail(record, "truncated", io.ErrUnexpectedEOF)
}

func (r *Reader) uvarint(record string) (uint64, error) {
	v, n := r.input.uvarint()
	if n == 0 {
		return 0, r.truncated(record)
	}
	if n < 0 {
		return 0, r.fail(record, "varint overflows 64 bits", nil)
	}
	return v, nil
}

func (r *Reader) u32(record string) (uint32, error) {
	v, err := r.uvarint(record)
	if err == nil && v > 0xFFFFFFFF {
		return 0, r.fail(record, fmt.Sprintf("value %d does not fit in 32 bits", v), nil)
	}
	return uint32(v), err
}

// bytes returns the next n bytes (see input.take).
func (r *Reader) bytes(n int, record string) ([]byte, error) {
	b, ok := r.take(n)
	if !ok {
		return nil, r.truncated(record)
	}
	return b, nil
}

func (r *Reader) ref(self uint64, record string) (uint64, error) {
	v, err := r.uvarint(record)
	if v == 0 || err != nil {
		return 0, err
	}
	return self + uint64(unzigzag(v-1)), nil
}

func (r *Reader) value(t Type, record string) (uint64, error) {
	switch t {
	case Float:
		b, err := r.bytes(4, record)
		if err != nil {
			return 0, err
		}
		return uint64(binary.LittleEndian.Uint32(b)), nil
	case Double:
		b, err := r.bytes(8, record)
		if err != nil {
			return 0, err
		}
		return binary.LittleEndian.Uint64(b), nil
	}
	v, err := r.uvarint(record)
	if err != nil {
		return 0, err
	}
	switch t {
	case Int:
		return uint64(uint32(int32(unzigzag(v)))), nil
	case Long:
		return uint64(unzigzag(v)), nil
	case Boolean, Byte:
		return v & 0xFF, nil
	}
	return v & 0xFFFF, nil
}

func (r *Reader) typeKept(record string) (Type, bool, error) {
	v, err := r.uvarint(record)
	if err != nil {
		return 0, false, err
	}
	t := Type(v >> 1)
	if v>>1 > 0xFF || !t.Valid() {
		return 0, false, r.fail(record, fmt.Sprintf("invalid field type %d", v>>1), nil)
	}
	return t, v&1 == 1 || t == Object, nil
}

// Layout returns the instance fields of class idx and of its superclasses,
// in the order of Record.Values.
func (r *Reader) Layout(idx uint64) ([]Field, bool) { return r.lay.chain(idx) }

// Classes returns the number of class records read so far.
func (r *Reader) Classes() uint64 { return r.classes }

// Next reads the next record. It returns io.EOF at the end of the file.
// The Record is reused by the next call.
func (r *Reader) Next() (*Record, error) {
	rec := &r.rec
	rec.Offset = r.off()
	if r.done {
		return nil, io.EOF
	}
	if r.runLeft > 0 {
		if r.runKind == KindRoot {
			return r.nextRoot(rec)
		}
		return r.nextHashed(rec)
	}
	if !r.fill(1) {
		if r.srcErr != nil && r.srcErr != io.EOF {
			return nil, r.srcErr
		}
		return nil, &FormatError{Offset: rec.Offset, Msg: "truncated: the file ends without its END record", Err: io.ErrUnexpectedEOF}
	}
	k := Kind(r.buf[r.pos])
	r.pos++
	rec.Kind = k
	if k == 0 || k > maxKind {
		return nil, r.fail("", fmt.Sprintf("unknown record tag %d", uint8(k)), nil)
	}
	name := k.String()
	var err error
	u := func() uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = r.uvarint(name)
		return v
	}
	u32 := func() uint32 {
		if err != nil {
			return 0
		}
		var v uint32
		v, err = r.u32(name)
		return v
	}
	ref := func(self uint64) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = r.ref(self, name)
		return v
	}
	switch k {
	case KindString:
		prefix, n := u(), u()
		if err == nil {
			if prefix > uint64(len(r.lastText)) {
				return nil, r.fail(name, fmt.Sprintf("shares %d bytes with a previous string of %d", prefix, len(r.lastText)), nil)
			}
			if n > 1<<31 {
				return nil, r.fail(name, fmt.Sprintf("string of %d bytes is implausible", n), nil)
			}
			var b []byte
			if b, err = r.bytes(int(n), name); err == nil {
				r.lastText = append(r.lastText[:prefix], b...)
				rec.Text, rec.Length = r.lastText, uint64(len(r.lastText))
			}
		}
		r.strings++
		rec.ID = r.strings
	case KindHashedString:
		r.runLeft = u()
		if err == nil && r.runLeft == 0 {
			return nil, r.fail(name, "empty run of hashed strings", nil)
		}
		if err == nil {
			r.runKind = KindHashedString
			return r.nextHashed(rec)
		}
	case KindArrayName:
		rec.Name = u()
		d := u()
		if err == nil && (rec.Name == 0 || rec.Name > r.strings || d>>1 == 0 || d>>1 > 255) {
			return nil, r.fail(name, fmt.Sprintf("array name of string %d with %d dimensions (%d strings read)", rec.Name, d>>1, r.strings), nil)
		}
		rec.Dims, rec.Descriptor = uint8(d>>1), d&1 == 1
		r.strings++
		rec.ID = r.strings
	case KindLoadClass:
		rec.Serial = uint32(int64(r.lastSerial) + unzigzag(u()))
		rec.Class = r.lastLoaded + uint64(unzigzag(u()))
		rec.Trace = u32()
		if err == nil {
			rec.Name, err = r.name(name)
		}
		r.lastSerial, r.lastLoaded = rec.Serial, rec.Class
	case KindUnloadClass, KindEndThread:
		rec.Serial = u32()
	case KindStackFrame:
		rec.Method, rec.Signature, rec.Source = u(), u(), u()
		rec.ClassSerial = u32()
		rec.Line = int32(unzigzag(u()))
		r.frames++
		rec.ID = r.frames
	case KindStackTrace:
		rec.Serial, rec.Thread = u32(), u32()
		n := u()
		rec.Frames = rec.Frames[:0]
		for i := uint64(0); i < n && err == nil; i++ {
			rec.Frames = append(rec.Frames, u())
		}
	case KindStartThread:
		rec.Serial = u32()
		rec.Object = u()
		rec.Trace = u32()
		rec.Name, rec.Group, rec.Parent = u(), u(), u()
	case KindRawRecord:
		t := u()
		n := u()
		if err == nil {
			if t > 0xFF || n > 0xFFFFFFFF {
				return nil, r.fail(name, fmt.Sprintf("raw record tag %d length %d out of range", t, n), nil)
			}
			if rawTagHasKind(uint8(t)) {
				return nil, r.fail(name, fmt.Sprintf("raw record with HPROF tag 0x%02X, which has its own record kind", t), nil)
			}
			rec.Tag = uint8(t)
			rec.Text, err = r.bytes(int(n), name)
		}
	case KindTime:
		rec.Time = u32()
	case KindHeapDump:
		rec.Segment = u() == 1
	case KindHeapDumpEnd:
	case KindTrace:
		r.trace = u32()
		rec.Trace = r.trace
	case KindClass:
		if r.objectsStarted {
			return nil, r.fail(name, "class record after other object records", nil)
		}
		err = r.readClass(&rec.Def)
		r.classes++
		r.objects++
		rec.ID = r.classes
		rec.Def.Index = r.classes
		rec.Trace = rec.Def.StackTrace
		if err == nil {
			r.lay.add(&rec.Def)
		}
	case KindInstance:
		r.objectsStarted = true
		self := r.objects + 1
		rec.ID, rec.Trace = self, r.trace
		rec.Class = u()
		if err != nil {
			break
		}
		ch, ok := r.lay.chain(rec.Class)
		if !ok {
			return nil, r.fail(name, fmt.Sprintf("instance of undefined class %d", rec.Class), nil)
		}
		rec.Values = rec.Values[:0]
		for _, f := range ch {
			var v uint64
			if f.Type == Object {
				v = ref(self)
			} else if f.Kept && err == nil {
				v, err = r.value(f.Type, name)
			}
			rec.Values = append(rec.Values, v)
		}
		r.objects++
	case KindObjectArray:
		r.objectsStarted = true
		self := r.objects + 1
		rec.ID, rec.Trace = self, r.trace
		rec.Class = u()
		if rec.Class == 0 {
			rec.Class = ref(self)
		}
		n := u()
		rec.Elements = rec.Elements[:0]
		for i := uint64(0); i < n && err == nil; i++ {
			rec.Elements = append(rec.Elements, ref(self))
		}
		if err == nil && n > 0xFFFFFFFF {
			err = r.fail(name, fmt.Sprintf("array length %d", n), nil)
		}
		rec.Count = uint32(n)
		r.objects++
	case KindPrimitiveArray, KindPrimitiveNoData:
		r.objectsStarted = true
		r.objects++
		rec.ID, rec.Trace = r.objects, r.trace
		rec.Type = Type(u())
		rec.Count = u32()
		if err == nil && (!rec.Type.Valid() || rec.Type == Object) {
			return nil, r.fail(name, fmt.Sprintf("invalid element type %d", rec.Type), nil)
		}
	case KindRoot:
		if !r.fill(1) {
			return nil, r.truncated(name)
		}
		r.runRoot = r.buf[r.pos]
		r.pos++
		if !RootKindValid(r.runRoot) {
			return nil, r.fail(name, fmt.Sprintf("invalid root kind 0x%02X", r.runRoot), nil)
		}
		r.runLeft = u()
		if err == nil && r.runLeft == 0 {
			return nil, r.fail(name, "empty run of roots", nil)
		}
		if err == nil {
			r.runKind = KindRoot
			return r.nextRoot(rec)
		}
	case KindHeapInfo:
		rec.HeapType = u32()
		rec.Name = u()
	case KindPlaceClasses:
		n := u()
		if err == nil && (n == 0 || n > r.classes-r.placed) {
			return nil, r.fail(name, fmt.Sprintf("places %d classes, %d are defined and not yet placed", n, r.classes-r.placed), nil)
		}
		rec.ID, rec.Length = r.placed+1, n
		r.placed += n
	case KindEnd:
		objects, strings := u(), u()
		if err == nil && (objects != r.objects || strings != r.strings) {
			return nil, r.fail(name, fmt.Sprintf("file ends with %d objects and %d strings, END record says %d and %d", r.objects, r.strings, objects, strings), nil)
		}
		r.done = true
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// nextRoot reads one entry of a run of roots.
func (r *Reader) nextRoot(rec *Record) (*Record, error) {
	const name = "ROOT"
	rec.Kind = KindRoot
	rec.Tag = r.runRoot
	var err error
	u := func() uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = r.uvarint(name)
		return v
	}
	rec.Object = r.lastRoot + uint64(unzigzag(u()))
	r.lastRoot = rec.Object
	rec.Thread, rec.Frame, rec.JNIRef, rec.Trace = 0, 0, 0, 0
	switch rec.Tag {
	case rootJNIGlobal:
		rec.JNIRef = r.lastJNI + uint64(unzigzag(u()))
		r.lastJNI = rec.JNIRef
	case rootJNILocal, rootJavaFrame, rootJNIMonitor:
		rec.Thread = uint32(u())
		rec.Frame = uint32(u()) - 1
	case rootNativeStack, rootThreadBlock:
		rec.Thread = uint32(u())
	case rootThreadObject:
		rec.Thread = uint32(u())
		rec.Trace = uint32(u())
	}
	if err != nil {
		return nil, err
	}
	r.runLeft--
	return rec, nil
}

// nextHashed reads one entry of a run of hashed strings.
func (r *Reader) nextHashed(rec *Record) (*Record, error) {
	const name = "HASHED STRING"
	rec.Kind = KindHashedString
	var err error
	if rec.Length, err = r.uvarint(name); err != nil {
		return nil, err
	}
	b, err := r.bytes(8, name)
	if err != nil {
		return nil, err
	}
	rec.Hash = binary.LittleEndian.Uint64(b)
	r.runLeft--
	r.strings++
	rec.ID = r.strings
	return rec, nil
}

func (r *Reader) readClass(c *Class) error {
	const name = "CLASS"
	self := r.classes + 1
	var err error
	u := func() uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = r.uvarint(name)
		return v
	}
	ref := func() uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = r.ref(self, name)
		return v
	}
	st := u()
	c.StackTrace = uint32(st)
	c.Super = ref()
	var rel [5]uint64
	for i := range rel {
		r.lastCls[i] += uint64(unzigzag(u()))
		rel[i] = r.lastCls[i]
	}
	c.Loader, c.Signers, c.ProtectionDomain, c.Reserved1, c.Reserved2 = rel[0], rel[1], rel[2], rel[3], rel[4]
	c.InstanceSize = uint32(u())
	n := u()
	if err == nil && n > 0xFFFF {
		return r.fail(name, fmt.Sprintf("%d constants", n), nil)
	}
	c.Constants = c.Constants[:0]
	for i := uint64(0); i < n && err == nil; i++ {
		var k Constant
		k.Index = uint16(u())
		if err != nil {
			break
		}
		k.Type, k.Kept, err = r.typeKept(name)
		if err != nil {
			break
		}
		if k.Type == Object {
			k.Value = ref()
		} else if k.Kept {
			k.Value, err = r.value(k.Type, name)
		}
		c.Constants = append(c.Constants, k)
	}
	n = u()
	if err == nil && n > 0xFFFF {
		return r.fail(name, fmt.Sprintf("%d static fields", n), nil)
	}
	c.Statics = c.Statics[:0]
	for i := uint64(0); i < n && err == nil; i++ {
		var f Static
		if f.Name, err = r.name(name); err != nil {
			break
		}
		f.Type, f.Kept, err = r.typeKept(name)
		if err != nil {
			break
		}
		if f.Type == Object {
			f.Value = ref()
		} else if f.Kept {
			f.Value, err = r.value(f.Type, name)
		}
		c.Statics = append(c.Statics, f)
	}
	n = u()
	if err == nil && n > 0xFFFF {
		return r.fail(name, fmt.Sprintf("%d instance fields", n), nil)
	}
	c.Fields = c.Fields[:0]
	for i := uint64(0); i < n && err == nil; i++ {
		var f Field
		if f.Name, err = r.name(name); err != nil {
			break
		}
		f.Type, f.Kept, err = r.typeKept(name)
		c.Fields = append(c.Fields, f)
	}
	return err
}
