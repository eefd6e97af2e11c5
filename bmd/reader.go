package bmd

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// ErrNotBMD is wrapped by the error returned for input that is not a BMD file.
var ErrNotBMD = errors.New("not a BMD file")

// FormatError reports input that does not follow the BMD format: the byte
// offset (in the uncompressed file) and the record being read.
type FormatError struct {
	Offset int64
	Record string // e.g. "INSTANCE", "header" or "block"
	Msg    string
	Err    error // io.ErrUnexpectedEOF for truncation, ErrNotBMD, ErrChecksum, or nil
}

func (e *FormatError) Error() string {
	s := "bmd: " + e.Msg
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
	Offset int64 // of the record's first byte in the file

	// ID is the ID the record implies: the string ID of a string, the
	// frame ID of a stack frame, the object ID of a class, instance or
	// array; for PLACE CLASSES, the first class placed.
	ID uint64

	Text   []byte // KindString; the raw body of KindRawRecord
	Length uint64 // byte length of a string (clear or hashed; 0: not known); PLACE CLASSES: how many (from class ID)
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
	blocks *blockReader

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
	done bool

	runLeft uint64 // entries left in the current run
	runKind Kind
	runRoot uint8
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
	br.input = input{src: br.blocks, buf: make([]byte, readBufSize)}
	br.nextID, br.maxID = h.meta.Classes+1, h.meta.Classes
	return br, nil
}

// header is a version 2 header as read.
type header struct {
	meta Metadata
	size int64 // bytes
}

// readHeader reads and checks a version 2 header: version, metadata and
// its checksum.
func readHeader(src *bufio.Reader) (header, error) {
	var raw []byte
	varint := func() (uint64, bool) {
		for i := 0; i < binary.MaxVarintLen64; i++ {
			c, err := src.ReadByte()
			if err != nil {
				return 0, false
			}
			raw = append(raw, c)
			if c < 0x80 {
				v, n := protowire.ConsumeVarint(raw[len(raw)-i-1:])
				return v, n > 0
			}
		}
		return 0, false
	}
	notBMD := func(at int, msg string) error {
		return &FormatError{Offset: int64(at), Record: "header", Msg: msg, Err: ErrNotBMD}
	}
	v, ok := varint()
	if !ok {
		if len(raw) == 0 {
			if _, err := src.Peek(1); err != nil && err != io.EOF {
				return header{}, fmt.Errorf("reading at offset 0: %w", err)
			}
			return header{}, notBMD(0, "empty input")
		}
		return header{}, notBMD(0, "no version number")
	}
	if v == 1 {
		return header{}, ErrVersion1
	}
	if v != Version2 {
		return header{}, notBMD(0, fmt.Sprintf("unknown version %d", v))
	}
	n, ok := varint()
	if !ok {
		return header{}, &FormatError{Offset: int64(len(raw)), Record: "header", Msg: "truncated", Err: io.ErrUnexpectedEOF}
	}
	if n > 1<<20 {
		return header{}, notBMD(len(raw), fmt.Sprintf("metadata of %d bytes is implausible", n))
	}
	start := len(raw)
	raw = append(raw, make([]byte, n+8)...)
	if _, err := io.ReadFull(src, raw[start:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return header{}, &FormatError{Offset: int64(start), Record: "header", Msg: "truncated", Err: io.ErrUnexpectedEOF}
		}
		return header{}, fmt.Errorf("reading at offset %d: %w", start, err)
	}
	body, sum := raw[:len(raw)-8], binary.LittleEndian.Uint64(raw[len(raw)-8:])
	// A development version of BMD 2 had no checksum; say so rather than
	// report a mismatch. Otherwise the checksum comes first, so damaged
	// metadata reads as damage, not as another kind of file.
	meta, err := ParseMetadata(body[start:])
	if err == nil && !meta.Blocks {
		return header{}, notBMD(start, "metadata without checksummed_blocks: a development version of BMD 2, which is no longer read (crunch the dump again)")
	}
	if xxhash.Sum64(body) != sum {
		return header{}, &FormatError{Offset: int64(len(body)), Record: "header", Msg: "header checksum mismatch: the file is damaged", Err: ErrChecksum}
	}
	if err != nil {
		return header{}, notBMD(start, err.Error())
	}
	if err := meta.check(); err != nil {
		return header{}, notBMD(start, err.Error())
	}
	return header{meta, int64(len(raw))}, nil
}

// ErrVersion1 is returned by NewReader for a BMD version 1 file.
var ErrVersion1 = errors.New("bmd: version 1 file")

// Metadata returns the header metadata.
func (r *Reader) Metadata() Metadata { return r.meta }

