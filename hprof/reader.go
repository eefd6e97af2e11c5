package hprof

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

const readBufSize = 1 << 20

// Reader reads an HPROF file sequentially: Next moves to each top-level
// record, Body returns a record's bytes, and NextSub walks the sub-records of
// a HEAP DUMP or HEAP DUMP SEGMENT. Slices a Reader returns are valid only
// until its next call.
type Reader struct {
	// ArrayData asks NextSub to return the elements of primitive arrays in
	// SubRecord.Data; by default they are skipped, which is faster.
	ArrayData bool
	// SkipElements asks NextSub to skip the elements of object arrays
	// (SubRecord.Elements stays empty), for a reader that needs only the
	// arrays' IDs, lengths and classes.
	SkipElements bool

	src    io.Reader
	srcErr error
	buf    []byte
	pos    int
	end    int
	base   int64 // file offset of buf[0]

	hdr    Header
	idSize int

	rec      Record
	inRecord bool
	recEnd   int64 // file offset just past the current record's body

	scratch []byte
}

// NewReader reads the HPROF header from r and returns a Reader positioned
// before the first record. It returns an error wrapping ErrNotHPROF when r
// does not start with an HPROF header.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{src: r, buf: make([]byte, readBufSize)}
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
func (r *Reader) Offset() int64 { return r.base + int64(r.pos) }

func (r *Reader) readHeader() error {
	r.fill(64)
	b := r.buf[:r.end]
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
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return &FormatError{Offset: int64(len(b)), Tag: -1, Record: "header", Msg: "version string is not NUL-terminated", Err: ErrNotHPROF}
	}
	if len(b) < nul+1+12 {
		return &FormatError{Offset: int64(len(b)), Tag: -1, Record: "header", Msg: fmt.Sprintf("truncated: needs %d more bytes", nul+13-len(b)), Err: io.ErrUnexpectedEOF}
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
	r.pos = p + 12
	return nil
}

// fill makes at least n bytes available in buf[pos:end] if the input has
// them; n must not exceed len(buf). It reports whether it succeeded.
func (r *Reader) fill(n int) bool {
	if r.end-r.pos >= n {
		return true
	}
	if r.pos > 0 {
		copy(r.buf, r.buf[r.pos:r.end])
		r.base += int64(r.pos)
		r.end -= r.pos
		r.pos = 0
	}
	for r.end < n && r.srcErr == nil {
		m, err := r.src.Read(r.buf[r.end:])
		r.end += m
		if err != nil {
			r.srcErr = err
		}
	}
	return r.end >= n
}

// ioErr returns the error of the underlying reader, if any, saying at
// which offset of the (decompressed) file it happened.
func (r *Reader) ioErr() error {
	if r.srcErr != nil && r.srcErr != io.EOF {
		return fmt.Errorf("reading at offset %d: %w", r.base+int64(r.end), r.srcErr)
	}
	return nil
}

func (r *Reader) truncated(off int64, record string, tag int, need int64) error {
	if err := r.ioErr(); err != nil {
		return err
	}
	have := r.base + int64(r.end) - r.Offset()
	return &FormatError{Offset: off, Record: record, Tag: tag,
		Msg: fmt.Sprintf("truncated: needs %d more bytes", need-have), Err: io.ErrUnexpectedEOF}
}

// Next skips what is left of the current record and reads the header of the
// next one. It returns io.EOF at the end of the file.
func (r *Reader) Next() (Record, error) {
	if r.inRecord {
		if err := r.skipTo(r.recEnd); err != nil {
			return Record{}, err
		}
		r.inRecord = false
	}
	off := r.Offset()
	if !r.fill(9) {
		if r.end == r.pos {
			if err := r.ioErr(); err != nil {
				return Record{}, err
			}
			return Record{}, io.EOF
		}
		return Record{}, r.truncated(off, "record header", int(r.buf[r.pos]), 9)
	}
	b := r.buf[r.pos:]
	r.rec = Record{Tag: Tag(b[0]), Time: binary.BigEndian.Uint32(b[1:]), Length: binary.BigEndian.Uint32(b[5:]), Offset: off}
	r.pos += 9
	r.inRecord = true
	r.recEnd = r.Offset() + int64(r.rec.Length)
	return r.rec, nil
}

