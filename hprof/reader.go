package hprof

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"

	"github.com/heapcrunch/heapcrunch/internal/bufin"
)

// readBufSize is the size of a Reader's buffer (NewReader):
// reading a file 1 MiB at a time takes a quarter of the system calls
// that 256 KiB would.
const readBufSize = 1 << 20

// MinReadBuffer is the smallest buffer NewReaderSize gives a Reader: room
// for the file header and any record or sub-record head, which a Reader
// reads whole from its buffer.
const MinReadBuffer = 4 << 10

// Reader reads an HPROF file sequentially: Next moves to each top-level
// record, Body returns a record's bytes, and NextSub walks the sub-records of
// a HEAP DUMP or HEAP DUMP SEGMENT; Records and SubRecords do the same as
// iterators, and SkimObjects reads the fixed parts of objects in batches
// for a reader that needs no more of them. Slices a Reader returns are
// valid only until its next call.
type Reader struct {
	// ArrayData asks NextSub to return the elements of primitive arrays in
	// SubRecord.Data; by default they are skipped, which is faster.
	ArrayData bool
	// SkipElements asks NextSub to skip the elements of object arrays
	// (SubRecord.Elements stays empty), for a reader that needs only the
	// arrays' IDs, lengths and classes.
	SkipElements bool
	// MaxElements, when above 0, is the most element IDs NextSub puts in
	// SubRecord.Elements: an object array of more comes with Elements
	// empty and SubRecord.Pending set to its length, and NextElements
	// reads its elements a piece at a time, so that a huge array is never
	// held whole. NextSub and Next skip the elements not read.
	MaxElements int

	in bufin.Reader

	hdr    Header
	idSize int

	rec      Record
	inRecord bool
	recEnd   int64 // file offset just past the current record's body
	skipPast bool  // the records to recEnd were read elsewhere (SkipRecords)
	// unended: a HEAP DUMP SEGMENT came last of the heap dump records,
	// and no HEAP DUMP END since (SegmentsUnended).
	unended bool

	sub  SubRecord // the one SubRecords yields
	body []byte    // a split heap dump's bytes (SplitHeapDump), reused

	pending   uint32 // elements of the last object array left for NextElements
	pendingAt int64  // that array's offset
}

// NewReader reads the HPROF header from r and returns a Reader positioned
// before the first record. It returns an error wrapping ErrNotHPROF when r
// does not start with an HPROF header.
func NewReader(r io.Reader) (*Reader, error) { return NewReaderSize(r, readBufSize) }