// Offset returns the file offset of the next byte to read.
func (r *Reader) Offset() int64 { return r.blocks.fileOffset(r.off()) }

// Layout returns the instance fields of class idx and of its superclasses,
// in the order of Record.Values.
func (r *Reader) Layout(idx uint64) ([]Field, bool) {
	f, ok, _ := r.lay.chain(idx, r.meta.Classes)
	return f, ok
}

// Classes returns the number of class records read so far.
func (r *Reader) Classes() uint64 { return uint64(len(r.lay.classes)) }

// Next reads the next record. It returns io.EOF at the end of the file.
// The Record is reused by the next call.
func (r *Reader) Next() (*Record, error) {
	rec := &r.rec
	if r.done {
		return nil, io.EOF
	}
	r.fill(1) // a record that starts a block: its offset is known once the block is read
	rec.Offset = r.Offset()
	if r.runLeft > 0 {
		if r.runKind == KindRoot {
			return r.nextRoot(rec)
		}
		return r.nextHashed(rec)
	}
	if !r.fill(1) {
		if r.srcErr != nil && r.srcErr != io.EOF {
			return nil, r.formatError(rec.Offset, "", "", nil)
		}
		return nil, &FormatError{Offset: rec.Offset, Msg: "truncated: the file ends without its END record", Err: io.ErrUnexpectedEOF}
	}
	k := Kind(r.buf[r.pos])
	r.pos++
	rec.Kind = k
	if k == 0 || k > maxKind {
		return nil, r.fail("", fmt.Sprintf("unknown record tag %d", uint8(k)), nil)
	}
	d := decoder{r: r, record: k.String()}
	if err := recordDecoders[k](r, rec, &d); err != nil {
		return nil, err
	}
	if d.err != nil {
		return nil, d.err
	}
	return rec, nil
}

// recordDecoders decode the body of a record of each kind.
var recordDecoders = [maxKind + 1]func(r *Reader, rec *Record, d *decoder) error{
	KindString: (*Reader).readString, KindHashedString: (*Reader).readHashedRun,
	KindArrayName: (*Reader).readArrayName, KindLoadClass: (*Reader).readLoadClass,
	KindUnloadClass: (*Reader).readSerial, KindEndThread: (*Reader).readSerial,
	KindStackFrame: (*Reader).readStackFrame, KindStackTrace: (*Reader).readStackTrace,
	KindStartThread: (*Reader).readStartThread, KindRawRecord: (*Reader).readRaw,
	KindTime:        func(r *Reader, rec *Record, d *decoder) error { rec.Time = d.u32(); return nil },
	KindHeapDump:    func(r *Reader, rec *Record, d *decoder) error { rec.Segment = d.u() == 1; return nil },
	KindHeapDumpEnd: func(*Reader, *Record, *decoder) error { return nil },
	KindTrace:       func(r *Reader, rec *Record, d *decoder) error { r.trace = d.u32(); rec.Trace = r.trace; return nil },
	KindClass:       (*Reader).readClassRecord, KindInstance: (*Reader).readInstance,
	KindObjectArray: (*Reader).readObjectArray, KindPrimitiveArray: (*Reader).readPrimitiveArray,
	KindPrimitiveNoData: (*Reader).readPrimitiveArray, KindRoot: (*Reader).readRootRun,
	KindHeapInfo: func(r *Reader, rec *Record, d *decoder) error {
		rec.HeapType, rec.Name = d.u32(), d.u()
		return nil
	},
	KindPlaceClasses: (*Reader).readPlaceClasses, KindEnd: (*Reader).readEnd,
	KindObjectID: (*Reader).readObjectID,
}

func (r *Reader) fail(record, msg string, err error) error {
	return r.formatError(r.rec.Offset, record, msg, err)
}

// decoder reads the fields of one record and keeps the first error: once
// it has failed, every method returns 0.
type decoder struct {
	r      *Reader
	record string // the record's name, for errors
	err    error
}

func (d *decoder) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := d.r.uvarint()
	switch {
	case n == 0:
		d.err = d.r.fail(d.record, "truncated", io.ErrUnexpectedEOF)
	case n < 0:
		d.err = d.r.fail(d.record, "varint overflows 64 bits", nil)
	}
	return v
}

func (d *decoder) u32() uint32 {
	v := d.u()
	if d.err == nil && v > 0xFFFFFFFF {
		d.err = d.r.fail(d.record, fmt.Sprintf("value %d does not fit in 32 bits", v), nil)
	}
	return uint32(v)
}

func (d *decoder) z() int64 { return unzigzag(d.u()) }

