package bmd

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// ErrNotBMD is wrapped by the error returned for input that is not a BMD file.
var ErrNotBMD = errors.New("bmd: not a BMD file")

// FormatError reports input that does not follow the BMD format: the byte
// offset (in the uncompressed file) and the record being read.
type FormatError struct {
	Offset int64
	Record string // e.g. "INSTANCE", "header" or "block"
	Msg    string
	Err    error // io.ErrUnexpectedEOF for truncation, ErrNotBMD, ErrChecksum, or nil
}

// Error returns the message of a FormatError.
func (e *FormatError) Error() string {
	s := "bmd: " + e.Msg
	if e.Record != "" {
		s += " in " + e.Record + " record"
	}
	return s + fmt.Sprintf(" at offset %d", e.Offset)
}

// Unwrap returns the error underneath, for errors.Is and errors.As.
func (e *FormatError) Unwrap() error { return e.Err }

// Record is one decoded BMD version 2 record. Which fields are set depends
// on Kind; slices are reused and valid until the next call to Next. Deltas
// are undone: every ID is absolute.
type Record struct {
	Kind   Kind
	Offset int64 // of the record's first byte in the file

	// ID is the ID the record implies: the string ID of a string, the
	// frame ID of a stack frame, the object ID of a class, instance or
	// array; for PLACE CLASSES, the first class placed.
	ID uint64

	Text   []byte // KindString; the raw body of KindRawRecord
	Length uint64 // byte length of a string (clear or hashed; 0: not known); PLACE CLASSES: how many (from class ID); OBJECTS: the HPROF bytes of the run
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
	Pending  uint32   // OBJECT ARRAY: elements left for Reader.NextElements
	Type     Type     // PRIMITIVE ARRAY element type
	Count    uint32   // array length; OBJECTS: the records of the run
	JNIRef   uint64   // ROOT JNI GLOBAL
	HeapType uint32   // HEAP INFO
}

// Reader reads a BMD version 2 file record by record.
type Reader struct {
	// SkipValues asks Next not to decode the values of instances and the
	// elements of object arrays: they are consumed, with the same checks,
	// but Values and Elements stay empty (an array's Count is set). A
	// pass that needs only the rest of the file reads it several times
	// faster.
	SkipValues bool

	// SkipObjects asks Next to skip the runs of object records that
	// OBJECTS records frame (spec/bmd.md §5.25) without decoding them:
	// their objects take their IDs and count for END, but are neither
	// returned nor checked, past their blocks' checksums. Next returns
	// each OBJECTS record instead, with Count and Length. Object records
	// outside runs (runs too short to frame, and files of writers before
	// OBJECTS records) are returned as usual. A pass that needs no
	// objects reads a file many times faster (decrunch's first pass of
	// the 134 MB dump's BMD: 6 to 8 ms against 65 to 70).
	SkipObjects bool

	// DecodeRun, with SkipObjects, picks the runs Next decodes after all:
	// a run whose objects take the IDs first to first+count-1 is decoded
	// and its records returned, as without SkipObjects, if DecodeRun
	// reports true for it. A pass that needs a few objects of known IDs
	// reads the runs that hold them and skips the others (decrunch's
	// enum names, enumnames.go).
	DecodeRun func(first, count uint64) bool

	// ValuesOf, with SkipValues, names an object whose values Next
	// decodes all the same, if it is an instance: its ID, or 0 for none.
	// A pass that needs the values of a few objects of known IDs, met in
	// the order of their IDs, sets it to the next of them as it reads.
	ValuesOf uint64

	// MaxElements, when above 0, is the most elements Next puts in an
	// OBJECT ARRAY's Elements: an array of more comes with Elements
	// empty and Pending set to its length (Count), and NextElements
	// decodes its elements a piece at a time, so that a huge array is
	// never held whole. Next skips the elements not read.
	MaxElements int

	slowOnly bool // tests: no fast path (fast.go)

	pending     uint64 // elements of the last OBJECT ARRAY left for NextElements
	pendingSelf uint64 // that array's ID, which its elements are relative to
	// held is set when Next has more to do than read a record: after END
	// (done), or with an array's elements left (pending). One test per
	// record rather than two: decrunch reads millions.
	held bool

	input
	blocks *blockReader
	// spanEnd and spanShift map the stream offsets of one block to file
	// offsets: up to spanEnd (exclusive), file = stream + spanShift.
	spanEnd, spanShift int64

	meta Metadata

	strings, frames uint64
	records         uint64 // object records read (classes included), for END
	nextID, maxID   uint64 // the ID of the next object record; the largest taken
	lastClass       uint64 // index of the last CLASS record
	placed          uint64 // classes 1…placed are placed
	trace           uint32
	lastRoot        uint64
	lastJNI         uint64
	lastSerial      uint32
	lastLoaded      uint64
	lastName        uint64
	lastCls         [5]uint64
	lastText        []byte // the text of the last STRING

	lay  layouts
	rec  Record
	dec  decoder // of the record being read
	done bool

	runLeft uint64 // entries left in the current run
	runKind Kind
	runRoot uint8

	// The OBJECTS run being read: its objCount records, after the first
	// objFirst records of the file, end at stream offset objEnd; its
	// objects take objSize bytes of HPROF (objData so far). objAt is its
	// header's file offset.
	inObjects          bool
	objEnd             int64
	objFirst, objCount uint64
	objSize, objData   uint64
	objAt              int64
}

