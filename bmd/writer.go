package bmd

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// Writer writes a BMD version 2 file. Each method appends one record; IDs
// that the format implies by record order (strings, stack frames, objects)
// are returned to the caller. Records are buffered and written in
// checksummed blocks of BlockSize bytes: call Close at the end. The first
// error sticks and is returned by every later call.
type Writer struct {
	w       io.Writer
	buf     []byte // records not yet written in a block
	out     []byte // blocks not yet written to w
	err     error
	written int64 // bytes written to w
	header  int   // bytes of the header

	classes         uint64 // the metadata's class count: object IDs start after it
	strings, frames uint64
	records         uint64 // object records written (classes included), for END
	// nextID is the ID of the next object record; the largest ID taken is
	// the larger of maxID and nextID-1 (maxID is updated only when
	// ObjectID moves nextID, not at each object record).
	nextID, maxID uint64
	lastClass     uint64 // index of the last CLASS record

	lastText          []byte // the text of the last STRING
	time, trace       uint32
	lastRoot, lastJNI uint64
	lastSerial        uint32
	lastLoaded        uint64

	lay layouts

	run      []byte // pending run of hashed strings or of roots of one kind
	runCount uint64
	runKind  Kind
	runRoot  uint8
	lastName uint64
	lastCls  [5]uint64
	roots    []rootEntry // pending run of roots, sorted when written
	rootKeys []uint64    // their sort keys (encodeRoots), kept for the next run
	rootTmp  []uint64    // radixSort's other buffer
	kept     []uint64    // Instance's scratch: the values it keeps
	placed   uint64      // classes placed by PLACE CLASSES
	canPlace bool        // the metadata sets ClassesPlaced: PLACE CLASSES may be written

	// NoObjectRuns writes object records without OBJECTS records, as
	// writers before them did (for readers that predate them, and for
	// tests of such files). Set it before the first record.
	NoObjectRuns bool
	inObjects    bool   // buf holds the object records of a run, not yet framed
	blocks       []byte // the records before the run (buf while no run is open)
	spare        []byte // the run buffer, while no run is open
	objFirst     uint64 // records before the run: it holds records-objFirst
	objSize      uint64 // the bytes they take in the HPROF

	arrayLeft uint64 // elements of an object array begun (BeginObjectArray) still to come
	arraySelf uint64 // that array's object ID

	// Counts and bytes written per record kind, for statistics.
	Count [maxKind + 1]uint64
	Bytes [maxKind + 1]uint64
}

// NewWriter writes the version 2 header with metadata m (which sets
// Blocks) and returns a Writer. m.Classes must count the class records
// the file will define: objects are numbered after them.
func NewWriter(w io.Writer, m *Metadata) (*Writer, error) {
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("bmd: %v", err)
	}
	mm := *m
	mm.Blocks = true
	bw := &Writer{w: w, buf: make([]byte, 0, 2*BlockSize), classes: m.Classes, nextID: m.Classes + 1, maxID: m.Classes, canPlace: m.ClassesPlaced}
	bw.lay.idSize = m.IDSize
	meta := AppendMetadata(nil, &mm)
	h := protowire.AppendVarint(nil, Version2)
	h = protowire.AppendVarint(h, uint64(len(meta)))
	h = append(h, meta...)
	h = binary.LittleEndian.AppendUint64(h, xxhash.Sum64(h))
	bw.header = len(h)
	bw.out = append(bw.out, h...)
	return bw, bw.flushIf()
}

// flushIf cuts full blocks out of the buffered records, and writes them
// when there are enough.
func (w *Writer) flushIf() error {
	if w.inObjects {
		if len(w.buf) < maxRunBytes {
			return w.err
		}
		w.endObjects()
	}
	// A large record fills many blocks at once: cut them at a moving
	// offset and move the rest down once, not once per block.
	cut := 0
	for len(w.buf)-cut >= BlockSize && w.err == nil {
		w.out = appendBlock(w.out, w.buf[cut:cut+BlockSize])
		cut += BlockSize
		if len(w.out) >= 4*BlockSize {
			w.writeOut()
		}
	}
	if cut > 0 {
		w.buf = append(w.buf[:0], w.buf[cut:]...)
	}
	if len(w.out) >= 4*BlockSize {
		w.writeOut()
	}
	return w.err
}

func (w *Writer) writeOut() {
	if w.err == nil && len(w.out) > 0 {
		var n int
		n, w.err = w.w.Write(w.out)
		w.written += int64(n)
		w.out = w.out[:0]
	}
}