// bytes returns the next n bytes (see input.take).
func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	b, ok := d.r.take(n)
	if !ok {
		d.err = d.r.fail(d.record, "truncated", io.ErrUnexpectedEOF)
	}
	return b
}

// ref reads a reference relative to self.
func (d *decoder) ref(self uint64) uint64 {
	v := d.u()
	if v == 0 {
		return 0
	}
	return self + uint64(unzigzag(v-1))
}

// name reads a name as a delta from the previous name.
func (d *decoder) name() uint64 {
	d.r.lastName += uint64(d.z())
	return d.r.lastName
}

func (d *decoder) value(t Type) uint64 {
	switch t {
	case Float:
		if b := d.bytes(4); b != nil {
			return uint64(binary.LittleEndian.Uint32(b))
		}
		return 0
	case Double:
		if b := d.bytes(8); b != nil {
			return binary.LittleEndian.Uint64(b)
		}
		return 0
	}
	v := d.u()
	switch t {
	case Int:
		return uint64(uint32(int32(unzigzag(v))))
	case Long:
		return uint64(unzigzag(v))
	case Boolean, Byte:
		return v & 0xFF
	}
	return v & 0xFFFF
}

func (d *decoder) typeKept() (Type, bool) {
	v := d.u()
	t := Type(v >> 1)
	if d.err == nil && (v>>1 > 0xFF || !t.Valid()) {
		d.err = d.r.fail(d.record, fmt.Sprintf("invalid field type %d", v>>1), nil)
	}
	return t, v&1 == 1 || t == Object
}

// fail records an error of the record's content.
func (d *decoder) fail(format string, a ...any) error {
	if d.err == nil {
		d.err = d.r.fail(d.record, fmt.Sprintf(format, a...), nil)
	}
	return d.err
}

func (r *Reader) readString(rec *Record, d *decoder) error {
	prefix, n := d.u(), d.u()
	if d.err != nil {
		return nil
	}
	if prefix > uint64(len(r.lastText)) || prefix > MaxSharedPrefix {
		return d.fail("shares %d bytes with a previous string of %d (at most %d)", prefix, len(r.lastText), MaxSharedPrefix)
	}
	if n > 1<<31 {
		return d.fail("string of %d bytes is implausible", n)
	}
	if b := d.bytes(int(n)); b != nil {
		r.lastText = append(r.lastText[:prefix], b...)
		rec.Text, rec.Length = r.lastText, uint64(len(r.lastText))
	}
	r.strings++
	rec.ID = r.strings
	return nil
}

func (r *Reader) readHashedRun(rec *Record, d *decoder) error {
	if r.runLeft = d.u(); d.err == nil && r.runLeft == 0 {
		return d.fail("empty run of hashed strings")
	}
	if d.err != nil {
		return nil
	}
	r.runKind = KindHashedString
	_, err := r.nextHashed(rec)
	return err
}

// nextHashed reads one entry of a run of hashed strings.
func (r *Reader) nextHashed(rec *Record) (*Record, error) {
	d := decoder{r: r, record: KindHashedString.String()}
	rec.Kind = KindHashedString
	rec.Length = d.u()
	if b := d.bytes(8); b != nil {
		rec.Hash = binary.LittleEndian.Uint64(b)
	}
	if d.err != nil {
		return nil, d.err
	}
	r.runLeft--
	r.strings++
	rec.ID = r.strings
	return rec, nil
}

func (r *Reader) readArrayName(rec *Record, d *decoder) error {
	rec.Name = d.u()
	dims := d.u()
	if d.err == nil && (rec.Name == 0 || rec.Name > r.strings || dims>>1 == 0 || dims>>1 > 255) {
		return d.fail("array name of string %d with %d dimensions (%d strings read)", rec.Name, dims>>1, r.strings)
	}
	rec.Dims, rec.Descriptor = uint8(dims>>1), dims&1 == 1
	r.strings++
	rec.ID = r.strings
	return nil
}

func (r *Reader) readLoadClass(rec *Record, d *decoder) error {
	rec.Serial = uint32(int64(r.lastSerial) + d.z())
	rec.Class = r.lastLoaded + uint64(d.z())
	rec.Trace = d.u32()
	rec.Name = d.name()
	r.lastSerial, r.lastLoaded = rec.Serial, rec.Class
	return nil
}

func (r *Reader) readSerial(rec *Record, d *decoder) error {
	rec.Serial = d.u32()
	return nil
}

func (r *Reader) readStackFrame(rec *Record, d *decoder) error {
	rec.Method, rec.Signature, rec.Source = d.u(), d.u(), d.u()
	rec.ClassSerial = d.u32()
	rec.Line = int32(d.z())
	r.frames++
	rec.ID = r.frames
	return nil
}