const readBufSize = 1 << 18

// NewReader reads the header of a BMD file. Version 2 files are read by
// the returned Reader; for a version 1 file it returns an error wrapping
// ErrVersion1 (use NewV1Reader).
func NewReader(r io.Reader) (*Reader, error) {
	src := bufio.NewReaderSize(r, 64<<10)
	h, err := readHeader(src)
	if err != nil {
		return nil, err
	}
	br := &Reader{meta: h.meta, blocks: newBlockReader(src, h.size)}
	br.input = newInput(br.blocks, readBufSize)
	br.nextID, br.maxID = h.meta.Classes+1, h.meta.Classes
	br.lay.idSize = h.meta.IDSize
	return br, nil
}

// Both versions start with the same two varints (spec/bmd.md §3, §11.3):
//
//	varint version | varint metadata length | metadata …
//
// maxMetadataSize is the most metadata either reader accepts.
const maxMetadataSize = 1 << 20

// notBMD returns the error for a header that is not one of a BMD file.
func notBMD(at int64, msg string) error {
	return &FormatError{Offset: at, Record: "header", Msg: msg, Err: ErrNotBMD}
}

// header is a version 2 header as read.
type header struct {
	meta Metadata
	size int64 // bytes
}

// readHeader reads and checks a version 2 header: version, metadata and
// its checksum.
func readHeader(src *bufio.Reader) (header, error) {
	head, err := src.Peek(2 * binary.MaxVarintLen64)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return header{}, fmt.Errorf("bmd: reading at offset 0: %w", err)
		}
		return header{}, notBMD(0, "empty input")
	}
	v, k := protowire.ConsumeVarint(head)
	switch {
	case k < 0:
		return header{}, notBMD(0, "no version number")
	case v == Version1:
		return header{}, ErrVersion1
	case v != Version2:
		return header{}, notBMD(0, fmt.Sprintf("not a BMD file: version %d, where a BMD file has 1 or 2", v))
	}
	n, m := protowire.ConsumeVarint(head[k:])
	switch {
	case m < 0 && cutShort(m):
		return header{}, &FormatError{Offset: int64(k), Record: "header", Msg: "truncated", Err: io.ErrUnexpectedEOF}
	case m < 0:
		return header{}, notBMD(int64(k), "corrupt metadata length")
	case n > maxMetadataSize:
		return header{}, notBMD(int64(k+m), fmt.Sprintf("metadata of %d bytes is implausible", n))
	}
	start := k + m
	raw := make([]byte, start+int(n)+8)
	if _, err := io.ReadFull(src, raw); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return header{}, &FormatError{Offset: int64(start), Record: "header", Msg: "truncated", Err: io.ErrUnexpectedEOF}
		}
		return header{}, fmt.Errorf("bmd: reading at offset %d: %w", start, err)
	}
	body, sum := raw[:len(raw)-8], binary.LittleEndian.Uint64(raw[len(raw)-8:])
	// A development version of BMD 2 had no checksum; say so rather than
	// report a mismatch. Otherwise the checksum comes first, so damaged
	// metadata reads as damage, not as another kind of file.
	meta, err := parseMetadata(body[start:])
	if err == nil && !meta.Blocks {
		return header{}, notBMD(int64(start), "metadata without checksummed_blocks: a development version of BMD 2, which is no longer read (crunch the dump again)")
	}
	if xxhash.Sum64(body) != sum {
		return header{}, &FormatError{Offset: int64(len(body)), Record: "header", Msg: "header checksum mismatch: the file is damaged", Err: ErrChecksum}
	}
	if err != nil {
		return header{}, notBMD(int64(start), err.Error())
	}
	if err := meta.check(); err != nil {
		return header{}, notBMD(int64(start), err.Error())
	}
	return header{meta, int64(len(raw))}, nil
}