func (r *Reader) recErr(msg string) error {
	return &FormatError{Offset: r.rec.Offset, Record: r.rec.Tag.String(), Tag: int(r.rec.Tag), Msg: msg}
}

// skipTo advances to file offset target, reading and discarding.
func (r *Reader) skipTo(target int64) error {
	for {
		cur := r.Offset()
		if cur >= target {
			return nil
		}
		avail := int64(r.end - r.pos)
		if avail >= target-cur {
			r.pos += int(target - cur)
			return nil
		}
		r.pos = r.end
		if !r.fill(1) {
			return r.truncated(r.rec.Offset, r.rec.Tag.String(), int(r.rec.Tag), target-cur-avail+1)
		}
	}
}

// Body reads the whole body of the current record. The slice is valid until
// the next call. Heap dump bodies are better walked with NextSub.
func (r *Reader) Body() ([]byte, error) {
	if !r.inRecord {
		return nil, errors.New("hprof: Body called outside a record")
	}
	n := r.recEnd - r.Offset()
	b, err := r.readN(n, r.rec.Offset, r.rec.Tag.String(), int(r.rec.Tag))
	if err != nil {
		return nil, err
	}
	r.inRecord = false
	return b, nil
}

// readN returns the next n bytes. Memory grows only with bytes actually
// read, so a corrupt length cannot make it allocate more than the input has.
func (r *Reader) readN(n int64, off int64, record string, tag int) ([]byte, error) {
	if n <= int64(len(r.buf)) {
		if !r.fill(int(n)) {
			return nil, r.truncated(off, record, tag, n)
		}
		b := r.buf[r.pos : r.pos+int(n)]
		r.pos += int(n)
		return b, nil
	}
	r.scratch = r.scratch[:0]
	for rem := n; rem > 0; {
		if r.pos == r.end && !r.fill(1) {
			return nil, r.truncated(off, record, tag, rem)
		}
		k := int64(r.end - r.pos)
		if k > rem {
			k = rem
		}
		r.scratch = append(r.scratch, r.buf[r.pos:r.pos+int(k)]...)
		r.pos += int(k)
		rem -= k
	}
	return r.scratch, nil
}

func (r *Reader) id(b []byte) uint64 {
	if r.idSize == 4 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// need makes n bytes of the current sub-record available at buf[pos:].
func (r *Reader) need(n int, s *SubRecord) error {
	if r.Offset()+int64(n) > r.recEnd {
		return &FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag),
			Msg: fmt.Sprintf("sub-record runs %d bytes past the end of its %s at offset %d", r.Offset()+int64(n)-r.recEnd, r.rec.Tag, r.rec.Offset)}
	}
	if !r.fill(n) {
		return r.truncated(s.Offset, s.Tag.String(), int(s.Tag), int64(n))
	}
	return nil
}