// Flush writes what is buffered to the underlying writer, the records not
// yet in a block as a shorter block. (Close does it; flushing more often
// makes more blocks.)
func (w *Writer) Flush() error {
	if w.runCount > 0 {
		w.flushRun()
	}
	if w.inObjects {
		w.endObjects()
	}
	w.flushIf()
	if len(w.buf) > 0 && w.err == nil {
		w.out = appendBlock(w.out, w.buf)
		w.buf = w.buf[:0]
	}
	w.writeOut()
	return w.err
}

// Written returns the bytes written to the underlying writer so far.
func (w *Writer) Written() int64 { return w.written }

// Err returns the first error the Writer met.
func (w *Writer) Err() error { return w.err }

func (w *Writer) begin(k Kind) int {
	if w.arrayLeft > 0 {
		w.unfinishedArray()
	}
	if w.runCount > 0 {
		w.flushRun()
	}
	if w.inObjects {
		w.endObjects()
	}
	start := len(w.buf)
	w.buf = append(w.buf, byte(k)) // every kind is below 128: a one-byte varint
	return start
}

// An OBJECTS record frames a run of object records (spec/bmd.md §5.25):
// the Writer collects the records of a run in a buffer of their own, and
// writes them after the record when the run ends, at the next record of
// another kind, or when it holds maxRunBytes. A run shorter than
// minRunBytes is written without a record: a reader decodes it anyway,
// which costs less than the record's bytes.
const maxRunBytes = 64 << 10

var minRunBytes = 256 // a variable for tests

// beginObject is begin for an object record, which goes in the open run
// of object records, or opens one. (Small enough to inline.)
func (w *Writer) beginObject(k Kind) int {
	if !w.inObjects {
		w.openObjects()
	}
	start := len(w.buf)
	w.buf = append(w.buf, byte(k))
	return start
}

// openObjects opens a run of object records, unless NoObjectRuns.
func (w *Writer) openObjects() {
	if w.arrayLeft > 0 {
		w.unfinishedArray()
	}
	if w.runCount > 0 {
		w.flushRun()
	}
	if !w.NoObjectRuns {
		w.blocks, w.buf, w.spare = w.buf, w.spare[:0], nil
		w.inObjects, w.objFirst = true, w.records
	}
}

// endObjects ends the open run of object records: writes its OBJECTS
// record, unless the run is short, and its records.
func (w *Writer) endObjects() {
	run := w.buf
	w.buf, w.blocks, w.inObjects = w.blocks, nil, false
	if len(run) >= minRunBytes {
		start := len(w.buf)
		w.buf = append(w.buf, byte(KindObjects))
		w.uv(uint64(len(run)))
		w.uv(w.records - w.objFirst)
		w.uv(w.objSize)
		w.Count[KindObjects]++
		w.Bytes[KindObjects] += uint64(len(w.buf) - start)
	}
	w.buf = append(w.buf, run...)
	w.spare, w.objSize = run[:0], 0
}

// objectData adds the HPROF bytes of an object record (its instance
// data, or its elements) to the open run, if any.
func (w *Writer) objectData(n uint64) {
	if w.inObjects {
		w.objSize += n
	}
}

func (w *Writer) end(k Kind, start int) error {
	w.Count[k]++
	w.Bytes[k] += uint64(len(w.buf) - start)
	if w.inObjects && len(w.buf) < maxRunBytes { // flushIf's usual case
		return w.err
	}
	return w.flushIf()
}

// uv appends v as a varint (appendUvarint).
func (w *Writer) uv(v uint64) { w.buf = appendUvarint(w.buf, v) }

// ref appends a reference relative to self: 0 for null, else
// zigzag(target-self)+1 (spec/bmd.md §2.4). A target exactly 2^63 away
// has no encoding (it would wrap to 0, null): that is an error.
func (w *Writer) ref(target, self uint64) {
	if target == 0 {
		w.buf = append(w.buf, 0)
		return
	}
	z := protowire.EncodeZigZag(int64(target - self))
	if z == math.MaxUint64 {
		w.fail("reference from object %d to object %d cannot be encoded", self, target)
	}
	w.uv(z + 1)
}

// ClearString writes a STRING record, a name in the clear, and returns its
// string ID (HashedString writes a hashed one). The record stores how many
// leading bytes (up to MaxSharedPrefix) the text shares with the previous
// clear string, then the rest: names written in order share long prefixes
// ("android.view.View", "android.view.View$OnClickListener").
func (w *Writer) ClearString(text []byte) (uint64, error) {
	s := w.begin(KindString)
	p := 0
	for p < len(text) && p < len(w.lastText) && p < MaxSharedPrefix && text[p] == w.lastText[p] {
		p++
	}
	w.uv(uint64(p))
	w.uv(uint64(len(text) - p))
	w.buf = append(w.buf, text[p:]...)
	w.lastText = append(w.lastText[:0], text...)
	w.strings++
	return w.strings, w.end(KindString, s)
}