// NewReaderSize is NewReader with a buffer of size bytes (at least
// MinReadBuffer). Records and runs of bytes longer than the buffer are
// read all the same, through a slice that grows with them. A smaller
// buffer suits a Reader that skips most of its input (SetReadAhead): each
// 4 KiB of a new buffer costs a page fault when it is zeroed, used or
// not.
func NewReaderSize(r io.Reader, size int) (*Reader, error) {
	rd := new(Reader)
	rd.in.Reset(r, max(size, MinReadBuffer))
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Reset makes r read the HPROF file src from its start, as NewReader
// would, reusing r's buffer, of the size it had (that of NewReader for a
// Reader of bytes): a second pass over a dump (crunch's) needs no new
// memory, whose first touch costs a page fault per 4 KiB. r's options
// (ArrayData, SkipElements, MaxElements, SetReadAhead) are reset too.
func (r *Reader) Reset(src io.Reader) error {
	size := readBufSize
	if !r.in.InPlace() && r.in.Size() > 0 {
		size = r.in.Size()
	}
	*r = Reader{in: r.in}
	r.in.Reset(src, size)
	return r.readHeader()
}

// SetReadAhead makes each read of the source ask for at most n bytes,
// where by default it fills the buffer: a Reader whose caller skips long
// runs of sub-records (SkipSubs) then reads little of them, and seeks past
// the rest where its source is an io.Seeker. Reset clears it.
func (r *Reader) SetReadAhead(n int) { r.in.SetReadAhead(n) }

// NewReaderBytes returns a Reader of the HPROF dump in data (a file mapped
// in memory, say), which it reads in place: the slices it returns alias
// data, and SplitHeapDump hands over parts of data without copying them.
// data must not change while the Reader, or one split from it, reads it.
func NewReaderBytes(data []byte) (*Reader, error) {
	rd := new(Reader)
	rd.in.SetBytes(data, 0, io.EOF)
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Header returns the file header.
func (r *Reader) Header() Header { return r.hdr }

// IDSize returns the identifier size of the file, 4 or 8.
func (r *Reader) IDSize() int { return r.idSize }

// Offset returns the file offset of the next byte the Reader will read.
func (r *Reader) Offset() int64 { return r.in.Offset() }

func (r *Reader) readHeader() error {
	r.in.Fill(MaxVersionLen + 1 + 12)
	b := r.in.Buffered()
	const prefix = "JAVA PROFILE "
	if !bytes.HasPrefix(b, []byte(prefix)) {
		if err := r.ioErr(); err != nil {
			return err
		}
		if len(b) == 0 {
			return &FormatError{Offset: 0, Tag: -1, Msg: "empty file", Err: ErrNotHPROF}
		}
		return &FormatError{Offset: 0, Tag: -1, Msg: "not an HPROF heap dump: the file does not start with \"JAVA PROFILE \"", Err: ErrNotHPROF}
	}
	nul := bytes.IndexByte(b[:min(len(b), MaxVersionLen+1)], 0)
	if nul < 0 {
		return &FormatError{Offset: int64(min(len(b), MaxVersionLen+1)), Tag: -1, Record: "header",
			Msg: fmt.Sprintf("version string is not NUL-terminated within %d bytes", MaxVersionLen+1), Err: ErrNotHPROF}
	}
	if len(b) < nul+1+12 {
		return &FormatError{Offset: int64(len(b)), Tag: -1, Record: "header", Msg: "truncated: " + needsMore(nul+13-len(b)), Err: io.ErrUnexpectedEOF}
	}
	r.hdr.Version = string(b[:nul])
	p := nul + 1
	id := binary.BigEndian.Uint32(b[p:])
	if id != 4 && id != 8 {
		return &FormatError{Offset: int64(p), Tag: -1, Record: "header", Msg: fmt.Sprintf("identifier size %d is not supported (only 4 and 8)", id)}
	}
	r.idSize = int(id)
	r.hdr.IDSize = int(id)
	r.hdr.Timestamp = binary.BigEndian.Uint64(b[p+4:])
	r.in.Discard(p + 12)
	return nil
}

// ioErr returns the error of the underlying reader, if any, saying at
// which offset of the (decompressed) file it happened.
func (r *Reader) ioErr() error {
	if err := r.in.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("hprof: reading at offset %d: %w", r.in.ReadOffset(), err)
	}
	return nil
}

// truncated returns the error for a record or sub-record (at offset off)
// that needs need more bytes than the file has: the underlying reader's
// error if it failed, else a FormatError.
func (r *Reader) truncated(off int64, record string, tag int, need int64) error {
	if err := r.ioErr(); err != nil {
		return err
	}
	have := r.in.ReadOffset() - r.Offset()
	return &FormatError{Offset: off, Record: record, Tag: tag,
		Msg: "truncated: " + needsMore(need-have), Err: io.ErrUnexpectedEOF}
}

// needsMore says how many bytes a cut record lacks: "needs 1 more byte",
// "needs 12 more bytes".
func needsMore[N int | int64](n N) string {
	if n == 1 {
		return "needs 1 more byte"
	}
	return fmt.Sprintf("needs %d more bytes", n)
}

// Next skips what is left of the current record and reads the header of the
// next one. It returns io.EOF at the end of the file.
func (r *Reader) Next() (Record, error) {
	if r.inRecord {
		r.pending = 0
		if err := r.skipTo(r.recEnd); err != nil {
			return Record{}, err
		}
		r.inRecord, r.skipPast = false, false
	}
	off := r.Offset()
	b, ok := r.in.Take(9)
	if !ok {
		rest := r.in.Buffered()
		if len(rest) == 0 {
			if err := r.ioErr(); err != nil {
				return Record{}, err
			}
			return Record{}, io.EOF
		}
		return Record{}, r.truncated(off, "record header", int(rest[0]), 9)
	}
	r.rec = DecodeRecordHeader(b, off)
	r.noteSegments(r.rec.Tag)
	r.inRecord = true
	r.recEnd = r.Offset() + int64(r.rec.Length)
	return r.rec, nil
}

// SkipRecords makes Next go on from file offset end, a record boundary
// at or after the end of the current record: the records from the current
// one to end were read elsewhere (from the same file at their offsets, on
// another goroutine say), and Next skips their bytes as it skips what is
// left of a record, but seeking past all it has not buffered where its
// source can, however few (bufin.Reader.SkipPast). last is the tag of the
// last of them, which SegmentsUnended then answers for. It fails outside a
// record or for an end before the current record's.
func (r *Reader) SkipRecords(end int64, last Tag) error {
	if !r.inRecord {
		return errors.New("hprof: SkipRecords called outside a record")
	}
	if end < r.recEnd {
		return fmt.Errorf("hprof: SkipRecords to offset %d, before the end %d of the %s at offset %d", end, r.recEnd, r.rec.Tag, r.rec.Offset)
	}
	r.recEnd, r.skipPast = end, true
	r.noteSegments(last)
	return nil
}

// noteSegments notes a record of tag t for SegmentsUnended.
func (r *Reader) noteSegments(t Tag) {
	switch t {
	case TagHeapDumpSegment:
		r.unended = true
	case TagHeapDump, TagHeapDumpEnd:
		r.unended = false
	}
}

// SegmentsUnended reports whether the last heap dump record read was a
// HEAP DUMP SEGMENT, with no HEAP DUMP END read since. A HEAP DUMP END
// closes a heap dump written in segments: where the file ends, this says
// that it was cut short after a record (a JVM or ART that is killed as
// it writes its dump leaves one so, if its last write ended a record).
// The Reader itself reads such a file to its end as any other.
func (r *Reader) SegmentsUnended() bool { return r.unended }

// Records returns an iterator over the top-level records from the Reader's
// position on, each read by Next:
//
//	for rec, err := range r.Records() {
//		if err != nil {
//			return err
//		}
//		...
//	}
//
// It ends at the end of the file; on an error it yields the error, with a
// zero Record, and ends. Breaking out of the loop leaves the Reader in the
// record it was in.
func (r *Reader) Records() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Record{}, err)
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// skipTo advances to file offset target, reading and discarding.
func (r *Reader) skipTo(target int64) error {
	n := target - r.Offset()
	if n <= 0 {
		return nil
	}
	var k int64
	if r.skipPast && target == r.recEnd {
		k = r.in.SkipPast(n) // records read elsewhere (SkipRecords)
	} else {
		k = r.in.Skip(n)
	}
	if k < n {
		return r.truncated(r.rec.Offset, r.rec.Tag.String(), int(r.rec.Tag), n-k)
	}
	return nil
}