// NextSub reads the next sub-record of the current HEAP DUMP or HEAP DUMP
// SEGMENT into s. It returns io.EOF at the end of the record. An unknown
// sub-record tag is an error, since sub-records carry no length.
func (r *Reader) NextSub(s *SubRecord) error {
	if !r.inRecord || !r.rec.Tag.IsHeapDump() {
		return errors.New("hprof: NextSub called outside a heap dump record")
	}
	off := r.Offset()
	if off >= r.recEnd {
		r.inRecord = false
		return io.EOF
	}
	if !r.fill(1) {
		return r.truncated(r.rec.Offset, r.rec.Tag.String(), int(r.rec.Tag), r.recEnd-off)
	}
	s.Tag = SubTag(r.buf[r.pos])
	s.Offset = off
	r.pos++
	id := r.idSize
	switch s.Tag {
	case RootUnknown, RootStickyClass, RootMonitorUsed, RootInternedString, RootFinalizing,
		RootDebugger, RootReferenceCleanup, RootVMInternal, Unreachable:
		if err := r.need(id, s); err != nil {
			return err
		}
		s.ID = r.id(r.buf[r.pos:])
		r.pos += id
	case RootJNIGlobal:
		if err := r.need(2*id, s); err != nil {
			return err
		}
		s.ID = r.id(r.buf[r.pos:])
		s.JNIRef = r.id(r.buf[r.pos+id:])
		r.pos += 2 * id
	case RootJNILocal, RootJavaFrame, RootJNIMonitor:
		if err := r.need(id+8, s); err != nil {
			return err
		}
		b := r.buf[r.pos:]
		s.ID = r.id(b)
		s.Thread = binary.BigEndian.Uint32(b[id:])
		s.Frame = binary.BigEndian.Uint32(b[id+4:])
		r.pos += id + 8
	case RootNativeStack, RootThreadBlock:
		if err := r.need(id+4, s); err != nil {
			return err
		}
		b := r.buf[r.pos:]
		s.ID = r.id(b)
		s.Thread = binary.BigEndian.Uint32(b[id:])
		r.pos += id + 4
	case RootThreadObject:
		if err := r.need(id+8, s); err != nil {
			return err
		}
		b := r.buf[r.pos:]
		s.ID = r.id(b)
		s.Thread = binary.BigEndian.Uint32(b[id:])
		s.StackTrace = binary.BigEndian.Uint32(b[id+4:])
		r.pos += id + 8
	case HeapDumpInfoTag:
		if err := r.need(4+id, s); err != nil {
			return err
		}
		b := r.buf[r.pos:]
		s.HeapType = binary.BigEndian.Uint32(b)
		s.HeapName = r.id(b[4:])
		r.pos += 4 + id
	case InstanceDumpTag:
		if err := r.need(2*id+8, s); err != nil {
			return err
		}
		b := r.buf[r.pos:]
		s.ID = r.id(b)
		s.StackTrace = binary.BigEndian.Uint32(b[id:])
		s.ClassID = r.id(b[id+4:])
		n := int64(binary.BigEndian.Uint32(b[2*id+4:]))
		r.pos += 2*id + 8
		if r.Offset()+n > r.recEnd {
			return r.overrun(s, n)
		}
		data, err := r.readN(n, s.Offset, s.Tag.String(), int(s.Tag))
		if err != nil {
			return err
		}
		s.Data = data
	case ObjectArrayDumpTag:
		if err := r.need(2*id+8, s); err != nil {
			return err
		}
		b := r.buf[r.pos:]
		s.ID = r.id(b)
		s.StackTrace = binary.BigEndian.Uint32(b[id:])
		s.Length = binary.BigEndian.Uint32(b[id+4:])
		s.ClassID = r.id(b[id+8:])
		r.pos += 2*id + 8
		n := int64(s.Length) * int64(id)
		if r.Offset()+n > r.recEnd {
			return r.overrun(s, n)
		}
		s.Elements = s.Elements[:0]
		if r.SkipElements {
			return r.skipTo(r.Offset() + n)
		}
		for rem := int(s.Length); rem > 0; {
			if !r.fill(id) {
				return r.truncated(s.Offset, s.Tag.String(), int(s.Tag), int64(rem*id))
			}
			k := (r.end - r.pos) / id
			if k > rem {
				k = rem
			}
			b := r.buf[r.pos : r.pos+k*id]
			if id == 4 {
				for i := 0; i < len(b); i += 4 {
					s.Elements = append(s.Elements, uint64(binary.BigEndian.Uint32(b[i:])))
				}
			} else {
				for i := 0; i < len(b); i += 8 {
					s.Elements = append(s.Elements, binary.BigEndian.Uint64(b[i:]))
				}
			}
			r.pos += k * id
			rem -= k
		}
	case PrimitiveArrayTag, PrimitiveArrayNoData:
		if err := r.need(id+9, s); err != nil {
			return err
		}
		b := r.buf[r.pos:]
		s.ID = r.id(b)
		s.StackTrace = binary.BigEndian.Uint32(b[id:])
		s.Length = binary.BigEndian.Uint32(b[id+4:])
		s.ElemType = BasicType(b[id+8])
		r.pos += id + 9
		if !s.ElemType.Valid() || s.ElemType == Object {
			return &FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("invalid element type %d", s.ElemType)}
		}
		s.Data = nil
		if s.Tag == PrimitiveArrayNoData {
			break
		}
		n := int64(s.Length) * int64(s.ElemType.Size(id))
		if r.Offset()+n > r.recEnd {
			return r.overrun(s, n)
		}
		if r.ArrayData {
			data, err := r.readN(n, s.Offset, s.Tag.String(), int(s.Tag))
			if err != nil {
				return err
			}
			s.Data = data
		} else if err := r.skipTo(r.Offset() + n); err != nil {
			return err
		}
	case ClassDumpTag:
		return r.readClassDump(s)
	default:
		return &FormatError{Offset: off, Record: r.rec.Tag.String() + " sub-record", Tag: int(s.Tag), Msg: "unknown tag"}
	}
	return nil
}