// HashedString writes a name as its UTF-8 byte length and xxhash64, and
// returns its string ID. Consecutive hashed strings share one record.
func (w *Writer) HashedString(length uint64, hash uint64) (uint64, error) {
	w.startRun(KindHashedString, 0)
	w.run = protowire.AppendVarint(w.run, length)
	w.run = binary.LittleEndian.AppendUint64(w.run, hash)
	w.runCount++
	w.strings++
	if len(w.run) >= 1<<16 {
		w.flushRun()
	}
	return w.strings, w.flushIf()
}

// ArrayName writes the name of an array class as the string ID of its
// element class's name, its dimensions (1 to 255) and its spelling
// (descriptor "[Lelem;" or source "elem[]"), and returns its string ID.
// The element name must be an earlier string.
func (w *Writer) ArrayName(elem uint64, dims uint8, descriptor bool) (uint64, error) {
	if elem == 0 || elem > w.strings || dims == 0 {
		return 0, w.fail("array name of string %d with %d dimensions (%d strings written)", elem, dims, w.strings)
	}
	s := w.begin(KindArrayName)
	w.uv(elem)
	d := uint64(dims) << 1
	if descriptor {
		d |= 1
	}
	w.uv(d)
	w.strings++
	return w.strings, w.end(KindArrayName, s)
}

// startRun makes sure the pending run is of kind k (and root kind rk).
func (w *Writer) startRun(k Kind, rk uint8) {
	if w.arrayLeft > 0 { // a run is written at a later record, or when it is full: it may be within the array
		w.unfinishedArray()
	}
	if w.runCount > 0 && (w.runKind != k || w.runRoot != rk) {
		w.flushRun()
	}
	if w.inObjects {
		w.endObjects()
	}
	w.runKind, w.runRoot = k, rk
}

func (w *Writer) flushRun() {
	if w.runKind == KindRoot {
		w.encodeRoots()
	}
	start := len(w.buf)
	w.buf = append(w.buf, byte(w.runKind))
	if w.runKind == KindRoot {
		w.buf = append(w.buf, w.runRoot)
	}
	w.uv(w.runCount)
	w.buf = append(w.buf, w.run...)
	w.Count[w.runKind] += w.runCount
	w.Bytes[w.runKind] += uint64(len(w.buf) - start)
	w.run, w.runCount = w.run[:0], 0
}

// delta appends v as a zigzag delta from *last (spec/bmd.md §2.2), and
// sets *last to v.
func (w *Writer) delta(v uint64, last *uint64) {
	w.uv(protowire.EncodeZigZag(int64(v - *last)))
	*last = v
}

// LoadClass writes a LOAD CLASS: class serial, class object ID, stack trace
// serial and name string ID.
func (w *Writer) LoadClass(serial uint32, class uint64, trace uint32, name uint64) error {
	s := w.begin(KindLoadClass)
	w.uv(protowire.EncodeZigZag(int64(serial) - int64(w.lastSerial)))
	w.delta(class, &w.lastLoaded)
	w.uv(uint64(trace))
	w.delta(name, &w.lastName)
	w.lastSerial = serial
	return w.end(KindLoadClass, s)
}

// UnloadClass writes an UNLOAD CLASS.
func (w *Writer) UnloadClass(serial uint32) error {
	s := w.begin(KindUnloadClass)
	w.uv(uint64(serial))
	return w.end(KindUnloadClass, s)
}

// StackFrame writes a STACK FRAME and returns its frame ID.
func (w *Writer) StackFrame(method, signature, source uint64, classSerial uint32, line int32) (uint64, error) {
	s := w.begin(KindStackFrame)
	w.uv(method)
	w.uv(signature)
	w.uv(source)
	w.uv(uint64(classSerial))
	w.uv(protowire.EncodeZigZag(int64(line)))
	w.frames++
	return w.frames, w.end(KindStackFrame, s)
}

// StackTrace writes a STACK TRACE of frame IDs.
func (w *Writer) StackTrace(serial, thread uint32, frames []uint64) error {
	s := w.begin(KindStackTrace)
	w.uv(uint64(serial))
	w.uv(uint64(thread))
	w.uv(uint64(len(frames)))
	for _, f := range frames {
		w.uv(f)
	}
	return w.end(KindStackTrace, s)
}

// StartThread writes a START THREAD.
func (w *Writer) StartThread(serial uint32, object uint64, trace uint32, name, group, parent uint64) error {
	s := w.begin(KindStartThread)
	w.uv(uint64(serial))
	w.uv(object)
	w.uv(uint64(trace))
	w.uv(name)
	w.uv(group)
	w.uv(parent)
	return w.end(KindStartThread, s)
}