// ErrVersion1 is returned by NewReader for a BMD version 1 file.
var ErrVersion1 = errors.New("bmd: version 1 file")

// Metadata returns the header metadata.
func (r *Reader) Metadata() Metadata { return r.meta }

// Offset returns the file offset of the next byte to read.
func (r *Reader) Offset() int64 {
	s := r.off()
	if s >= r.spanEnd {
		r.findSpan(s)
	}
	return s + r.spanShift
}

// findSpan sets spanEnd and spanShift for stream offset s, from the block
// reader's spans: Offset within the same block is then a sum (Next
// inlines it, for Offset is over the inlining budget).
func (r *Reader) findSpan(s int64) {
	r.spanShift = r.blocks.fileOffset(s) - s
	r.spanEnd = s // past the blocks read: the next call asks again
	if sp, ok := r.blocks.span(s); ok {
		r.spanEnd = sp.stream + sp.n
	}
}

// Layout returns the instance fields of class idx and of its superclasses,
// in the order of Record.Values.
func (r *Reader) Layout(idx uint64) ([]Field, bool) {
	f, ok, _ := r.lay.chain(idx, r.meta.Classes)
	return f, ok
}

// NextID returns the object ID that the next object record takes: the
// objects of a run skipped (SkipObjects) have taken theirs.
func (r *Reader) NextID() uint64 { return r.nextID }

// Classes returns the number of class records read so far.
func (r *Reader) Classes() uint64 { return uint64(r.lay.n) }