func (r *Reader) overrun(s *SubRecord, n int64) error {
	return &FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag),
		Msg: fmt.Sprintf("%d bytes of data run past the end of its %s at offset %d", n, r.rec.Tag, r.rec.Offset)}
}

func (r *Reader) readValue(t BasicType, s *SubRecord) (uint64, error) {
	sz := t.Size(r.idSize)
	if sz == 0 {
		return 0, &FormatError{Offset: r.Offset() - 1, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("invalid basic type %d", t)}
	}
	if err := r.need(sz, s); err != nil {
		return 0, err
	}
	b := r.buf[r.pos:]
	var v uint64
	switch sz {
	case 1:
		v = uint64(b[0])
	case 2:
		v = uint64(binary.BigEndian.Uint16(b))
	case 4:
		v = uint64(binary.BigEndian.Uint32(b))
	case 8:
		v = binary.BigEndian.Uint64(b)
	}
	r.pos += sz
	return v, nil
}

func (r *Reader) readClassDump(s *SubRecord) error {
	id := r.idSize
	if err := r.need(7*id+8+2, s); err != nil {
		return err
	}
	c := &s.Class
	b := r.buf[r.pos:]
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
	r.pos += 7*id + 10
	s.ID = c.ID
	c.Constants = c.Constants[:0]
	for i := 0; i < n; i++ {
		if err := r.need(3, s); err != nil {
			return err
		}
		e := Constant{Index: binary.BigEndian.Uint16(r.buf[r.pos:]), Type: BasicType(r.buf[r.pos+2])}
		r.pos += 3
		v, err := r.readValue(e.Type, s)
		if err != nil {
			return err
		}
		e.Value = v
		c.Constants = append(c.Constants, e)
	}
	if err := r.need(2, s); err != nil {
		return err
	}
	n = int(binary.BigEndian.Uint16(r.buf[r.pos:]))
	r.pos += 2
	c.Statics = c.Statics[:0]
	for i := 0; i < n; i++ {
		if err := r.need(id+1, s); err != nil {
			return err
		}
		f := StaticField{Name: r.id(r.buf[r.pos:]), Type: BasicType(r.buf[r.pos+id])}
		r.pos += id + 1
		v, err := r.readValue(f.Type, s)
		if err != nil {
			return err
		}
		f.Value = v
		c.Statics = append(c.Statics, f)
	}
	if err := r.need(2, s); err != nil {
		return err
	}
	n = int(binary.BigEndian.Uint16(r.buf[r.pos:]))
	r.pos += 2
	c.Fields = c.Fields[:0]
	for i := 0; i < n; i++ {
		if err := r.need(id+1, s); err != nil {
			return err
		}
		f := Field{Name: r.id(r.buf[r.pos:]), Type: BasicType(r.buf[r.pos+id])}
		if !f.Type.Valid() {
			return &FormatError{Offset: r.Offset() + int64(id), Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("invalid field type %d", f.Type)}
		}
		r.pos += id + 1
		c.Fields = append(c.Fields, f)
	}
	return nil
}