// Body reads the whole body of the current record. The slice is valid until
// the next call. Heap dump bodies are better walked with NextSub.
func (r *Reader) Body() ([]byte, error) {
	if !r.inRecord {
		return nil, errors.New("hprof: Body called outside a record")
	}
	n := r.recEnd - r.Offset()
	r.pending = 0 // the body holds them
	b, err := r.readN(n, r.rec.Offset, r.rec.Tag.String(), int(r.rec.Tag))
	if err != nil {
		return nil, err
	}
	r.inRecord = false
	return b, nil
}

// SplitHeapDump reads what is left of the current HEAP DUMP or HEAP DUMP
// SEGMENT record into sub, which then reads that record alone, so that its
// sub-records can be walked (NextSub, SubRecords) on another goroutine
// while r goes on to the next records. Sub keeps r's options, and its
// records, sub-records, offsets and errors are those r would have given,
// a record cut short by the end of the input included. Sub's buffer is
// reused from one split to the next; it grows only with the bytes read.
// A Reader of NewReaderBytes copies nothing: sub reads the record in place.
func (r *Reader) SplitHeapDump(sub *Reader) error {
	if !r.inRecord || !r.rec.Tag.IsHeapDump() {
		return errors.New("hprof: SplitHeapDump called outside a heap dump record")
	}
	if r.pending > 0 {
		if err := r.skipPending(); err != nil {
			return err
		}
	}
	off := r.Offset()
	n := r.recEnd - off
	var body []byte
	keep := sub.body // sub's buffer, never the data a Reader reads in place
	if r.in.InPlace() {
		body = r.in.Buffered()
		body = body[:min(n, int64(len(body)))]
		r.in.Discard(len(body))
	} else {
		body = sub.body[:0]
		for int64(len(body)) < n {
			k := int(min(n-int64(len(body)), int64(max(len(body), readBufSize))))
			body = slices.Grow(body, k)
			got := r.in.ReadFull(body[len(body) : len(body)+k])
			body = body[:len(body)+got]
			if got < k {
				break
			}
		}
		keep = body
	}
	r.inRecord = false
	*sub = Reader{ArrayData: r.ArrayData, SkipElements: r.SkipElements, MaxElements: r.MaxElements, in: sub.in, hdr: r.hdr, idSize: r.idSize,
		rec: r.rec, inRecord: true, recEnd: r.recEnd, sub: sub.sub, body: keep}
	sub.in.SetBytes(body, off, r.in.Err())
	return nil
}

// NewSubRecordReader returns a Reader of the sub-records in data: those of
// the heap dump record rec of a dump with header h, from file offset off
// on. data holds the bytes of the file from off (a part of a file mapped
// in memory, say), to the end of rec or less, and is read in place.
// NextSub walks them, with the offsets and errors a Reader of the whole
// file gives, and returns io.EOF at the end of rec; a sub-record cut short
// by the end of data is truncated. With SplitHeapDump, which splits off
// the record the Reader is in, it lets another goroutine read a part of a
// heap dump record that a Reader passed by.
func NewSubRecordReader(h Header, rec Record, data []byte, off int64) (*Reader, error) {
	r := new(Reader)
	if err := r.ResetSubRecords(h, rec, data, off); err != nil {
		return nil, err
	}
	return r, nil
}

