package hprof

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"
)

// DefaultSegmentSize is the largest heap dump record body the Writer
// buffers before it starts a new HEAP DUMP SEGMENT. 1 MiB keeps decrunch's
// memory small and its time too: on the BMD of a generated 134 MB dump
// (2026-12-02, five runs each) decrunch took 0.13 to 0.15 s and 12 MB
// peak RSS with 1 MiB, 0.14 to 0.16 s and 13 MB with 2 MiB, 0.24 to
// 0.26 s and 19 MB with 8 MiB (a third of it the system's time, page
// faults that cost several times more with both cores in use); a 32 MiB
// buffer cost 119 MB. Analyzers read any number of segments.
const DefaultSegmentSize = 1 << 20

// Writer writes an HPROF file. Top-level records are written with
// WriteRecord; heap sub-records go between BeginHeapDump and EndHeapDump with
// WriteSub, or, for the instances and object arrays that are most of a
// heap, with Instance and ObjectArray, which return the room of their data
// for the caller to fill. The Writer buffers sub-records and cuts the heap dump into
// records of at most SegmentSize bytes (a single larger sub-record gets a
// record of its own), so any heap size gives a valid file. A HEAP DUMP (0x0C)
// that outgrows one record is written as HEAP DUMP SEGMENTs closed by a
// HEAP DUMP END. Call Flush at the end.
type Writer struct {
	// SegmentSize bounds the body of each heap dump record written; it
	// must be set before the first BeginHeapDump. Zero means
	// DefaultSegmentSize.
	SegmentSize int

	bw     *bufio.Writer
	enc    BodyEncoder
	idSize int
	err    error

	inHeap    bool
	heapTag   Tag
	heapTime  uint32
	split     bool // the current heap dump was cut (by size or by a top-level record)
	segmented bool // a HEAP DUMP's sub-records went out as HEAP DUMP SEGMENTs, which a HEAP DUMP END closes
	heapWrote bool // a record of the current heap dump was written
	// seg holds the sub-records of the heap dump record being made. Its
	// bytes past its length are zeros (emptySeg), so that Instance need
	// not clear the data it returns: clear cost 25 instructions an
	// instance, 2 % of decrunch's (cachegrind, the 134 MB dump's BMD).
	seg        []byte
	zero       []byte
	wroteBytes int64
	hdr        [RecordHeaderSize]byte // recordHeader's

	// limit is the length the segment may reach with the sub-records
	// that Instance, ObjectArray and ZeroArray put in place: the segment
	// size or its capacity, whichever is less, in a heap dump, with no
	// error and no object array in pieces under way; else 0. setLimit
	// keeps it, so that fits makes one test where it made six.
	limit int

	arrayLeft int    // elements of an object array begun (BeginObjectArray) still to come
	arrayRoom []byte // their room in the segment, or nil: the array has a record of its own
	piece     []byte // the IDs of one piece of such an array
}

// NewWriter writes the header h to w and returns a Writer.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if h.IDSize != 4 && h.IDSize != 8 {
		return nil, fmt.Errorf("hprof: identifier size %d is not supported (only 4 and 8)", h.IDSize)
	}
	if !strings.HasPrefix(h.Version, "JAVA PROFILE ") || strings.IndexByte(h.Version, 0) >= 0 || len(h.Version) > MaxVersionLen {
		return nil, fmt.Errorf("hprof: version %q is not \"JAVA PROFILE …\" (a Reader would refuse the file)", h.Version)
	}
	hw := &Writer{bw: bufio.NewWriterSize(w, 1<<20), enc: BodyEncoder{IDSize: h.IDSize}, idSize: h.IDSize}
	b := append([]byte(h.Version), 0)
	b = binary.BigEndian.AppendUint32(b, uint32(h.IDSize))
	b = binary.BigEndian.AppendUint64(b, h.Timestamp)
	hw.write(b)
	return hw, hw.err
}

// Encoder returns a BodyEncoder for the Writer's identifier size.
func (w *Writer) Encoder() BodyEncoder { return w.enc }

// Written returns the number of bytes written so far (buffered included).
func (w *Writer) Written() int64 { return w.wroteBytes }

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.bw.Write(b)
	w.wroteBytes += int64(len(b))
	if w.err != nil {
		w.limit = 0
	}
}