// EndThread writes an END THREAD.
func (w *Writer) EndThread(serial uint32) error {
	s := w.begin(KindEndThread)
	w.uv(uint64(serial))
	return w.end(KindEndThread, s)
}

// RawRecord writes a top-level HPROF record whose body is kept unchanged.
func (w *Writer) RawRecord(tag uint8, body []byte) error {
	if rawTagHasKind(tag) {
		return w.fail("raw record with HPROF tag 0x%02X, which has its own record kind", tag)
	}
	s := w.begin(KindRawRecord)
	w.uv(uint64(tag))
	w.uv(uint64(len(body)))
	w.buf = append(w.buf, body...)
	return w.end(KindRawRecord, s)
}

// Time sets the time field of the top-level records that follow; it writes
// a record only when the time changes.
func (w *Writer) Time(t uint32) error {
	if t == w.time {
		return w.err
	}
	s := w.begin(KindTime)
	w.uv(uint64(t))
	w.time = t
	return w.end(KindTime, s)
}

// HeapDump starts a heap dump record: a HEAP DUMP SEGMENT if segment, else
// a HEAP DUMP.
func (w *Writer) HeapDump(segment bool) error {
	s := w.begin(KindHeapDump)
	if segment {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
	return w.end(KindHeapDump, s)
}

// HeapDumpEnd writes a HEAP DUMP END.
func (w *Writer) HeapDumpEnd() error {
	s := w.begin(KindHeapDumpEnd)
	return w.end(KindHeapDumpEnd, s)
}

// Trace sets the stack trace serial of the object records that follow; it
// writes a record only when the serial changes.
func (w *Writer) Trace(serial uint32) error {
	if serial == w.trace { // the usual case, before each object: inlined
		return w.err
	}
	return w.newTrace(serial)
}

func (w *Writer) newTrace(serial uint32) error {
	s := w.begin(KindTrace)
	w.uv(uint64(serial))
	w.trace = serial
	return w.end(KindTrace, s)
}

func (w *Writer) value(t Type, v uint64) {
	switch t {
	case Boolean, Byte, Char, Short:
		w.uv(v)
	case Int:
		w.uv(protowire.EncodeZigZag(int64(int32(uint32(v)))))
	case Long:
		w.uv(protowire.EncodeZigZag(int64(v)))
	case Float:
		w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(v))
	case Double:
		w.buf = binary.LittleEndian.AppendUint64(w.buf, v)
	}
}

func typeKept(t Type, kept bool) uint64 {
	k := uint64(0)
	if kept || t == Object {
		k = 1
	}
	return uint64(t)<<1 | k
}

// Class writes a class definition of class c.Index (from 1 to the
// metadata's class count), which is also its object ID, and returns it.
// Classes may be defined in any order, anywhere in the file, but before
// their instances and their place (PlaceClasses); a class of the chain of
// an instance must be defined before it. With c.Redump, the record is
// another dump of a class already defined (a file with several heap
// dumps), with the same super class and instance fields.
func (w *Writer) Class(c *Class) (uint64, error) {
	switch {
	case c.Index == 0 || c.Index > w.classes:
		return 0, w.fail("class index %d (the metadata counts %d classes)", c.Index, w.classes)
	case c.Redump && !w.lay.same(c):
		return 0, w.fail("another dump of class %d, not defined or with another layout", c.Index)
	case !c.Redump && w.lay.defined(c.Index):
		return 0, w.fail("class %d defined twice", c.Index)
	}
	if err := w.checkTypes(c); err != nil {
		return 0, err
	}
	step := protowire.EncodeZigZag(int64(c.Index - w.lastClass))
	if step >= 1<<63 { // no room for the redump flag (spec/bmd.md §5.13)
		return 0, w.fail("class index %d after class %d: too far apart to encode", c.Index, w.lastClass)
	}
	s := w.begin(KindClass)
	self := c.Index
	flag := uint64(0)
	if c.Redump {
		flag = 1
	}
	w.uv(step<<1 | flag)
	w.lastClass = c.Index
	w.uv(uint64(c.StackTrace))
	w.ref(c.Super, self)
	for i, r := range [...]uint64{c.Loader, c.Signers, c.ProtectionDomain, c.Reserved1, c.Reserved2} {
		w.delta(r, &w.lastCls[i])
	}
	w.uv(uint64(c.InstanceSize))
	w.uv(uint64(len(c.Constants)))
	for _, k := range c.Constants {
		w.uv(uint64(k.Index))
		w.uv(typeKept(k.Type, k.Kept))
		w.fieldValue(k.Type, k.Kept, k.Value, self)
	}
	w.uv(uint64(len(c.Statics)))
	for _, f := range c.Statics {
		w.delta(f.Name, &w.lastName)
		w.uv(typeKept(f.Type, f.Kept))
		w.fieldValue(f.Type, f.Kept, f.Value, self)
	}
	w.uv(uint64(len(c.Fields)))
	for _, f := range c.Fields {
		w.delta(f.Name, &w.lastName)
		w.uv(typeKept(f.Type, f.Kept))
	}
	w.records++
	if !c.Redump {
		w.lay.add(c)
	}
	return self, w.end(KindClass, s)
}