// ResetSubRecords makes r the Reader that NewSubRecordReader(h, rec, data,
// off) returns, its options back to their defaults, reusing its buffers:
// for a caller that reads many small records apart (crunch, an Android
// dump's HEAP DUMP SEGMENTs of 4 KiB, where a Reader allocated for each
// made 180 MB of garbage on a 1.3 GB dump). On an error, r is unchanged.
func (r *Reader) ResetSubRecords(h Header, rec Record, data []byte, off int64) error {
	end := rec.End()
	switch {
	case !rec.Tag.IsHeapDump():
		return fmt.Errorf("hprof: sub-records of a %s record", rec.Tag)
	case h.IDSize != 4 && h.IDSize != 8:
		return fmt.Errorf("hprof: identifier size %d", h.IDSize)
	case off < rec.Body() || off > end:
		return fmt.Errorf("hprof: offset %d outside the body of the record at %d (%d bytes)", off, rec.Offset, rec.Length)
	}
	*r = Reader{hdr: h, idSize: h.IDSize, rec: rec, inRecord: true, recEnd: end, in: r.in, sub: r.sub}
	r.in.SetBytes(data[:min(int64(len(data)), end-off)], off, io.EOF)
	return nil
}

// SkipSubs moves the Reader on, within the heap dump record it is in, to
// file offset off, where a sub-record starts (or the record ends),
// without reading the sub-records before it: for a caller that has read
// them another way (with a Reader of NewSubRecordReader, on another
// goroutine). Elements of an object array still pending are skipped with
// them.
func (r *Reader) SkipSubs(off int64) error {
	if !r.inRecord || !r.rec.Tag.IsHeapDump() {
		return errors.New("hprof: SkipSubs called outside a heap dump record")
	}
	if off < r.Offset() || off > r.recEnd {
		return fmt.Errorf("hprof: SkipSubs to offset %d, outside %d to %d", off, r.Offset(), r.recEnd)
	}
	r.pending = 0
	return r.skipTo(off)
}

// readN returns the next n bytes. Memory grows only with bytes actually
// read, so a corrupt length cannot make it allocate more than the input has.
func (r *Reader) readN(n int64, off int64, record string, tag int) ([]byte, error) {
	if n > math.MaxInt {
		return nil, &FormatError{Offset: off, Record: record, Tag: tag, Msg: fmt.Sprintf("%d bytes do not fit in memory", n)}
	}
	start := r.Offset()
	b, ok := r.in.Take(int(n))
	if !ok {
		return nil, r.truncated(off, record, tag, n-(r.Offset()-start))
	}
	return b, nil
}

func (r *Reader) id(b []byte) uint64 {
	if r.idSize == 4 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// take consumes the next n bytes (at most the buffer's size) of the
// current sub-record s and returns them (valid until the next read).
//
// It is on the hot path: the buffer is read with the calls of bufin that
// inline, Take's would not.
func (r *Reader) take(n int, s *SubRecord) ([]byte, error) {
	if r.Offset()+int64(n) > r.recEnd {
		return nil, &FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag),
			Msg: fmt.Sprintf("sub-record runs %d bytes past the end of its %s at offset %d", r.Offset()+int64(n)-r.recEnd, r.rec.Tag, r.rec.Offset)}
	}
	if !r.in.Fill(n) {
		return nil, r.truncated(s.Offset, s.Tag.String(), int(s.Tag), int64(n))
	}
	b := r.in.Buffered()[:n]
	r.in.Discard(n)
	return b, nil
}

// NextSub reads the next sub-record of the current HEAP DUMP or HEAP DUMP
// SEGMENT into s. It returns io.EOF at the end of the record. An unknown
// sub-record tag is an error, since sub-records carry no length.
//
// It is small enough to inline: the usual sub-record, an object lying
// whole in the buffer, costs its caller one call (fastSub), not two.
func (r *Reader) NextSub(s *SubRecord) error {
	if r.fastSub(s) {
		return nil
	}
	return r.nextSub(s)
}