// setLimit sets limit from the Writer's state.
func (w *Writer) setLimit() {
	w.limit = 0
	if w.inHeap && w.err == nil && w.arrayLeft == 0 {
		w.limit = min(w.SegmentSize, cap(w.seg))
	}
}

// recordHeader writes a record's header. It is put together in the
// Writer's hdr: a local array escaped to the heap through bufio.Writer's
// Write, an allocation a record (27,000 a decrunch of the corpus's
// Android dialer dump, a third of its allocations).
func (w *Writer) recordHeader(tag Tag, time uint32, n uint64) {
	h := &w.hdr
	h[0] = byte(tag)
	binary.BigEndian.PutUint32(h[1:], time)
	binary.BigEndian.PutUint32(h[5:], uint32(n))
	w.write(h[:])
}

// WriteRecord writes a top-level record. If a heap dump is open, what it has
// buffered is written first and the dump stays open: a HEAP DUMP (0x0C) is
// then written as HEAP DUMP SEGMENTs closed by a HEAP DUMP END, since one
// heap dump cannot have top-level records inside it.
func (w *Writer) WriteRecord(tag Tag, time uint32, body []byte) error {
	if w.arrayLeft > 0 {
		return w.unfinishedArray()
	}
	if uint64(len(body)) > 0xFFFFFFFF {
		return errors.New("hprof: record body over 4 GiB")
	}
	if w.inHeap {
		w.split = true
		w.flushSegment()
	}
	w.recordHeader(tag, time, uint64(len(body)))
	w.write(body)
	return w.err
}

// BeginHeapDump opens a heap dump record with the given tag (TagHeapDump or
// TagHeapDumpSegment).
func (w *Writer) BeginHeapDump(tag Tag, time uint32) error {
	if w.arrayLeft > 0 {
		return w.unfinishedArray()
	}
	if !tag.IsHeapDump() {
		return fmt.Errorf("hprof: BeginHeapDump with tag %s", tag)
	}
	if w.inHeap {
		if err := w.EndHeapDump(); err != nil {
			return err
		}
	}
	if w.SegmentSize <= 0 {
		w.SegmentSize = DefaultSegmentSize
	}
	w.inHeap, w.heapTag, w.heapTime, w.split, w.segmented, w.heapWrote = true, tag, time, false, false, false
	w.emptySeg()
	w.setLimit()
	return w.err
}

// flushSegment writes the buffered sub-records as one record.
func (w *Writer) flushSegment() {
	if len(w.seg) == 0 {
		return
	}
	tag := w.heapTag
	if tag == TagHeapDump && w.split {
		tag, w.segmented = TagHeapDumpSegment, true
	}
	w.recordHeader(tag, w.heapTime, uint64(len(w.seg)))
	w.write(w.seg)
	w.emptySeg()
	w.heapWrote = true
}

// emptySeg empties the segment, zeroing the bytes it held (see seg).
func (w *Writer) emptySeg() {
	clear(w.seg)
	w.seg = w.seg[:0]
}

// EndHeapDump writes what is buffered and closes the heap dump. A HEAP DUMP
// that had to be written as segments gets its HEAP DUMP END here; segments
// opened with TagHeapDumpSegment are closed by the caller's own
// TagHeapDumpEnd record.
func (w *Writer) EndHeapDump() error {
	if w.arrayLeft > 0 {
		return w.unfinishedArray()
	}
	if !w.inHeap {
		return nil
	}
	if w.heapTag == TagHeapDump && w.split {
		w.flushSegment()
	}
	if w.segmented {
		w.recordHeader(TagHeapDumpEnd, w.heapTime, 0)
	} else if len(w.seg) > 0 || !w.heapWrote {
		// An empty HEAP DUMP (or HEAP DUMP SEGMENT) record is still
		// written, as itself, after any top-level records written
		// while it was open: its presence is data, and a HEAP DUMP
		// END would add an empty dump to the file.
		w.recordHeader(w.heapTag, w.heapTime, uint64(len(w.seg)))
		w.write(w.seg)
		w.emptySeg()
	}
	w.inHeap, w.limit = false, 0
	return w.err
}

