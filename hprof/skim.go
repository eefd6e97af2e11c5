package hprof

// ObjectHead is the fixed part of an object sub-record, as SkimObjects reads
// it: what a reader that learns where the objects are needs, without their
// contents.
type ObjectHead struct {
	Offset int64 // file offset of the sub-tag byte
	ID     uint64
	// ClassID is the class of an instance or of an object array; 0 for a
	// primitive array.
	ClassID uint64
	// StackTrace is the stack trace serial.
	StackTrace uint32
	// Length is the size in bytes of an instance's field data, or the
	// element count of an array.
	Length uint32
	Tag    SubTag // SubInstanceDump, SubObjectArrayDump or SubPrimitiveArrayDump
	// ElemType is the element type of a primitive array; 0 for others.
	ElemType BasicType
}

// SkimObjects reads the object sub-records (INSTANCE DUMP, OBJECT ARRAY
// DUMP, PRIMITIVE ARRAY DUMP) that come next in the current heap dump
// record into heads, their fixed parts only, skipping their contents, and
// returns how many it read: at most len(heads), and none that starts at
// file offset until or after it (until <= 0: no such bound). It stops
// early at any other sub-record, at the record's end, at one that NextSub
// would reject, and where fewer bytes are buffered than the next object
// takes, or than the longest fixed part of all (2*8+9 bytes, whatever the
// ID size, so also before a short object at the buffer's or the record's
// end); so it may return 0 with sub-records left, and NextSub then reads
// the next one, or reports what is wrong with it. The sub-records it
// reads are the ones NextSub would read, with the same checks; it does
// their work in one loop rather than a call each, for a reader that
// visits millions of objects and needs only their IDs, classes and sizes.
func (r *Reader) SkimObjects(heads []ObjectHead, until int64) int {
	n, _, _ := r.skimObjects(heads, until, 0)
	return n
}

// SkimObjectsData is SkimObjects for a reader that needs the objects'
// contents too (an instance's field values, an array's elements): it also
// returns the bytes the heads were read from, the first at file offset
// base, in which head h's contents are h.Contents(data, base, r.IDSize()),
// valid until the next call on r. It stops too before an object array
// longer than MaxElements (unless SkipElements), which NextSub reads with
// its elements pending.
func (r *Reader) SkimObjectsData(heads []ObjectHead, until int64) (n int, data []byte, base int64) {
	maxElems := uint32(0)
	if r.MaxElements > 0 && !r.SkipElements {
		maxElems = uint32(min(uint64(r.MaxElements), 1<<32-1))
	}
	return r.skimObjects(heads, until, maxElems)
}

// skimObjects is SkimObjects and SkimObjectsData, stopping before an
// object array of more than maxElems elements (0: no limit).
func (r *Reader) skimObjects(heads []ObjectHead, until int64, maxElems uint32) (int, []byte, int64) {
	off := r.Offset()
	if !r.inRecord || !r.rec.Tag.IsHeapDump() || off >= r.recEnd || r.pending > 0 {
		return 0, nil, off // (elements left for NextElements: NextSub skips them)
	}
	b := r.in.Buffered()
	if rest := r.recEnd - off; int64(len(b)) > rest {
		b = b[:rest]
	}
	stop := len(b) // the sub-records read start before b[stop]
	if until > 0 && until-off < int64(stop) {
		stop = int(max(until-off, 0))
	}
	var n, p int
	if r.idSize == 4 {
		n, p = skim[uint32](b, stop, heads, off, maxElems)
	} else {
		n, p = skim[uint64](b, stop, heads, off, maxElems)
	}
	r.in.Discard(p)
	return n, b, off
}

// Contents returns the contents of the object sub-record of head h in
// data, the bytes from file offset base on that SkimObjectsData returned
// with h, in a file of IDs of idSize bytes: an instance's field values,
// an object array's element IDs, or a primitive array's elements.
func (h *ObjectHead) Contents(data []byte, base int64, idSize int) []byte {
	start, n := int(h.Offset-base)+2*idSize+9, int(h.Length)
	switch h.Tag {
	case SubObjectArrayDump:
		n *= idSize
	case SubPrimitiveArrayDump:
		start, n = start-idSize+1, n*h.ElemType.Size(idSize)
	}
	return data[start : start+n]
}

// skim reads into heads the object sub-records of b, a file's bytes from
// offset off on, with IDs of type ID (4 or 8 bytes), that start before
// b[stop], and none past an object array of more than maxElems elements
// (0: no limit); it returns how many it read and the bytes they take. Its
// checks are fastSub's. It is compiled for each ID size apart, the size a
// constant, and, as in fastSub, the bytes it asks for before a
// sub-record are the longest fixed part of all, a constant too, so that
// the compiler checks the bounds of the tag and of the fixed parts once:
// from 75 to 54 instructions an object (cachegrind, 134 MB dump).
func skim[ID uint32 | uint64](b []byte, stop int, heads []ObjectHead, off int64, maxElems uint32) (n, p int) {
	const fixedMax = 2*8 + 9 // that of 8-byte IDs, tag included: at least 2*id+9
	id := 4
	if uint64(^ID(0)) > 1<<32-1 {
		id = 8
	}
	end := min(stop, len(b)-fixedMax+1)
	b = b[:len(b):len(b)] // one value, not two, for the bounds checks of b
	for n < len(heads) && p < end {
		c := (*[fixedMax]byte)(b[p : p+fixedMax])
		rest := len(b) - p
		h := &heads[n]
		switch SubTag(c[0]) {
		case SubInstanceDump:
			obj, trace, class, size := instanceFixed(c[1:], id)
			if uint64(size) > uint64(rest-2*id-9) {
				return n, p
			}
			h.ID, h.ClassID, h.Length, h.StackTrace = obj, class, size, trace
			h.Tag, h.ElemType, h.Offset = SubInstanceDump, 0, off+int64(p)
			p += 2*id + 9 + int(size)
		case SubObjectArrayDump:
			obj, trace, length, class := objectArrayFixed(c[1:], id)
			if uint64(length)*uint64(id) > uint64(rest-2*id-9) || maxElems > 0 && length > maxElems {
				return n, p
			}
			h.ID, h.ClassID, h.Length, h.StackTrace = obj, class, length, trace
			h.Tag, h.ElemType, h.Offset = SubObjectArrayDump, 0, off+int64(p)
			p += 2*id + 9 + int(length)*id
		case SubPrimitiveArrayDump:
			obj, trace, length, t := primitiveArrayFixed(c[1:], id)
			if !t.Valid() || t == Object {
				return n, p
			}
			size := uint64(length) * uint64(t.Size(id))
			if size > uint64(rest-id-10) {
				return n, p
			}
			h.ID, h.ClassID, h.Length, h.ElemType, h.StackTrace = obj, 0, length, t, trace
			h.Tag, h.Offset = SubPrimitiveArrayDump, off+int64(p)
			p += id + 10 + int(size)
		default:
			return n, p
		}
		n++
	}
	return n, p
}