// nextSub is NextSub for any sub-record.
func (r *Reader) nextSub(s *SubRecord) error {
	if !r.inRecord || !r.rec.Tag.IsHeapDump() {
		return errors.New("hprof: NextSub called outside a heap dump record")
	}
	if r.pending > 0 {
		if err := r.skipPending(); err != nil {
			return err
		}
	}
	off := r.Offset()
	if off >= r.recEnd {
		r.inRecord = false
		return io.EOF
	}
	if !r.in.Fill(1) {
		return r.truncated(r.rec.Offset, r.rec.Tag.String(), int(r.rec.Tag), r.recEnd-off)
	}
	s.Tag = SubTag(r.in.Buffered()[0])
	r.in.Discard(1)
	s.Offset = off
	switch s.Tag {
	case SubInstanceDump:
		return r.readInstance(s)
	case SubObjectArrayDump:
		return r.readObjectArray(s)
	case SubPrimitiveArrayDump, SubPrimitiveArrayNoData:
		return r.readPrimitiveArray(s)
	case SubClassDump:
		return r.readClassDump(s)
	case SubHeapDumpInfo:
		return r.readHeapDumpInfo(s)
	}
	if s.Tag.IsRoot() {
		return r.readRoot(s)
	}
	return &FormatError{Offset: off, Record: r.rec.Tag.String() + " sub-record", Tag: int(s.Tag), Msg: "unknown tag"}
}

// fastSub reads the next sub-record into s, as nextSub's readers would,
// if it is an instance or an array that lies whole in the buffer and
// within the current heap dump record, no elements pending (the usual
// case); else it reads nothing and returns false, and nextSub reads it,
// or checks and reports what is wrong.
func (r *Reader) fastSub(s *SubRecord) bool {
	if !r.inRecord || r.pending > 0 || !r.rec.Tag.IsHeapDump() {
		return false
	}
	off := r.Offset()
	b := r.in.Buffered()
	if rest := r.recEnd - off; int64(len(b)) > rest {
		if rest <= 0 {
			return false // the end of the record
		}
		b = b[:rest]
	}
	// The longest fixed part of all, tag included: that of 8-byte IDs,
	// 2*8+9 bytes, at least 2*id+9. A constant, the compiler checks the
	// bounds of the tag and of the fixed parts here, once. (A record
	// shorter near the end of the buffer or of the heap dump record goes
	// to nextSub's readers.)
	if len(b) < 2*8+9 {
		return false
	}
	id := r.idSize
	var n int
	switch SubTag(b[0]) {
	case SubInstanceDump:
		size := r.instanceHeader(b[1:], s)
		if uint64(size) > uint64(len(b)-2*id-9) {
			return false
		}
		n = 2*id + 9 + int(size)
		s.Data = b[2*id+9 : n]
	case SubObjectArrayDump:
		r.objectArrayHeader(b[1:], s)
		if uint64(s.Length)*uint64(id) > uint64(len(b)-2*id-9) {
			return false
		}
		if r.MaxElements > 0 && int64(s.Length) > int64(r.MaxElements) && !r.SkipElements {
			return false // read in pieces: readObjectArray
		}
		n = 2*id + 9 + int(s.Length)*id
		s.Elements, s.Pending = s.Elements[:0], 0
		if !r.SkipElements {
			s.Elements = AppendIDs(s.Elements, b[2*id+9:n], id)
		}
	case SubPrimitiveArrayDump:
		r.primitiveArrayHeader(b[1:], s)
		t := s.ElemType
		if !t.Valid() || t == Object {
			return false
		}
		size := uint64(s.Length) * uint64(t.Size(id))
		if size > uint64(len(b)-id-10) {
			return false
		}
		n = id + 10 + int(size)
		s.Data = nil
		if r.ArrayData {
			s.Data = b[id+10 : n]
		}
	default:
		return false
	}
	s.Tag, s.Offset = SubTag(b[0]), off
	r.in.Discard(n)
	return true
}

// The fixed parts of the object sub-records, after their tag byte: the one
// place their layouts are read, by NextSub's readers, by fastSub and by
// SkimObjects.

// instanceHeader decodes the fixed part of an INSTANCE DUMP (2*id+8 bytes)
// into s and returns the size of its field data.
func (r *Reader) instanceHeader(b []byte, s *SubRecord) (size uint32) {
	s.ID, s.StackTrace, s.ClassID, size = instanceFixed(b, r.idSize)
	return size
}

// objectArrayHeader decodes the fixed part of an OBJECT ARRAY DUMP
// (2*id+8 bytes) into s.
func (r *Reader) objectArrayHeader(b []byte, s *SubRecord) {
	s.ID, s.StackTrace, s.Length, s.ClassID = objectArrayFixed(b, r.idSize)
}

// primitiveArrayHeader decodes the fixed part of a PRIMITIVE ARRAY DUMP or
// NODATA (id+9 bytes) into s; the element type is not checked.
func (r *Reader) primitiveArrayHeader(b []byte, s *SubRecord) {
	s.ID, s.StackTrace, s.Length, s.ElemType = primitiveArrayFixed(b, r.idSize)
}