// checkTypes fails on a member of c whose type is not one of the nine
// type codes, which a reader refuses (spec/bmd.md §2.7).
func (w *Writer) checkTypes(c *Class) error {
	bad := func(what string, t Type) error {
		return w.fail("class %d: %s of invalid type %d", c.Index, what, t)
	}
	for _, k := range c.Constants {
		if !k.Type.Valid() {
			return bad("a constant", k.Type)
		}
	}
	for _, f := range c.Statics {
		if !f.Type.Valid() {
			return bad("a static field", f.Type)
		}
	}
	for _, f := range c.Fields {
		if !f.Type.Valid() {
			return bad("an instance field", f.Type)
		}
	}
	return nil
}

// fieldValue writes the value of a constant or static: a reference for an
// object, the value if kept, else nothing.
func (w *Writer) fieldValue(t Type, kept bool, v, self uint64) {
	if t == Object {
		w.ref(v, self)
	} else if kept {
		w.value(t, v)
	}
}

// fail records an error, unless one is already recorded, and returns the
// first.
func (w *Writer) fail(format string, a ...any) error {
	if w.err == nil {
		w.err = fmt.Errorf("bmd: %s", fmt.Sprintf(format, a...))
	}
	return w.err
}

// Defined reports whether class idx is defined.
func (w *Writer) Defined(idx uint64) bool { return w.lay.defined(idx) }

// Layout returns the instance fields of class idx and of its superclasses,
// in the order INSTANCE values are given.
func (w *Writer) Layout(idx uint64) ([]Field, bool) {
	f, ok, missing := w.lay.chain(idx, w.classes)
	return f, ok && missing == 0
}

// ObjectID sets the ID of the next object record: another dump of an
// object written before (a file with several heap dumps), or the next new
// object. It writes an OBJECT ID record only when id is not the ID the
// next record would take anyway.
func (w *Writer) ObjectID(id uint64) error {
	if id == w.nextID {
		return w.err
	}
	w.maxID = max(w.maxID, w.nextID-1)
	if id <= w.classes || id > w.maxID+1 {
		return w.fail("object ID %d (objects are %d to %d)", id, w.classes+1, w.maxID+1)
	}
	s := w.begin(KindObjectID)
	w.uv(protowire.EncodeZigZag(int64(id - w.nextID)))
	w.nextID = id
	return w.end(KindObjectID, s)
}

// NextID returns the object ID that the next object record takes.
func (w *Writer) NextID() uint64 { return w.nextID }

// object gives the next object record its ID.
func (w *Writer) object() uint64 {
	id := w.nextID
	w.nextID++
	w.records++
	return id
}

// Instance writes an INSTANCE DUMP of the given class and returns its object
// ID. values holds one value per field of Layout(class): object IDs for
// object fields, value bits for primitives (ignored when not kept).
func (w *Writer) Instance(class uint64, values []uint64) (uint64, error) {
	ch, ok, missing := w.lay.chain(class, w.classes)
	if err := w.checkInstance(class, ok, missing, len(values), len(ch), "fields"); err != nil {
		return 0, err
	}
	w.kept = w.kept[:0]
	for i, f := range ch {
		if f.Type == Object || f.Kept {
			w.kept = append(w.kept, values[i])
		}
	}
	return w.InstanceKept(class, w.kept)
}

// InstanceKept is Instance given only the values the file keeps: one per
// object field and kept primitive field of Layout(class), in order, where
// Instance takes one per field and ignores the values of the others. A
// caller that decodes an instance's values itself need not decode those.
//
// Most instances are of a class defined, its layout flattened (kept),
// with the values it takes: InstanceKept writes them looking at the
// layout's fields in place, where the values that written returned were
// saved and restored around the calls after. It is not inlined: in its
// callers, where the profile (PGO) would inline it, the calls it makes
// were not inlined in turn, and crunch ran 2 % more instructions. (The
// profile finds its hot calls by their lines from the function's first:
// the call to end, at the 16th, is inlined.)
//
//go:noinline
func (w *Writer) InstanceKept(class uint64, kept []uint64) (uint64, error) {
	c := w.lay.get(class)
	if c == nil || c.chain == nil || len(kept) != len(c.written) {
		return w.instanceKept(class, kept)
	}
	s := w.beginObject(KindInstance)
	w.objectData(uint64(c.size))
	self := w.object()
	w.uv(class)
	if c.refs {
		// Most classes, by default: their values are references
		// alone, written without looking at their types.
		w.buf = w.appendRefs(w.buf, kept, self)
	} else {
		w.values(c.written, kept, self)
	}
	return self, w.end(KindInstance, s)
}