func (r *Reader) readStackTrace(rec *Record, d *decoder) error {
	rec.Serial, rec.Thread = d.u32(), d.u32()
	n := d.u()
	rec.Frames = rec.Frames[:0]
	for i := uint64(0); i < n && d.err == nil; i++ {
		rec.Frames = append(rec.Frames, d.u())
	}
	return nil
}

func (r *Reader) readStartThread(rec *Record, d *decoder) error {
	rec.Serial = d.u32()
	rec.Object = d.u()
	rec.Trace = d.u32()
	rec.Name, rec.Group, rec.Parent = d.u(), d.u(), d.u()
	return nil
}

func (r *Reader) readRaw(rec *Record, d *decoder) error {
	t, n := d.u(), d.u()
	if d.err != nil {
		return nil
	}
	if t > 0xFF || n > 0xFFFFFFFF {
		return d.fail("raw record tag %d length %d out of range", t, n)
	}
	if rawTagHasKind(uint8(t)) {
		return d.fail("raw record with HPROF tag 0x%02X, which has its own record kind", t)
	}
	rec.Tag = uint8(t)
	rec.Text = d.bytes(int(n))
	return nil
}

func (r *Reader) readClassRecord(rec *Record, d *decoder) error {
	v := d.u()
	idx := r.lastClass + uint64(unzigzag(v>>1))
	redump := v&1 == 1
	if d.err != nil {
		return nil
	}
	switch {
	case idx == 0 || idx > r.meta.Classes:
		return d.fail("class index %d (the metadata counts %d classes)", idx, r.meta.Classes)
	case redump && !r.lay.defined(idx):
		return d.fail("another dump of class %d, which is not defined", idx)
	case !redump && r.lay.defined(idx):
		return d.fail("class %d defined twice", idx)
	}
	r.lastClass = idx
	c := &rec.Def
	c.Index, c.Redump = idx, redump
	r.readClass(c, d)
	if d.err != nil {
		return nil
	}
	if redump && !r.lay.same(c) {
		return d.fail("another dump of class %d with another super class or other instance fields", idx)
	}
	if !redump {
		r.lay.add(c)
	}
	r.records++
	rec.ID, rec.Trace = idx, c.StackTrace
	return nil
}

// readClass reads the body of a CLASS record after its index.
func (r *Reader) readClass(c *Class, d *decoder) {
	self := c.Index
	c.StackTrace = uint32(d.u())
	c.Super = d.ref(self)
	links := [5]*uint64{&c.Loader, &c.Signers, &c.ProtectionDomain, &c.Reserved1, &c.Reserved2}
	for i, p := range links {
		r.lastCls[i] += uint64(d.z())
		*p = r.lastCls[i]
	}
	c.InstanceSize = uint32(d.u())
	c.Constants = c.Constants[:0]
	for i, n := uint64(0), d.count("constants"); i < n && d.err == nil; i++ {
		k := Constant{Index: uint16(d.u())}
		k.Type, k.Kept = d.typeKept()
		k.Value = d.fieldValue(k.Type, k.Kept, self)
		c.Constants = append(c.Constants, k)
	}
	c.Statics = c.Statics[:0]
	for i, n := uint64(0), d.count("static fields"); i < n && d.err == nil; i++ {
		f := Static{Name: d.name()}
		f.Type, f.Kept = d.typeKept()
		f.Value = d.fieldValue(f.Type, f.Kept, self)
		c.Statics = append(c.Statics, f)
	}
	c.Fields = c.Fields[:0]
	for i, n := uint64(0), d.count("instance fields"); i < n && d.err == nil; i++ {
		f := Field{Name: d.name()}
		f.Type, f.Kept = d.typeKept()
		c.Fields = append(c.Fields, f)
	}
}

// count reads a count of a class's members: at most 65535, as in HPROF.
func (d *decoder) count(what string) uint64 {
	n := d.u()
	if d.err == nil && n > 0xFFFF {
		d.fail("%d %s", n, what)
	}
	return n
}

// fieldValue reads the value of a constant or static: a reference for an
// object, the value if kept, else nothing.
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