// instanceFixed decodes the fixed part of an INSTANCE DUMP, b after its
// tag byte, in a file of id-byte IDs: object ID, stack trace serial, class
// ID, and the size of the field data that follows. The three fixed parts
// are decoded with constant offsets for each ID size: they run for every
// object, twice.
func instanceFixed(b []byte, id int) (obj uint64, trace uint32, class uint64, size uint32) {
	if id == 4 {
		b = b[:16]
		return uint64(binary.BigEndian.Uint32(b)), binary.BigEndian.Uint32(b[4:]), uint64(binary.BigEndian.Uint32(b[8:])), binary.BigEndian.Uint32(b[12:])
	}
	b = b[:24]
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint64(b[12:]), binary.BigEndian.Uint32(b[20:])
}

// objectArrayFixed decodes the fixed part of an OBJECT ARRAY DUMP, b
// after its tag byte: array ID, stack trace serial, length, class ID.
func objectArrayFixed(b []byte, id int) (obj uint64, trace, length uint32, class uint64) {
	if id == 4 {
		b = b[:16]
		return uint64(binary.BigEndian.Uint32(b)), binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:]), uint64(binary.BigEndian.Uint32(b[12:]))
	}
	b = b[:24]
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:]), binary.BigEndian.Uint64(b[16:])
}

// primitiveArrayFixed decodes the fixed part of a PRIMITIVE ARRAY DUMP or
// NODATA, b after its tag byte: array ID, stack trace serial, length,
// element type (not checked).
func primitiveArrayFixed(b []byte, id int) (obj uint64, trace, length uint32, t BasicType) {
	if id == 4 {
		b = b[:13]
		return uint64(binary.BigEndian.Uint32(b)), binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:]), BasicType(b[12])
	}
	b = b[:17]
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:]), BasicType(b[16])
}

// AppendIDs appends the big-endian IDs of size id (4 or 8) in b to ids,
// as many as b holds whole, growing ids once for all of them: a mapped
// dump's object array comes in one piece,
// and an array of 40 million elements grown an append at a time was
// copied over and over, 1.2 GB allocated for its 320 MB of IDs.
func AppendIDs(ids []uint64, b []byte, id int) []uint64 {
	n := len(ids)
	ids = slices.Grow(ids, len(b)/id)[:n+len(b)/id]
	out := ids[n:]
	// Each ID stored in place, b moved on: a loop the compiler proves
	// needs no bounds check, where append checked the room for each.
	if id == 4 {
		for i := range out {
			if len(b) < 4 {
				break
			}
			out[i] = uint64(binary.BigEndian.Uint32(b))
			b = b[4:]
		}
		return ids
	}
	for i := range out {
		if len(b) < 8 {
			break
		}
		out[i] = binary.BigEndian.Uint64(b)
		b = b[8:]
	}
	return ids
}

// SubRecords returns an iterator over the sub-records of the current HEAP
// DUMP or HEAP DUMP SEGMENT, from the Reader's position on, each read by
// NextSub into a SubRecord of the Reader's own, valid until the next one:
//
//	for rec, err := range r.Records() {
//		...
//		for s, err := range r.SubRecords() {
//			if err != nil {
//				return err
//			}
//			...
//		}
//	}
//
// It ends at the end of the record; on an error it yields the error, with
// a nil *SubRecord, and ends. Breaking out of the loop is allowed: Next
// skips the rest of the record.
func (r *Reader) SubRecords() iter.Seq2[*SubRecord, error] {
	return func(yield func(*SubRecord, error) bool) {
		if !r.inRecord || !r.rec.Tag.IsHeapDump() {
			yield(nil, errors.New("hprof: SubRecords called outside a heap dump record"))
			return
		}
		for {
			err := r.NextSub(&r.sub)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&r.sub, nil) {
				return
			}
		}
	}
}

// readRoot reads the body of a GC root or UNREACHABLE sub-record. The
// fields a root's kind does not have are zero, not a previous record's.
func (r *Reader) readRoot(s *SubRecord) error {
	id := r.idSize
	s.Thread, s.Frame, s.StackTrace, s.JNIRef = 0, 0, 0, 0
	switch s.Tag {
	case SubRootJNIGlobal:
		b, err := r.take(2*id, s)
		if err != nil {
			return err
		}
		s.ID = r.id(b)
		s.JNIRef = r.id(b[id:])
	case SubRootJNILocal, SubRootJavaFrame, SubRootJNIMonitor:
		b, err := r.take(id+8, s)
		if err != nil {
			return err
		}
		s.ID = r.id(b)
		s.Thread = binary.BigEndian.Uint32(b[id:])
		s.Frame = binary.BigEndian.Uint32(b[id+4:])
	case SubRootNativeStack, SubRootThreadBlock:
		b, err := r.take(id+4, s)
		if err != nil {
			return err
		}
		s.ID = r.id(b)
		s.Thread = binary.BigEndian.Uint32(b[id:])
	case SubRootThreadObject:
		b, err := r.take(id+8, s)
		if err != nil {
			return err
		}
		s.ID = r.id(b)
		s.Thread = binary.BigEndian.Uint32(b[id:])
		s.StackTrace = binary.BigEndian.Uint32(b[id+4:])
	default: // the roots that hold only an object ID, and UNREACHABLE
		b, err := r.take(id, s)
		if err != nil {
			return err
		}
		s.ID = r.id(b)
	}
	return nil
}