// instanceKept is InstanceKept for any class: one whose layout is not
// kept, or an error.
func (w *Writer) instanceKept(class uint64, kept []uint64) (uint64, error) {
	ts, size, _, ok, missing := w.lay.written(class, w.classes)
	if err := w.checkInstance(class, ok, missing, len(kept), len(ts), "fields kept"); err != nil {
		return 0, err
	}
	s := w.beginObject(KindInstance)
	w.objectData(uint64(size))
	self := w.object()
	w.uv(class)
	w.values(ts, kept, self)
	return self, w.end(KindInstance, s)
}

// values writes the values kept of an instance self, of types ts.
func (w *Writer) values(ts []Type, kept []uint64, self uint64) {
	kept = kept[:len(ts)]
	for i, t := range ts {
		if t == Object {
			w.ref(kept[i], self)
		} else {
			w.value(t, kept[i])
		}
	}
}

// checkInstance checks that an instance of class can be written with n
// values, its layout (ok and missing from layouts.chain) having want.
func (w *Writer) checkInstance(class uint64, ok bool, missing uint64, n, want int, what string) error {
	switch {
	case missing != 0:
		return w.fail("instance of class %d, whose super class %d is not defined", class, missing)
	case !ok:
		return w.fail("instance of undefined class %d", class)
	case n != want:
		return w.fail("instance of class %d has %d values for %d %s", class, n, want, what)
	}
	return nil
}

// ObjectArray writes an OBJECT ARRAY DUMP and returns its object ID. class
// is the dense object ID of the array class.
func (w *Writer) ObjectArray(class uint64, elems []uint64) (uint64, error) {
	s := w.beginObject(KindObjectArray)
	w.objectData(elementBytes(Object, uint64(len(elems)), w.lay.idSize))
	self := w.object()
	w.arrayHead(class, uint64(len(elems)), self)
	w.refs(elems, self)
	return self, w.end(KindObjectArray, s)
}

// arrayHead writes what an OBJECT ARRAY DUMP of n elements has before its
// elements: its class, as an index or a reference, and n.
func (w *Writer) arrayHead(class, n, self uint64) {
	if class != 0 && w.lay.defined(class) {
		w.uv(class)
	} else {
		w.uv(0)
		w.ref(class, self)
	}
	w.uv(n)
}

// refs writes the elements of the object array self.
func (w *Writer) refs(elems []uint64, self uint64) {
	w.buf = w.appendRefs(w.buf, elems, self)
}

// appendRefs appends to buf the references targets of object self, each
// as ref writes it, failing the Writer if one has no encoding.
func (w *Writer) appendRefs(buf []byte, targets []uint64, self uint64) []byte {
	buf, ok := appendRefs(buf, targets, self)
	if !ok {
		for _, t := range targets {
			if t != 0 && protowire.EncodeZigZag(int64(t-self)) == math.MaxUint64 {
				w.fail("reference from object %d to object %d cannot be encoded", self, t)
				break
			}
		}
	}
	return buf
}

// appendRefs appends to buf the references targets of object self, each
// as ref writes it, and reports whether all have an encoding (one that
// has none is written as 0). It is ref and uv written out over a local
// slice: ref and uv load and store w.buf for each byte, and uv was a call
// per reference (a third fewer instructions for crunch's writer).
func appendRefs(buf []byte, targets []uint64, self uint64) (_ []byte, ok bool) {
	ok = true
	for _, t := range targets {
		if t == 0 {
			buf = append(buf, 0)
			continue
		}
		z := protowire.EncodeZigZag(int64(t-self)) + 1 // 0: no encoding
		switch {
		case z-1 < 0x7f: // 1 to 0x7f
			buf = append(buf, byte(z))
		case z-1 < 1<<14-1: // 0x80 to 0x3fff
			buf = append(buf, byte(z)|0x80, byte(z>>7))
		case z-1 < 1<<21-1: // three and four bytes: AppendVarint is not inlined
			buf = append(buf, byte(z)|0x80, byte(z>>7)|0x80, byte(z>>14))
		case z-1 < 1<<28-1:
			buf = append(buf, byte(z)|0x80, byte(z>>7)|0x80, byte(z>>14)|0x80, byte(z>>21))
		default:
			ok = ok && z != 0
			buf = protowire.AppendVarint(buf, z)
		}
	}
	return buf, ok
}