// Flush closes any open heap dump and writes buffered data to the
// underlying writer.
func (w *Writer) Flush() error {
	if err := w.EndHeapDump(); err != nil {
		return err
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

func (w *Writer) id(b []byte, v uint64) []byte { return w.enc.AppendID(b, v) }

// WriteSub appends one sub-record to the open heap dump. A primitive array
// with nil Data is written with zero-filled elements of its type and length.
func (w *Writer) WriteSub(s *SubRecord) error {
	if w.arrayLeft > 0 {
		return w.unfinishedArray()
	}
	if !w.inHeap {
		return errors.New("hprof: WriteSub outside a heap dump")
	}
	if w.err != nil {
		return w.err
	}
	if c := &s.Class; s.Tag == SubClassDump && max(len(c.Constants), len(c.Statics), len(c.Fields)) > 0xFFFF {
		return fmt.Errorf("hprof: CLASS DUMP of class %#x with %d constants, %d static fields and %d instance fields: its counts hold 65535 at most",
			c.ID, len(c.Constants), len(c.Statics), len(c.Fields))
	}
	size := w.subSize(s)
	if size > 0xFFFFFFFF-16 {
		return fmt.Errorf("hprof: %s of %d bytes does not fit in one record", s.Tag, size)
	}
	if len(w.seg) > 0 && int64(len(w.seg))+size > int64(w.SegmentSize) {
		w.split = true
		w.flushSegment()
	}
	if s.Tag == SubPrimitiveArrayDump && s.Data == nil && size > int64(w.SegmentSize) {
		return w.writeZeroArray(s, size)
	}
	w.reserve(int(size))
	w.seg = w.appendSub(w.seg, s)
	return w.err
}

// subSize returns the size of s once written (for a root, an upper bound),
// to decide on cutting.
func (w *Writer) subSize(s *SubRecord) int64 {
	id := int64(w.idSize)
	switch s.Tag {
	case SubInstanceDump:
		return int64(w.objectHeaderSize()) + int64(len(s.Data))
	case SubObjectArrayDump:
		return int64(w.objectHeaderSize()) + int64(len(s.Elements))*id
	case SubPrimitiveArrayDump:
		return id + 10 + int64(s.Length)*int64(s.ElemType.Size(w.idSize))
	case SubClassDump:
		c := &s.Class
		return 7*id + 15 + int64(len(c.Constants))*11 + int64(len(c.Statics))*(2*id+1) + int64(len(c.Fields))*(id+1)
	}
	return 3*id + 9
}

// writeZeroArray streams a zero-filled primitive array of size bytes
// (larger than a segment) in a record of its own.
func (w *Writer) writeZeroArray(s *SubRecord, size int64) error {
	w.split, w.heapWrote = true, true
	tag := w.heapTag
	if tag == TagHeapDump {
		tag, w.segmented = TagHeapDumpSegment, true
	}
	w.recordHeader(tag, w.heapTime, uint64(size))
	head := w.appendPrimHeader(w.seg[:0], s) // in the empty segment's room
	w.write(head)
	clear(head)
	if w.zero == nil {
		w.zero = make([]byte, 64<<10)
	}
	for rem := size - int64(w.idSize+10); rem > 0; {
		k := min(int64(len(w.zero)), rem)
		w.write(w.zero[:k])
		rem -= k
	}
	return w.err
}

func (w *Writer) appendPrimHeader(b []byte, s *SubRecord) []byte {
	n := len(b)
	b = slices.Grow(b, w.idSize+10)[:n+w.idSize+10]
	w.putPrimitiveArrayHeader(b[n:], s.Tag, s.ID, s.StackTrace, s.Length, s.ElemType)
	return b
}

func appendValue(b []byte, t BasicType, v uint64, idSize int) []byte {
	switch t.Size(idSize) {
	case 1:
		return append(b, byte(v))
	case 2:
		return binary.BigEndian.AppendUint16(b, uint16(v))
	case 4:
		return binary.BigEndian.AppendUint32(b, uint32(v))
	case 8:
		return binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// objectHeaderSize is the size of the fixed part of an INSTANCE DUMP and
// of an OBJECT ARRAY DUMP, tag included: two IDs, the stack trace serial
// and a 4-byte size or length.
func (w *Writer) objectHeaderSize() int { return 2*w.idSize + 9 }

// putInstanceHeader puts the fixed part of an INSTANCE DUMP whose field
// data has size bytes at the start of b (objectHeaderSize bytes).
func (w *Writer) putInstanceHeader(b []byte, id uint64, stackTrace uint32, classID uint64, size int) {
	if w.idSize == 4 {
		b = b[:17]
		b[0] = byte(SubInstanceDump)
		binary.BigEndian.PutUint32(b[1:], uint32(id))
		binary.BigEndian.PutUint32(b[5:], stackTrace)
		binary.BigEndian.PutUint32(b[9:], uint32(classID))
		binary.BigEndian.PutUint32(b[13:], uint32(size))
		return
	}
	b = b[:25]
	b[0] = byte(SubInstanceDump)
	binary.BigEndian.PutUint64(b[1:], id)
	binary.BigEndian.PutUint32(b[9:], stackTrace)
	binary.BigEndian.PutUint64(b[13:], classID)
	binary.BigEndian.PutUint32(b[21:], uint32(size))
}

// Instance appends an INSTANCE DUMP to the open heap dump, as WriteSub
// would, with size bytes of field data, and returns those bytes, zeros,
// for the caller to fill before it next calls the Writer. A heap has
// millions of instances: this writes each without a SubRecord and
// without copying its data from another buffer, nor clearing it (see
// seg).
//
// The segment in a local, and makeRoom in a call of its own
// (roomForInstance), saved 11 of its 79 instructions (reloads of the
// segment after each store, arguments kept in memory for the call).
func (w *Writer) Instance(id uint64, stackTrace uint32, classID uint64, size int) ([]byte, error) {
	head := w.objectHeaderSize()
	if !w.fits(head, size, 1) {
		return w.roomForInstance(id, stackTrace, classID, size)
	}
	at, end := len(w.seg), len(w.seg)+head+size
	seg := w.seg[:end]
	w.seg = seg
	w.putInstanceHeader(seg[at:end], id, stackTrace, classID, size)
	return seg[at+head : end], nil
}

// roomForInstance is Instance when the instance does not fit in the
// segment as it is.
func (w *Writer) roomForInstance(id uint64, stackTrace uint32, classID uint64, size int) ([]byte, error) {
	head := w.objectHeaderSize()
	if err := w.makeRoom(head, size, 1, SubInstanceDump); err != nil {
		return nil, err
	}
	sub := w.grab(head + size) // not Instance again: a sub-record larger than a segment fits in none
	w.putInstanceHeader(sub, id, stackTrace, classID, size)
	return sub[head:], nil
}

// ZeroArray appends a PRIMITIVE ARRAY DUMP of length zeros of type t to
// the open heap dump, as WriteSub does one with nil Data. Those that fit
// in the segment, nearly all, are put in place, their zeros already there
// (see seg): through WriteSub, with a SubRecord and a clear, a primitive
// array took about 130 instructions more, 5 % of decrunch's (cachegrind,
// the 134 MB dump's BMD).
func (w *Writer) ZeroArray(id uint64, stackTrace uint32, length uint32, t BasicType) error {
	head, size := w.idSize+10, t.Size(w.idSize)
	if !w.fits(head, int(length), size) {
		return w.writeZeros(id, stackTrace, length, t)
	}
	at, end := len(w.seg), len(w.seg)+head+int(length)*size // as Instance does
	seg := w.seg[:end]
	w.seg = seg
	w.putPrimitiveArrayHeader(seg[at:end], SubPrimitiveArrayDump, id, stackTrace, length, t)
	return nil
}

// putPrimitiveArrayHeader puts the fixed part of a PRIMITIVE ARRAY DUMP
// (or NODATA, tag) at the start of b (idSize+10 bytes).
func (w *Writer) putPrimitiveArrayHeader(b []byte, tag SubTag, id uint64, stackTrace, length uint32, t BasicType) {
	if w.idSize == 4 {
		b = b[:14]
		b[0] = byte(tag)
		binary.BigEndian.PutUint32(b[1:], uint32(id))
		binary.BigEndian.PutUint32(b[5:], stackTrace)
		binary.BigEndian.PutUint32(b[9:], length)
		b[13] = byte(t)
		return
	}
	b = b[:18]
	b[0] = byte(tag)
	binary.BigEndian.PutUint64(b[1:], id)
	binary.BigEndian.PutUint32(b[9:], stackTrace)
	binary.BigEndian.PutUint32(b[13:], length)
	b[17] = byte(t)
}

// writeZeros is ZeroArray through WriteSub, for an array that does not
// fit in the segment as it is; the next may (setLimit: the segment may
// have grown).
func (w *Writer) writeZeros(id uint64, stackTrace uint32, length uint32, t BasicType) error {
	err := w.WriteSub(&SubRecord{Tag: SubPrimitiveArrayDump, ID: id, StackTrace: stackTrace, Length: length, ElemType: t})
	w.setLimit()
	return err
}

// putObjectArrayHeader puts the fixed part of an OBJECT ARRAY DUMP of
// length elements at the start of b (objectHeaderSize bytes).
func (w *Writer) putObjectArrayHeader(b []byte, id uint64, stackTrace uint32, length int, classID uint64) {
	if w.idSize == 4 {
		b = b[:17]
		b[0] = byte(SubObjectArrayDump)
		binary.BigEndian.PutUint32(b[1:], uint32(id))
		binary.BigEndian.PutUint32(b[5:], stackTrace)
		binary.BigEndian.PutUint32(b[9:], uint32(length))
		binary.BigEndian.PutUint32(b[13:], uint32(classID))
		return
	}
	b = b[:25]
	b[0] = byte(SubObjectArrayDump)
	binary.BigEndian.PutUint64(b[1:], id)
	binary.BigEndian.PutUint32(b[9:], stackTrace)
	binary.BigEndian.PutUint32(b[13:], uint32(length))
	binary.BigEndian.PutUint64(b[17:], classID)
}

// ObjectArray appends an OBJECT ARRAY DUMP of length elements to the open
// heap dump, as WriteSub would, and returns the room of its elements
// (length IDs of the Writer's size, big-endian) for the caller to fill,
// all of it, before it next calls the Writer: the bytes are not zeroed.
func (w *Writer) ObjectArray(id uint64, stackTrace uint32, classID uint64, length int) ([]byte, error) {
	head := w.objectHeaderSize()
	if !w.fits(head, length, w.idSize) {
		return w.roomForObjectArray(id, stackTrace, classID, length)
	}
	at, end := len(w.seg), len(w.seg)+head+length*w.idSize // as Instance does
	seg := w.seg[:end]
	w.seg = seg
	w.putObjectArrayHeader(seg[at:end], id, stackTrace, length, classID)
	return seg[at+head : end], nil
}

// roomForObjectArray is ObjectArray when the array does not fit in the
// segment as it is.
func (w *Writer) roomForObjectArray(id uint64, stackTrace uint32, classID uint64, length int) ([]byte, error) {
	head := w.objectHeaderSize()
	if err := w.makeRoom(head, length, w.idSize, SubObjectArrayDump); err != nil {
		return nil, err
	}
	sub := w.grab(head + length*w.idSize) // see roomForInstance
	w.putObjectArrayHeader(sub, id, stackTrace, length, classID)
	return sub[head:], nil
}

// BeginObjectArray begins an OBJECT ARRAY DUMP of length elements in the
// open heap dump, whose element IDs ObjectArrayElements then takes in
// pieces, in order: for an array too large to hold whole. One larger than
// a segment is not held by the Writer either: it goes in a heap dump
// record of its own (a HEAP DUMP SEGMENT, as ObjectArray's would), written
// as the pieces come. The file is the one ObjectArray writes, but for a
// HEAP DUMP (TagHeapDump) of which the array is the only sub-record:
// ObjectArray's array then stays in the one HEAP DUMP record, which
// cannot be known when its record is begun, and this one is a HEAP DUMP
// SEGMENT closed by a HEAP DUMP END (holding it until the dump ends
// would hold what the length claims). Until its last element, no other
// call may be made to the Writer.
func (w *Writer) BeginObjectArray(id uint64, stackTrace uint32, classID uint64, length int) error {
	head := w.objectHeaderSize()
	if length < 0 || int64(head)+int64(length)*int64(w.idSize) <= int64(w.SegmentSize) {
		room, err := w.ObjectArray(id, stackTrace, classID, length)
		if err == nil {
			w.arrayLeft, w.arrayRoom = length, room[:0]
			w.setLimit()
		}
		return err
	}
	switch {
	case w.arrayLeft > 0:
		return w.unfinishedArray()
	case !w.inHeap:
		return fmt.Errorf("hprof: %s outside a heap dump", SubObjectArrayDump)
	case w.err != nil:
		return w.err
	}
	if hi, lo := bits.Mul64(uint64(length), uint64(w.idSize)); hi != 0 || lo > 0xFFFFFFFF-16-uint64(head) {
		return fmt.Errorf("hprof: %s of %d bytes does not fit in one record", SubObjectArrayDump, uint64(head)+lo)
	}
	if len(w.seg) > 0 {
		w.split = true
		w.flushSegment()
	}
	w.split, w.heapWrote = true, true
	tag := w.heapTag
	if tag == TagHeapDump {
		tag, w.segmented = TagHeapDumpSegment, true
	}
	w.recordHeader(tag, w.heapTime, uint64(head+length*w.idSize))
	w.piece = slices.Grow(w.piece[:0], head)[:head]
	w.putObjectArrayHeader(w.piece, id, stackTrace, length, classID)
	w.write(w.piece)
	w.arrayLeft, w.arrayRoom, w.limit = length, nil, 0
	return w.err
}

// ObjectArrayElements writes the next element IDs of the object array
// that BeginObjectArray began.
func (w *Writer) ObjectArrayElements(ids []uint64) error {
	if len(ids) > w.arrayLeft {
		return fmt.Errorf("hprof: %d object array elements given, %d left to write", len(ids), w.arrayLeft)
	}
	w.arrayLeft -= len(ids)
	w.setLimit()
	if w.arrayRoom != nil {
		for _, e := range ids {
			w.arrayRoom = w.id(w.arrayRoom, e) // within the room ObjectArray made
		}
		return w.err
	}
	w.piece = w.piece[:0]
	for _, e := range ids {
		w.piece = w.id(w.piece, e)
	}
	w.write(w.piece)
	return w.err
}

// unfinishedArray is the error of a call made while the elements of an
// object array are still to come (BeginObjectArray), or the error that
// made the writing fail, if any, which left them to come.
func (w *Writer) unfinishedArray() error {
	if w.err != nil {
		return w.err // what cut the array short: the writing failed
	}
	return fmt.Errorf("hprof: a record written while %d elements of an object array are still to come", w.arrayLeft)
}

// fits reports whether a sub-record of head bytes and n items of size
// bytes each can go in the segment as it is: in a heap dump, with no
// error, within the segment's size and its buffer, and with n from 0 to
// 2²⁷ (so that n*size cannot overflow, nor a negative n pass). It is
// inlined, and makeRoom is called when it fails.
func (w *Writer) fits(head, n, size int) bool {
	return uint64(n) <= 1<<27 && len(w.seg)+head+n*size <= w.limit
}

// makeRoom makes room in the segment for a sub-record of tag, of head
// bytes and n items of size bytes each, cutting the segment first if the
// sub-record does not fit in it, or returns why it cannot be written.
func (w *Writer) makeRoom(head, n, size int, tag SubTag) error {
	if w.arrayLeft > 0 {
		return w.unfinishedArray()
	}
	if !w.inHeap {
		return fmt.Errorf("hprof: %s outside a heap dump", tag)
	}
	if w.err != nil {
		return w.err
	}
	if hi, lo := bits.Mul64(uint64(n), uint64(size)); n < 0 || hi != 0 || lo > 0xFFFFFFFF-16-uint64(head) {
		if n < 0 || hi != 0 {
			return fmt.Errorf("hprof: %s of %d items of %d bytes does not fit in one record", tag, n, size)
		}
		return fmt.Errorf("hprof: %s of %d bytes does not fit in one record", tag, uint64(head)+lo) // as WriteSub says
	}
	total := head + n*size
	if len(w.seg) > 0 && len(w.seg)+total > w.SegmentSize {
		w.split = true
		w.flushSegment()
	}
	w.reserve(total)
	w.setLimit()
	return w.err
}

// reserve makes room for n more bytes in the segment. A segment that
// must grow doubles, from DefaultSegmentSize, up to SegmentSize (or to
// what n needs, if more), not by append's steps: from 256 KiB to 8 MiB by
// quarters it allocated about 40 MiB of fresh memory, each page of it a
// page fault, which were 77 % of decrunch's (perf, the 134 MB generated
// dump's BMD) and cost up to 0.25 s of system time on two cores in this
// VM (docs/measurements.md, "Page faults"). With the default size, the
// segment is allocated once. A segment size of a gigabyte (as tests set
// to have one record) is not allocated at once either.
func (w *Writer) reserve(n int) {
	if cap(w.seg)-len(w.seg) < n {
		size := max(len(w.seg)+n, min(w.SegmentSize, max(2*cap(w.seg), DefaultSegmentSize)))
		w.seg = slices.Grow(w.seg, size-len(w.seg))
	}
}

// grab returns the next n bytes of the segment, once makeRoom has made
// sure they are there.
func (w *Writer) grab(n int) []byte {
	at := len(w.seg)
	w.seg = w.seg[:at+n]
	return w.seg[at:]
}

// appendSub appends sub-record s to b.
func (w *Writer) appendSub(b []byte, s *SubRecord) []byte {
	switch s.Tag {
	case SubHeapDumpInfo:
		b = append(b, byte(s.Tag))
		b = binary.BigEndian.AppendUint32(b, s.HeapType)
		return w.id(b, s.HeapName)
	case SubInstanceDump:
		at, head := len(b), w.objectHeaderSize()
		b = slices.Grow(b, head+len(s.Data))[:at+head]
		w.putInstanceHeader(b[at:], s.ID, s.StackTrace, s.ClassID, len(s.Data))
		return append(b, s.Data...)
	case SubObjectArrayDump:
		at, head := len(b), w.objectHeaderSize()
		b = slices.Grow(b, head+len(s.Elements)*w.idSize)[:at+head]
		w.putObjectArrayHeader(b[at:], s.ID, s.StackTrace, len(s.Elements), s.ClassID)
		for _, e := range s.Elements {
			b = w.id(b, e)
		}
		return b
	case SubPrimitiveArrayDump:
		b = w.appendPrimHeader(b, s)
		if s.Data != nil {
			return append(b, s.Data...)
		}
		return append(b, make([]byte, int(s.Length)*s.ElemType.Size(w.idSize))...)
	case SubPrimitiveArrayNoData:
		return w.appendPrimHeader(b, s)
	case SubClassDump:
		return w.appendClassDump(b, s)
	}
	if s.Tag.IsRoot() {
		return w.appendRoot(b, s)
	}
	if w.err == nil {
		w.err, w.limit = fmt.Errorf("hprof: cannot write unknown %s", s.Tag), 0
	}
	return b
}

// appendRoot appends a GC root or UNREACHABLE sub-record to b.
func (w *Writer) appendRoot(b []byte, s *SubRecord) []byte {
	b = append(b, byte(s.Tag))
	b = w.id(b, s.ID)
	switch s.Tag {
	case SubRootJNIGlobal:
		b = w.id(b, s.JNIRef)
	case SubRootJNILocal, SubRootJavaFrame, SubRootJNIMonitor:
		b = binary.BigEndian.AppendUint32(b, s.Thread)
		b = binary.BigEndian.AppendUint32(b, s.Frame)
	case SubRootNativeStack, SubRootThreadBlock:
		b = binary.BigEndian.AppendUint32(b, s.Thread)
	case SubRootThreadObject:
		b = binary.BigEndian.AppendUint32(b, s.Thread)
		b = binary.BigEndian.AppendUint32(b, s.StackTrace)
	}
	return b
}

// appendClassDump appends a CLASS DUMP sub-record to b.
func (w *Writer) appendClassDump(b []byte, s *SubRecord) []byte {
	c := &s.Class
	b = append(b, byte(s.Tag))
	b = w.id(b, c.ID)
	b = binary.BigEndian.AppendUint32(b, c.StackTrace)
	for _, v := range [...]uint64{c.Super, c.Loader, c.Signers, c.ProtectionDomain, c.Reserved1, c.Reserved2} {
		b = w.id(b, v)
	}
	b = binary.BigEndian.AppendUint32(b, c.InstanceSize)
	b = binary.BigEndian.AppendUint16(b, uint16(len(c.Constants)))
	for _, k := range c.Constants {
		b = binary.BigEndian.AppendUint16(b, k.Index)
		b = append(b, byte(k.Type))
		b = appendValue(b, k.Type, k.Value, w.idSize)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(c.Statics)))
	for _, f := range c.Statics {
		b = w.id(b, f.Name)
		b = append(b, byte(f.Type))
		b = appendValue(b, f.Type, f.Value, w.idSize)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(c.Fields)))
	for _, f := range c.Fields {
		b = w.id(b, f.Name)
		b = append(b, byte(f.Type))
	}
	return b
}