// readHeapDumpInfo reads the body of Android's HEAP DUMP INFO.
func (r *Reader) readHeapDumpInfo(s *SubRecord) error {
	b, err := r.take(4+r.idSize, s)
	if err != nil {
		return err
	}
	s.HeapType = binary.BigEndian.Uint32(b)
	s.HeapName = r.id(b[4:])
	return nil
}

// readInstance reads the body of an INSTANCE DUMP, its field bytes in Data.
func (r *Reader) readInstance(s *SubRecord) error {
	id := r.idSize
	b, err := r.take(2*id+8, s)
	if err != nil {
		return err
	}
	n := int64(r.instanceHeader(b, s))
	if r.Offset()+n > r.recEnd {
		return r.overrun(s, n)
	}
	data, err := r.readN(n, s.Offset, s.Tag.String(), int(s.Tag))
	if err != nil {
		return err
	}
	s.Data = data
	return nil
}

// readObjectArray reads the body of an OBJECT ARRAY DUMP, its element IDs
// in Elements unless the Reader skips them.
func (r *Reader) readObjectArray(s *SubRecord) error {
	id := r.idSize
	b, err := r.take(2*id+8, s)
	if err != nil {
		return err
	}
	r.objectArrayHeader(b, s)
	n := int64(s.Length) * int64(id)
	if r.Offset()+n > r.recEnd {
		return r.overrun(s, n)
	}
	s.Elements, s.Pending = s.Elements[:0], 0
	if r.SkipElements {
		return r.skipTo(r.Offset() + n)
	}
	if r.MaxElements > 0 && int64(s.Length) > int64(r.MaxElements) {
		s.Pending, r.pending, r.pendingAt = s.Length, s.Length, s.Offset
		return nil
	}
	return r.readElements(s, int(s.Length), 0)
}

// NextElements reads the next elements of the object array s that NextSub
// left pending (SubRecord.Pending, Reader.MaxElements), at most max of
// them, into s.Elements (replacing those there), and lowers s.Pending by
// as many. s is the array's sub-record as NextSub returned it. Once the
// Reader has gone on (NextSub, Next, Body, SplitHeapDump), the elements
// not read are skipped: NextElements then reads none and sets s.Pending
// to 0.
func (r *Reader) NextElements(s *SubRecord, max int) error {
	s.Elements = s.Elements[:0]
	if r.pending == 0 || s.Tag != SubObjectArrayDump || s.Offset != r.pendingAt {
		s.Pending = 0 // not the array left pending, or none is
		return nil
	}
	n := int(min(int64(r.pending), int64(max)))
	if n <= 0 {
		return nil
	}
	if err := r.readElements(s, n, int(r.pending)-n); err != nil {
		r.pending, s.Pending = 0, 0
		return err
	}
	r.pending -= uint32(n)
	s.Pending = r.pending
	return nil
}

// skipPending skips the elements of the last object array that
// NextElements did not read.
func (r *Reader) skipPending() error {
	n := int64(r.pending) * int64(r.idSize)
	r.pending = 0
	return r.skipTo(r.Offset() + n)
}

// readElements appends the next n element IDs of the object array s to
// s.Elements, as many at a time as the buffer holds: the slice grows only
// with the IDs actually read. more elements of the array follow them: a
// truncated array lacks their bytes too.
func (r *Reader) readElements(s *SubRecord, n, more int) error {
	id := r.idSize
	for rem := n; rem > 0; {
		if !r.in.Fill(id) {
			return r.truncated(s.Offset, s.Tag.String(), int(s.Tag), int64(rem+more)*int64(id))
		}
		k := min(len(r.in.Buffered())/id, rem)
		b := r.in.Buffered()[:k*id]
		r.in.Discard(k * id)
		if n := len(s.Elements); cap(s.Elements)-n < k {
			// Double the room, as far as the array goes: room for
			// what has been read, not for what the length claims.
			s.Elements = slices.Grow(s.Elements, min(rem, max(k, n)))
		}
		s.Elements = AppendIDs(s.Elements, b, id)
		rem -= k
	}
	return nil
}