// BeginObjectArray begins an OBJECT ARRAY DUMP of n elements, which
// ObjectArrayElements then writes, in order and in pieces of any size, and
// returns its object ID: for an array too large to hold whole, which the
// Writer does not hold whole either. The record stands outside any run of
// objects (an OBJECTS record gives the length of its run, which would have
// to be known before the array's first element is written). Until its n
// elements are written, writing any other record is an error.
func (w *Writer) BeginObjectArray(class, n uint64) (uint64, error) {
	s := w.begin(KindObjectArray) // ends the run of objects, if one is open
	self := w.object()
	w.arrayHead(class, n, self)
	w.arraySelf, w.arrayLeft = self, n
	w.Bytes[KindObjectArray] += uint64(len(w.buf) - s)
	if n == 0 {
		w.Count[KindObjectArray]++
	}
	return self, w.flushIf()
}

// ObjectArrayElements writes the next elements of the object array that
// BeginObjectArray began: dense object IDs, 0 for null.
func (w *Writer) ObjectArrayElements(elems []uint64) error {
	if uint64(len(elems)) > w.arrayLeft {
		return w.fail("%d object array elements given, %d left to write", len(elems), w.arrayLeft)
	}
	s := len(w.buf)
	w.refs(elems, w.arraySelf)
	w.arrayLeft -= uint64(len(elems))
	w.Bytes[KindObjectArray] += uint64(len(w.buf) - s)
	if w.arrayLeft == 0 && len(elems) > 0 {
		w.Count[KindObjectArray]++
	}
	return w.flushIf()
}

// unfinishedArray fails the Writer: a record is begun before the object
// array that BeginObjectArray began has its elements.
func (w *Writer) unfinishedArray() {
	w.fail("a record written while %d elements of the object array %d are still to come", w.arrayLeft, w.arraySelf)
}

// PrimitiveArray writes a PRIMITIVE ARRAY DUMP (or, with noData, Android's
// PRIMITIVE ARRAY NODATA) as its element type and length, and returns its
// object ID. The type must be a primitive one.
func (w *Writer) PrimitiveArray(t Type, length uint32, noData bool) (uint64, error) {
	if !t.Valid() || t == Object { // the reader refuses it (spec/bmd.md §5.16)
		return 0, w.fail("primitive array of invalid element type %d", t)
	}
	k := KindPrimitiveArray
	if noData {
		k = KindPrimitiveNoData
	}
	s := w.beginObject(k)
	if !noData { // NODATA: no elements in the HPROF either
		w.objectData(elementBytes(t, uint64(length), w.lay.idSize))
	}
	id := w.object()
	w.buf = append(w.buf, byte(t))
	w.uv(uint64(length))
	return id, w.end(k, s)
}

// Root writes a GC root of the given HPROF kind (or UNREACHABLE). thread,
// frame, jniRef and trace are written for the kinds that have them.
// Consecutive roots of one kind share a record, in which they are stored
// sorted by object ID (the order of roots means nothing to a heap walk, and
// sorted IDs make small deltas).
func (w *Writer) Root(kind uint8, object uint64, thread, frame uint32, jniRef uint64, trace uint32) error {
	if !RootKindValid(kind) {
		return w.fail("invalid root kind 0x%02X", kind)
	}
	w.startRun(KindRoot, kind)
	w.roots = append(w.roots, rootEntry{object, jniRef, thread, frame, trace, uint32(len(w.roots))})
	w.runCount++
	if len(w.roots) >= maxRootRun {
		w.flushRun()
	}
	return w.flushIf()
}

// maxRootRun bounds the roots a Writer holds before writing them.
const maxRootRun = 1 << 13

type rootEntry struct {
	object, jniRef       uint64
	thread, frame, trace uint32
	seq                  uint32 // its place among the roots held, which orders roots of one object
}