func (r *Reader) readInstance(rec *Record, d *decoder) error {
	self := r.object(rec)
	rec.Class = d.u()
	if d.err != nil {
		return nil
	}
	ch, ok, missing := r.lay.chain(rec.Class, r.meta.Classes)
	if missing != 0 {
		return d.fail("instance of class %d, whose super class %d is not defined yet", rec.Class, missing)
	}
	if !ok {
		return d.fail("instance of undefined class %d", rec.Class)
	}
	// Dropped primitive fields take no bytes, so a long chain of them
	// costs time without size; a real heap has a few dozen fields per
	// instance byte at most.
	r.lay.work += int64(len(ch))
	if r.lay.work > maxLayoutWork+layoutWorkPerByte*r.off() {
		return d.fail("instance of class %d: class layouts are implausibly long for the size of the file", rec.Class)
	}
	rec.Values = rec.Values[:0]
	for _, f := range ch {
		var v uint64
		if f.Type == Object {
			v = d.ref(self)
		} else if f.Kept {
			v = d.value(f.Type)
		}
		rec.Values = append(rec.Values, v)
	}
	return nil
}

func (r *Reader) readObjectArray(rec *Record, d *decoder) error {
	self := r.object(rec)
	rec.Class = d.u()
	if rec.Class == 0 {
		rec.Class = d.ref(self)
	}
	n := d.u()
	rec.Elements = rec.Elements[:0]
	for i := uint64(0); i < n && d.err == nil; i++ {
		rec.Elements = append(rec.Elements, d.ref(self))
	}
	if d.err == nil && n > 0xFFFFFFFF {
		return d.fail("array length %d", n)
	}
	rec.Count = uint32(n)
	return nil
}

func (r *Reader) readPrimitiveArray(rec *Record, d *decoder) error {
	r.object(rec)
	rec.Type = Type(d.u())
	rec.Count = d.u32()
	if d.err == nil && (!rec.Type.Valid() || rec.Type == Object) {
		return d.fail("invalid element type %d", rec.Type)
	}
	return nil
}

func (r *Reader) readObjectID(rec *Record, d *decoder) error {
	next := r.nextID + uint64(d.z())
	if d.err == nil && (next <= r.meta.Classes || next > r.maxID+1) {
		return d.fail("object ID %d (objects are %d to %d)", next, r.meta.Classes+1, r.maxID+1)
	}
	r.nextID = next
	rec.ID = next
	return nil
}

func (r *Reader) readRootRun(rec *Record, d *decoder) error {
	if !r.fill(1) {
		return r.fail(d.record, "truncated", io.ErrUnexpectedEOF)
	}
	r.runRoot = r.buf[r.pos]
	r.pos++
	if !RootKindValid(r.runRoot) {
		return d.fail("invalid root kind 0x%02X", r.runRoot)
	}
	if r.runLeft = d.u(); d.err == nil && r.runLeft == 0 {
		return d.fail("empty run of roots")
	}
	if d.err != nil {
		return nil
	}
	r.runKind = KindRoot
	_, err := r.nextRoot(rec)
	return err
}

// nextRoot reads one entry of a run of roots.
func (r *Reader) nextRoot(rec *Record) (*Record, error) {
	d := decoder{r: r, record: KindRoot.String()}
	rec.Kind = KindRoot
	rec.Tag = r.runRoot
	rec.Object = r.lastRoot + uint64(d.z())
	r.lastRoot = rec.Object
	rec.Thread, rec.Frame, rec.JNIRef, rec.Trace = 0, 0, 0, 0
	switch rec.Tag {
	case rootJNIGlobal:
		rec.JNIRef = r.lastJNI + uint64(d.z())
		r.lastJNI = rec.JNIRef
	case rootJNILocal, rootJavaFrame, rootJNIMonitor:
		rec.Thread = uint32(d.u())
		rec.Frame = uint32(d.u()) - 1
	case rootNativeStack, rootThreadBlock:
		rec.Thread = uint32(d.u())
	case rootThreadObject:
		rec.Thread = uint32(d.u())
		rec.Trace = uint32(d.u())
	}
	if d.err != nil {
		return nil, d.err
	}
	r.runLeft--
	return rec, nil
}

func (r *Reader) readPlaceClasses(rec *Record, d *decoder) error {
	n := d.u()
	if d.err != nil {
		return nil
	}
	if n == 0 || n > r.meta.Classes-r.placed {
		return d.fail("places %d classes after class %d, of %d", n, r.placed, r.meta.Classes)
	}
	for i := r.placed + 1; i <= r.placed+n; i++ {
		if !r.lay.defined(i) {
			return d.fail("places class %d, which is not defined", i)
		}
	}
	rec.ID, rec.Length = r.placed+1, n
	r.placed += n
	return nil
}

func (r *Reader) readEnd(rec *Record, d *decoder) error {
	objects, strings := d.u(), d.u()
	if d.err == nil && (objects != r.records || strings != r.strings) {
		return d.fail("file ends with %d object records and %d strings, END record says %d and %d", r.records, r.strings, objects, strings)
	}
	r.done = true
	return nil
}