// readPrimitiveArray reads the body of a PRIMITIVE ARRAY DUMP (its
// elements in Data if the Reader asks for them) or of Android's PRIMITIVE
// ARRAY NODATA.
func (r *Reader) readPrimitiveArray(s *SubRecord) error {
	id := r.idSize
	b, err := r.take(id+9, s)
	if err != nil {
		return err
	}
	r.primitiveArrayHeader(b, s)
	if !s.ElemType.Valid() || s.ElemType == Object {
		return &FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("invalid element type %d", s.ElemType)}
	}
	s.Data = nil
	if s.Tag == SubPrimitiveArrayNoData {
		return nil
	}
	n := int64(s.Length) * int64(s.ElemType.Size(id))
	if r.Offset()+n > r.recEnd {
		return r.overrun(s, n)
	}
	if !r.ArrayData {
		return r.skipTo(r.Offset() + n)
	}
	data, err := r.readN(n, s.Offset, s.Tag.String(), int(s.Tag))
	if err != nil {
		return err
	}
	s.Data = data
	return nil
}

func (r *Reader) overrun(s *SubRecord, n int64) error {
	return &FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag),
		Msg: fmt.Sprintf("%d bytes of data run past the end of its %s at offset %d", n, r.rec.Tag, r.rec.Offset)}
}

// readValue reads a value of type t (of a constant or a static field of
// the CLASS DUMP s), whose type byte was the last byte read.
func (r *Reader) readValue(t BasicType, s *SubRecord) (uint64, error) {
	sz := t.Size(r.idSize)
	if sz == 0 {
		return 0, &FormatError{Offset: r.Offset() - 1, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("invalid basic type %d", t)}
	}
	b, err := r.take(sz, s)
	if err != nil {
		return 0, err
	}
	switch sz {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(b)), nil
	}
	return binary.BigEndian.Uint64(b), nil
}

// readClassDump reads the body of a CLASS DUMP into s.Class.
func (r *Reader) readClassDump(s *SubRecord) error {
	id := r.idSize
	b, err := r.take(7*id+8+2, s)
	if err != nil {
		return err
	}
	c := &s.Class
	c.ID = r.id(b)
	c.StackTrace = binary.BigEndian.Uint32(b[id:])
	b = b[id+4:]
	c.Super = r.id(b)
	c.Loader = r.id(b[id:])
	c.Signers = r.id(b[2*id:])
	c.ProtectionDomain = r.id(b[3*id:])
	c.Reserved1 = r.id(b[4*id:])
	c.Reserved2 = r.id(b[5*id:])
	c.InstanceSize = binary.BigEndian.Uint32(b[6*id:])
	n := int(binary.BigEndian.Uint16(b[6*id+4:]))
	s.ID = c.ID
	if err := r.readConstants(s, n); err != nil {
		return err
	}
	if err := r.readStatics(s); err != nil {
		return err
	}
	return r.readFields(s)
}

// readConstants reads the n constant pool entries of a CLASS DUMP.
func (r *Reader) readConstants(s *SubRecord, n int) error {
	c := &s.Class
	c.Constants = c.Constants[:0]
	for range n {
		b, err := r.take(3, s)
		if err != nil {
			return err
		}
		e := Constant{Index: binary.BigEndian.Uint16(b), Type: BasicType(b[2])}
		if e.Value, err = r.readValue(e.Type, s); err != nil {
			return err
		}
		c.Constants = append(c.Constants, e)
	}
	return nil
}

// readStatics reads the count and the static fields of a CLASS DUMP.
func (r *Reader) readStatics(s *SubRecord) error {
	b, err := r.take(2, s)
	if err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint16(b))
	c := &s.Class
	c.Statics = c.Statics[:0]
	for range n {
		b, err := r.take(r.idSize+1, s)
		if err != nil {
			return err
		}
		f := StaticField{Name: r.id(b), Type: BasicType(b[r.idSize])}
		if f.Value, err = r.readValue(f.Type, s); err != nil {
			return err
		}
		c.Statics = append(c.Statics, f)
	}
	return nil
}

// readFields reads the count and the instance fields of a CLASS DUMP.
func (r *Reader) readFields(s *SubRecord) error {
	b, err := r.take(2, s)
	if err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint16(b))
	c := &s.Class
	c.Fields = c.Fields[:0]
	for range n {
		b, err := r.take(r.idSize+1, s)
		if err != nil {
			return err
		}
		f := Field{Name: r.id(b), Type: BasicType(b[r.idSize])}
		if !f.Type.Valid() {
			return &FormatError{Offset: r.Offset() - 1, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("invalid field type %d", f.Type)}
		}
		c.Fields = append(c.Fields, f)
	}
	return nil
}