// encodeRoots sorts the pending roots by object and appends them to w.run.
// Roots of one object keep the order they came in (seq), as in a stable
// sort. slices.SortStableFunc, which sorts in place in O(n log² n) swaps
// of 32 bytes, took a quarter of crunch's time on a dump of 410,199 roots
// (docs/measurements.md, "An Android-shaped dump of 134 MB").
// The keys, the object above seq, are sorted a byte at a time (radixSort):
// BenchmarkWriterRoots wrote a root in 251 ns with SortStableFunc, 170 ns
// with the entries sorted by slices.SortFunc and seq breaking ties, 71 ns
// with the keys sorted by slices.Sort, and 30 ns with radixSort.
func (w *Writer) encodeRoots() {
	rs := w.roots
	keys := w.rootKeys[:0]
	for _, r := range rs {
		if r.object >= 1<<(64-rootSeqBits) {
			keys = nil // an ID too large to share a key with seq
			break
		}
		keys = append(keys, r.object<<rootSeqBits|uint64(r.seq))
	}
	if keys != nil {
		keys, w.rootTmp = radixSort(keys, w.rootTmp)
		w.rootKeys = keys
		w.encodeRootsIn(func(i int) *rootEntry { return &rs[keys[i]&(1<<rootSeqBits-1)] })
	} else {
		slices.SortFunc(rs, func(a, b rootEntry) int {
			if c := cmp.Compare(a.object, b.object); c != 0 {
				return c
			}
			return cmp.Compare(a.seq, b.seq)
		})
		w.encodeRootsIn(func(i int) *rootEntry { return &rs[i] })
	}
	w.roots = rs[:0]
}

// rootSeqBits is the bits a root's seq takes in its sort key.
const rootSeqBits = 13

// radixSort sorts keys a byte at a time from the lowest, through tmp,
// skipping the bytes that all keys share, and returns them sorted and the
// other buffer for the next call.
func radixSort(keys, tmp []uint64) (sorted, spare []uint64) {
	tmp = slices.Grow(tmp[:0], len(keys))[:len(keys)]
	var or, and uint64 = 0, ^uint64(0)
	for _, k := range keys {
		or |= k
		and &= k
	}
	for shift := 0; shift < 64; shift += 8 {
		if (or^and)>>shift&0xFF == 0 {
			continue // every key has this byte
		}
		var count [256]int
		for _, k := range keys {
			count[k>>shift&0xFF]++
		}
		at := 0
		for i, c := range count {
			count[i] = at
			at += c
		}
		for _, k := range keys {
			d := k >> shift & 0xFF
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys, tmp
}

// encodeRootsIn appends the pending roots to w.run, the ith of them at(i).
func (w *Writer) encodeRootsIn(at func(i int) *rootEntry) {
	a := func(v uint64) { w.run = protowire.AppendVarint(w.run, v) }
	for i := range len(w.roots) {
		r := at(i)
		a(protowire.EncodeZigZag(int64(r.object - w.lastRoot)))
		w.lastRoot = r.object
		switch w.runRoot {
		case rootJNIGlobal:
			a(protowire.EncodeZigZag(int64(r.jniRef - w.lastJNI)))
			w.lastJNI = r.jniRef
		case rootJNILocal, rootJavaFrame, rootJNIMonitor:
			a(uint64(r.thread))
			a(uint64(r.frame + 1)) // -1 (no frame) becomes 0
		case rootNativeStack, rootThreadBlock:
			a(uint64(r.thread))
		case rootThreadObject:
			a(uint64(r.thread))
			a(uint64(r.trace))
		}
	}
}

// PlaceClasses records that the next n classes in index order (the first
// n not yet placed) were dumped at this point among the other heap
// records; they must be defined. A file whose metadata sets ClassesPlaced
// places every class.
func (w *Writer) PlaceClasses(n uint64) error {
	if n == 0 { // crunch asks before each object: kept small enough to inline
		return w.err
	}
	return w.placeClasses(n)
}

func (w *Writer) placeClasses(n uint64) error {
	if !w.canPlace { // a reader refuses it (spec/bmd.md §5.22)
		return w.fail("PLACE CLASSES in a file whose metadata does not set classes_placed")
	}
	if w.placed+n > w.classes {
		return w.fail("%d classes placed, %d in the file", w.placed+n, w.classes)
	}
	for i := w.placed + 1; i <= w.placed+n; i++ {
		if !w.lay.defined(i) {
			return w.fail("class %d placed before it is defined", i)
		}
	}
	s := w.begin(KindPlaceClasses)
	w.uv(n)
	w.placed += n
	return w.end(KindPlaceClasses, s)
}

// HeapInfo writes Android's HEAP DUMP INFO: the heap type and its name's
// string ID.
func (w *Writer) HeapInfo(heapType uint32, name uint64) error {
	s := w.begin(KindHeapInfo)
	w.uv(uint64(heapType))
	w.uv(name)
	return w.end(KindHeapInfo, s)
}

// Close writes the END record, which tells a reader the file is complete,
// and flushes. It does not close the underlying writer.
func (w *Writer) Close() error {
	s := w.begin(KindEnd)
	w.uv(w.records)
	w.uv(w.strings)
	w.end(KindEnd, s)
	return w.Flush()
}

// Objects returns the number of object records written (classes included).
func (w *Writer) Objects() uint64 { return w.records }

// maxRootRun's roots are numbered by seq in rootSeqBits bits.
var _ [1<<rootSeqBits - maxRootRun]struct{}