// Next reads the next record. It returns io.EOF at the end of the file.
// The Record is reused by the next call.
func (r *Reader) Next() (*Record, error) {
	rec := &r.rec
	if r.held {
		if r.done {
			return nil, io.EOF
		}
		if r.pending > 0 {
			if err := r.skipPending(); err != nil {
				return nil, err
			}
		}
		r.held = false
	}
	// A record that starts a block: its offset is known once the block
	// is read. Then Offset, inlined (see findSpan).
	r.fill(1)
	s := r.off()
	if s < r.spanEnd {
		rec.Offset = s + r.spanShift
	} else {
		rec.Offset = r.Offset()
	}
	if r.inObjects && s >= r.objEnd {
		if err := r.endObjects(s, rec.Offset); err != nil {
			return nil, err
		}
	}
	if r.runLeft == 0 && !r.slowOnly && r.fastObject(rec) {
		return rec, nil
	}
	d := &r.dec // a field, not a local: the decoders in the table would make it escape
	*d = decoder{in: &r.input, blocks: r.blocks, at: rec.Offset}
	switch {
	case r.runLeft > 0:
		d.record = r.runKind.String()
		if r.runKind == KindRoot {
			r.nextRoot(rec, d)
		} else {
			r.nextHashed(rec, d)
		}
	case !r.fill(1):
		if r.failed() != nil {
			return nil, r.formatError(rec.Offset, "", "", nil)
		}
		return nil, &FormatError{Offset: rec.Offset, Msg: "truncated: the file ends without its END record", Err: io.ErrUnexpectedEOF}
	default:
		k := Kind(d.byte())
		rec.Kind = k
		if k == 0 || k > maxKind {
			return nil, d.fail("unknown record tag %d", uint8(k))
		}
		d.record = k.String()
		if r.inObjects && !k.object() {
			return nil, d.fail("not an object record, inside the OBJECTS run at offset %d", r.objAt)
		}
		recordDecoders[k](r, rec, d)
		if k == KindObjects && d.err == nil && r.inObjects {
			return r.Next() // framing: the next record is the first of the run (decoded)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return rec, nil
}

// endObjects checks, at stream offset s (file offset at), that the
// OBJECTS run being read ends there with as many records as it said.
func (r *Reader) endObjects(s, at int64) error {
	r.inObjects = false
	if read := r.records - r.objFirst; s != r.objEnd || read != r.objCount {
		return &FormatError{Offset: at, Record: "OBJECTS", Msg: fmt.Sprintf("the run at offset %d says %d object records; %d records end %d bytes from its end",
			r.objAt, r.objCount, read, s-r.objEnd)}
	}
	if r.objData != r.objSize {
		return &FormatError{Offset: at, Record: "OBJECTS", Msg: fmt.Sprintf("the run at offset %d says %d bytes of HPROF; its objects take %d", r.objAt, r.objSize, r.objData)}
	}
	return nil
}

// objectData counts the n bytes of HPROF (instance data or elements) of
// an object of the OBJECTS run being read, if any, and reports whether
// they fit in what the run says.
func (r *Reader) objectData(n uint64) bool {
	if !r.inObjects {
		return true
	}
	if n > r.objSize-r.objData {
		return false
	}
	r.objData += n
	return true
}

// objectDataFail reports an object that takes more bytes of HPROF than
// its OBJECTS run says are left.
func (r *Reader) objectDataFail(d *decoder) {
	d.fail("its objects take more than the %d bytes of HPROF the OBJECTS run at offset %d says", r.objSize, r.objAt)
}

// recordDecoders decode the body of a record of each kind; they report
// errors through the decoder.
var recordDecoders = [maxKind + 1]func(r *Reader, rec *Record, d *decoder){
	KindString: (*Reader).readString, KindHashedString: (*Reader).readHashedRun,
	KindArrayName: (*Reader).readArrayName, KindLoadClass: (*Reader).readLoadClass,
	KindUnloadClass: (*Reader).readSerial, KindEndThread: (*Reader).readSerial,
	KindStackFrame: (*Reader).readStackFrame, KindStackTrace: (*Reader).readStackTrace,
	KindStartThread: (*Reader).readStartThread, KindRawRecord: (*Reader).readRaw,
	KindTime:        func(r *Reader, rec *Record, d *decoder) { rec.Time = d.u32() },
	KindHeapDump:    func(r *Reader, rec *Record, d *decoder) { rec.Segment = d.uvarint() == 1 },
	KindHeapDumpEnd: func(*Reader, *Record, *decoder) {},
	KindTrace:       func(r *Reader, rec *Record, d *decoder) { r.trace = d.u32(); rec.Trace = r.trace },
	KindClass:       (*Reader).readClassRecord, KindInstance: (*Reader).readInstance,
	KindObjectArray: (*Reader).readObjectArray, KindPrimitiveArray: (*Reader).readPrimitiveArray,
	KindPrimitiveNoData: (*Reader).readPrimitiveArray, KindRoot: (*Reader).readRootRun,
	KindHeapInfo:     func(r *Reader, rec *Record, d *decoder) { rec.HeapType, rec.Name = d.u32(), d.uvarint() },
	KindPlaceClasses: (*Reader).readPlaceClasses, KindEnd: (*Reader).readEnd,
	KindObjects:  (*Reader).readObjects,
	KindObjectID: (*Reader).readObjectID,
}

// u32 consumes a varint that must fit in 32 bits (spec/bmd.md §2.1).
func (d *decoder) u32() uint32 {
	v := d.uvarint()
	if d.err == nil && v > 0xFFFFFFFF {
		d.fail("value %d does not fit in 32 bits", v)
	}
	return uint32(v)
}

// ref consumes a reference relative to self (spec/bmd.md §2.4).
func (d *decoder) ref(self uint64) uint64 {
	v := d.uvarint()
	if v == 0 {
		return 0
	}
	return self + uint64(protowire.DecodeZigZag(v-1))
}

// value consumes a kept primitive value of type t (spec/bmd.md §2.7).
func (d *decoder) value(t Type) uint64 {
	switch t {
	case Float:
		return uint64(d.le32())
	case Double:
		return d.le64()
	}
	return primitive(t, d.uvarint())
}

// primitive returns the value of type t (not Float or Double) that the
// varint v encodes.
func primitive(t Type, v uint64) uint64 {
	switch t {
	case Int:
		return uint64(uint32(int32(protowire.DecodeZigZag(v))))
	case Long:
		return uint64(protowire.DecodeZigZag(v))
	case Boolean, Byte:
		return v & 0xFF
	}
	return v & 0xFFFF
}

// typeKept consumes a field type and its kept flag.
func (d *decoder) typeKept() (Type, bool) {
	v := d.uvarint()
	t := Type(v >> 1)
	if d.err == nil && (v>>1 > 0xFF || !t.Valid()) {
		d.fail("invalid field type %d", v>>1)
	}
	return t, v&1 == 1 || t == Object
}

func (r *Reader) readString(rec *Record, d *decoder) {
	prefix, n := d.uvarint(), d.uvarint()
	if d.err != nil {
		return
	}
	if prefix > uint64(len(r.lastText)) || prefix > MaxSharedPrefix {
		d.fail("shares %d bytes with a previous string of %d (at most %d)", prefix, len(r.lastText), MaxSharedPrefix)
		return
	}
	if n > 1<<31 {
		d.fail("string of %d bytes is implausible", n)
		return
	}
	if b := d.bytes(int(n)); b != nil {
		r.lastText = append(r.lastText[:prefix], b...)
		rec.Text, rec.Length = r.lastText, uint64(len(r.lastText))
	}
	r.strings++
	rec.ID = r.strings
}

func (r *Reader) readHashedRun(rec *Record, d *decoder) {
	if r.runLeft = d.uvarint(); d.err == nil && r.runLeft == 0 {
		d.fail("empty run of hashed strings")
	}
	if d.err != nil {
		return
	}
	r.runKind = KindHashedString
	r.nextHashed(rec, d)
}

// nextHashed reads one entry of a run of hashed strings.
func (r *Reader) nextHashed(rec *Record, d *decoder) {
	rec.Kind = KindHashedString
	rec.Length = d.uvarint()
	rec.Hash = d.le64()
	if d.err != nil {
		return
	}
	r.runLeft--
	r.strings++
	rec.ID = r.strings
}

func (r *Reader) readArrayName(rec *Record, d *decoder) {
	rec.Name = d.uvarint()
	dims := d.uvarint()
	if d.err == nil && (rec.Name == 0 || rec.Name > r.strings || dims>>1 == 0 || dims>>1 > 255) {
		d.fail("array name of string %d with %d dimensions (%d strings read)", rec.Name, dims>>1, r.strings)
		return
	}
	rec.Dims, rec.Descriptor = uint8(dims>>1), dims&1 == 1
	r.strings++
	rec.ID = r.strings
}

func (r *Reader) readLoadClass(rec *Record, d *decoder) {
	rec.Serial = uint32(int64(r.lastSerial) + d.zigzag())
	rec.Class = d.delta(&r.lastLoaded)
	rec.Trace = d.u32()
	rec.Name = d.delta(&r.lastName)
	r.lastSerial = rec.Serial
}

func (r *Reader) readSerial(rec *Record, d *decoder) { rec.Serial = d.u32() }

func (r *Reader) readStackFrame(rec *Record, d *decoder) {
	rec.Method, rec.Signature, rec.Source = d.uvarint(), d.uvarint(), d.uvarint()
	rec.ClassSerial = d.u32()
	rec.Line = int32(d.zigzag())
	r.frames++
	rec.ID = r.frames
}

func (r *Reader) readStackTrace(rec *Record, d *decoder) {
	rec.Serial, rec.Thread = d.u32(), d.u32()
	n := d.uvarint()
	rec.Frames = rec.Frames[:0]
	for i := uint64(0); i < n && d.err == nil; i++ {
		rec.Frames = append(rec.Frames, d.uvarint())
	}
}

func (r *Reader) readStartThread(rec *Record, d *decoder) {
	rec.Serial = d.u32()
	rec.Object = d.uvarint()
	rec.Trace = d.u32()
	rec.Name, rec.Group, rec.Parent = d.uvarint(), d.uvarint(), d.uvarint()
}

func (r *Reader) readRaw(rec *Record, d *decoder) {
	t, n := d.uvarint(), d.uvarint()
	switch {
	case d.err != nil:
		return
	case t > 0xFF || n > 0xFFFFFFFF:
		d.fail("raw record tag %d length %d out of range", t, n)
		return
	case rawTagHasKind(uint8(t)):
		d.fail("raw record with HPROF tag 0x%02X, which has its own record kind", t)
		return
	}
	rec.Tag = uint8(t)
	rec.Text = d.bytes(int(n))
}

func (r *Reader) readClassRecord(rec *Record, d *decoder) {
	v := d.uvarint()
	idx := r.lastClass + uint64(protowire.DecodeZigZag(v>>1))
	redump := v&1 == 1
	switch {
	case d.err != nil:
		return
	case idx == 0 || idx > r.meta.Classes:
		d.fail("class index %d (the metadata counts %d classes)", idx, r.meta.Classes)
		return
	case redump && !r.lay.defined(idx):
		d.fail("another dump of class %d, which is not defined", idx)
		return
	case !redump && r.lay.defined(idx):
		d.fail("class %d defined twice", idx)
		return
	}
	r.lastClass = idx
	c := &rec.Def
	c.Index, c.Redump = idx, redump
	r.readClass(c, d)
	if d.err != nil {
		return
	}
	if redump && !r.lay.same(c) {
		d.fail("another dump of class %d with another super class or other instance fields", idx)
		return
	}
	if !redump {
		r.lay.add(c)
	}
	r.records++
	rec.ID, rec.Trace = idx, c.StackTrace
}

// readClass reads the body of a CLASS record after its index.
func (r *Reader) readClass(c *Class, d *decoder) {
	self := c.Index
	c.StackTrace = uint32(d.uvarint())
	c.Super = d.ref(self)
	links := [5]*uint64{&c.Loader, &c.Signers, &c.ProtectionDomain, &c.Reserved1, &c.Reserved2}
	for i, p := range links {
		*p = d.delta(&r.lastCls[i])
	}
	c.InstanceSize = uint32(d.uvarint())
	c.Constants = c.Constants[:0]
	for i, n := uint64(0), d.count("constants"); i < n && d.err == nil; i++ {
		k := Constant{Index: uint16(d.uvarint())}
		k.Type, k.Kept = d.typeKept()
		k.Value = d.fieldValue(k.Type, k.Kept, self)
		c.Constants = append(c.Constants, k)
	}
	c.Statics = c.Statics[:0]
	for i, n := uint64(0), d.count("static fields"); i < n && d.err == nil; i++ {
		f := Static{Name: d.delta(&r.lastName)}
		f.Type, f.Kept = d.typeKept()
		f.Value = d.fieldValue(f.Type, f.Kept, self)
		c.Statics = append(c.Statics, f)
	}
	c.Fields = c.Fields[:0]
	for i, n := uint64(0), d.count("instance fields"); i < n && d.err == nil; i++ {
		f := Field{Name: d.delta(&r.lastName)}
		f.Type, f.Kept = d.typeKept()
		c.Fields = append(c.Fields, f)
	}
}

// count consumes a count of a class's members: at most 65535, as in HPROF.
func (d *decoder) count(what string) uint64 {
	n := d.uvarint()
	if d.err == nil && n > 0xFFFF {
		d.fail("%d %s", n, what)
	}
	return n
}

// fieldValue consumes the value of a constant or static: a reference for
// an object, the value if kept, else nothing.
func (d *decoder) fieldValue(t Type, kept bool, self uint64) uint64 {
	if d.err != nil {
		return 0
	}
	if t == Object {
		return d.ref(self)
	}
	if kept {
		return d.value(t)
	}
	return 0
}

// object gives the next object record its ID.
func (r *Reader) object(rec *Record) uint64 {
	id := r.nextID
	r.nextID++
	r.maxID = max(r.maxID, id)
	r.records++
	rec.ID, rec.Trace = id, r.trace
	return id
}

// The work reading instances may take: a fixed allowance plus an amount
// per byte read (see readInstance).
const (
	maxLayoutWork     = 1 << 24
	layoutWorkPerByte = 128
)

func (r *Reader) readInstance(rec *Record, d *decoder) {
	self := r.object(rec)
	rec.Class = d.uvarint()
	if d.err != nil {
		return
	}
	ch, ok, missing := r.lay.chain(rec.Class, r.meta.Classes)
	switch {
	case missing != 0:
		d.fail("instance of class %d, whose super class %d is not defined yet", rec.Class, missing)
		return
	case !ok:
		d.fail("instance of undefined class %d", rec.Class)
		return
	}
	// Dropped primitive fields take no bytes, so a long chain of them
	// costs time without size; a real heap has a few dozen fields per
	// instance byte at most.
	r.lay.work += int64(len(ch))
	if r.lay.work > maxLayoutWork+layoutWorkPerByte*r.off() {
		d.fail("instance of class %d: class layouts are implausibly long for the size of the file", rec.Class)
		return
	}
	if r.inObjects && !r.objectData(uint64(dataSize(ch, r.meta.IDSize))) {
		r.objectDataFail(d)
		return
	}
	rec.Values = rec.Values[:0]
	if r.SkipValues && self != r.ValuesOf {
		d.skipValues(ch)
		return
	}
	in := &d.in.buf
	for _, f := range ch {
		var v uint64
		if f.Type == Object {
			// A one-byte reference read inline: most are.
			if u, ok := in.SmallUvarint(); ok && d.err == nil {
				if u != 0 {
					v = self + uint64(protowire.DecodeZigZag(u-1))
				}
			} else {
				v = d.ref(self)
			}
		} else if f.Kept {
			v = d.value(f.Type)
		}
		rec.Values = append(rec.Values, v)
	}
}

func (r *Reader) readObjectArray(rec *Record, d *decoder) {
	self := r.object(rec)
	rec.Class = d.uvarint()
	switch {
	case rec.Class == 0:
		rec.Class = d.ref(self)
	case d.err == nil && !r.lay.defined(rec.Class): // none above C is (readClassRecord)
		d.fail("array class index %d is not a class defined before (the metadata counts %d classes)", rec.Class, r.meta.Classes)
	}
	n := d.uvarint()
	rec.Elements, rec.Pending = rec.Elements[:0], 0
	if d.err == nil && n > 0xFFFFFFFF {
		d.fail("array length %d", n)
	}
	switch {
	case d.err != nil:
		return
	case r.SkipValues:
		d.skipVarints(n)
	case r.MaxElements > 0 && n > uint64(r.MaxElements):
		rec.Pending = uint32(n) // NextElements decodes them
		r.pending, r.pendingSelf, r.held = n, self, true
	default:
		r.decodeElements(rec, d, self, n)
	}
	if d.err == nil && !r.objectData(elementBytes(Object, n, r.meta.IDSize)) {
		r.objectDataFail(d)
	}
	rec.Count = uint32(n)
}

// decodeElements appends the next n elements of the object array self to
// rec.Elements.
func (r *Reader) decodeElements(rec *Record, d *decoder, self, n uint64) {
	in := &d.in.buf
	for i := uint64(0); i < n && d.err == nil; i++ {
		if len(rec.Elements) == cap(rec.Elements) {
			// Double the room, as far as the array goes: room for the
			// elements decoded, not for what the length claims. Grown
			// by append, an array of 40 million elements was copied
			// over and over: 1.2 GB allocated for its 320 MB.
			rec.Elements = slices.Grow(rec.Elements, int(min(n-i, uint64(max(i, 1024)))))
		}
		// A one-byte reference read inline: most are.
		if u, ok := in.SmallUvarint(); ok {
			if u != 0 {
				u = self + uint64(protowire.DecodeZigZag(u-1))
			}
			rec.Elements = append(rec.Elements, u)
			continue
		}
		rec.Elements = append(rec.Elements, d.ref(self))
	}
}

// NextElements decodes the next elements of the OBJECT ARRAY rec that Next
// left pending (Record.Pending, Reader.MaxElements), at most limit of them,
// into rec.Elements (replacing those there), and lowers rec.Pending by as
// many. rec is the array's record as Next returned it.
func (r *Reader) NextElements(rec *Record, limit int) error {
	n := min(r.pending, uint64(max(limit, 0)))
	rec.Elements = rec.Elements[:0]
	d := &r.dec
	r.decodeElements(rec, d, r.pendingSelf, n)
	if d.err != nil {
		r.pending, rec.Pending = 0, 0
		return d.err
	}
	r.pending -= n
	rec.Pending = uint32(r.pending)
	return nil
}

// skipPending skips the elements of the last OBJECT ARRAY that
// NextElements did not decode.
func (r *Reader) skipPending() error {
	d := &r.dec
	d.skipVarints(r.pending)
	r.pending = 0
	return d.err
}

func (r *Reader) readPrimitiveArray(rec *Record, d *decoder) {
	r.object(rec)
	t := d.uvarint()
	rec.Type = Type(t)
	rec.Count = d.u32()
	if d.err == nil && (t > 0xFF || !rec.Type.Valid() || rec.Type == Object) {
		d.fail("invalid element type %d", t)
	}
	if d.err == nil && rec.Kind == KindPrimitiveArray && !r.objectData(elementBytes(rec.Type, uint64(rec.Count), r.meta.IDSize)) {
		r.objectDataFail(d)
	}
}

func (r *Reader) readObjectID(rec *Record, d *decoder) {
	next := r.nextID + uint64(d.zigzag())
	if d.err == nil && (next <= r.meta.Classes || next > r.maxID+1) {
		d.fail("object ID %d (objects are %d to %d)", next, r.meta.Classes+1, r.maxID+1)
		return
	}
	r.nextID = next
	rec.ID = next
}

func (r *Reader) readRootRun(rec *Record, d *decoder) {
	r.runRoot = d.byte()
	if d.err == nil && !RootKindValid(r.runRoot) {
		d.fail("invalid root kind 0x%02X", r.runRoot)
	}
	if r.runLeft = d.uvarint(); d.err == nil && r.runLeft == 0 {
		d.fail("empty run of roots")
	}
	if d.err != nil {
		return
	}
	r.runKind = KindRoot
	r.nextRoot(rec, d)
}

// nextRoot reads one entry of a run of roots.
func (r *Reader) nextRoot(rec *Record, d *decoder) {
	rec.Kind = KindRoot
	rec.Tag = r.runRoot
	rec.Object = d.delta(&r.lastRoot)
	rec.Thread, rec.Frame, rec.JNIRef, rec.Trace = 0, 0, 0, 0
	switch rec.Tag {
	case rootJNIGlobal:
		rec.JNIRef = d.delta(&r.lastJNI)
	case rootJNILocal, rootJavaFrame, rootJNIMonitor:
		rec.Thread = uint32(d.uvarint())
		rec.Frame = uint32(d.uvarint()) - 1
	case rootNativeStack, rootThreadBlock:
		rec.Thread = uint32(d.uvarint())
	case rootThreadObject:
		rec.Thread = uint32(d.uvarint())
		rec.Trace = uint32(d.uvarint())
	}
	if d.err == nil {
		r.runLeft--
	}
}

func (r *Reader) readPlaceClasses(rec *Record, d *decoder) {
	n := d.uvarint()
	switch {
	case d.err != nil:
		return
	case !r.meta.ClassesPlaced:
		d.fail("PLACE CLASSES in a file whose metadata does not set classes_placed")
		return
	case n == 0 || n > r.meta.Classes-r.placed:
		d.fail("places %d classes after class %d, of %d", n, r.placed, r.meta.Classes)
		return
	}
	for i := r.placed + 1; i <= r.placed+n; i++ {
		if !r.lay.defined(i) {
			d.fail("places class %d, which is not defined", i)
			return
		}
	}
	rec.ID, rec.Length = r.placed+1, n
	r.placed += n
}

// readObjects reads the header of a run of object records, and skips the
// run with SkipObjects, unless DecodeRun picks it.
func (r *Reader) readObjects(rec *Record, d *decoder) {
	n, count, size := d.uvarint(), d.uvarint(), d.uvarint()
	switch {
	case d.err != nil:
		return
	case count == 0 || count > n/2 || count > 1<<32-1 || n > 1<<62: // an object record takes 2 bytes at least
		d.fail("%d object records in %d bytes", count, n)
		return
	case !r.SkipObjects || r.DecodeRun != nil && r.DecodeRun(r.nextID, count):
		r.inObjects, r.objAt, r.objEnd = true, rec.Offset, r.off()+int64(n)
		r.objFirst, r.objCount = r.records, count
		r.objSize, r.objData = size, 0
		return
	}
	rec.Count, rec.Length = uint32(count), size
	if r.input.buf.Skip(int64(n)) < int64(n) {
		d.truncated() // or the source's error: a damaged block
		return
	}
	r.records += uint64(count)
	r.nextID += uint64(count)
	r.maxID = max(r.maxID, r.nextID-1)
}

func (r *Reader) readEnd(rec *Record, d *decoder) {
	objects, strings := d.uvarint(), d.uvarint()
	if d.err == nil && (objects != r.records || strings != r.strings) {
		d.fail("file ends with %d object records and %d strings, END record says %d and %d", r.records, r.strings, objects, strings)
		return
	}
	r.done, r.held = true, true
}
