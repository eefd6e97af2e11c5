package bmd

// ObjectRecord is an object record as NextObjects decodes it: an
// INSTANCE, OBJECT ARRAY, PRIMITIVE ARRAY or PRIMITIVE ARRAY NODATA, with
// the fields Next would set in a Record. Which are set depends on Kind.
type ObjectRecord struct {
	Kind  Kind
	Type  Type   // PRIMITIVE ARRAY (NODATA): the element type
	Trace uint32 // stack trace serial
	Count uint32 // array length
	ID    uint64
	Class uint64 // INSTANCE, OBJECT ARRAY
	// Lo and Hi place the record's values in the values NextObjects
	// returns: an instance's Values, an object array's Elements.
	Lo, Hi int
}

// NextObjects decodes the object records that come next, as Next would
// return them one by one, into objs, and appends their values (an
// instance's Values, an object array's Elements) to vals. It returns how
// many records it decoded and the values. It stops after len(objs)
// records, after the record that brings the values it appended to
// MaxBatchValues or more, before any record that is not an object, and
// before one that Next would read in another way: not whole in the read
// buffer, with a malformed or long value, an object array of more than
// MaxElements elements, the end of an OBJECTS run, anything wrong. Next
// then reads that record (and returns its error, if any), so a loop that
// calls NextObjects, and Next when it returns 0, reads the file as Next
// alone does: the same records and the same errors. The values are
// decoded in place, in vals's spare room where they fit: a reader that
// hands them on (decrunch's pipeline) saves a copy of each.
//
// vals grows by append as needed; pass the returned values back to reuse
// them. With SkipValues, no values are appended. The Record that Next
// returned before is reused, as by Next.
func (r *Reader) NextObjects(objs []ObjectRecord, vals []uint64) (int, []uint64) {
	if r.held || r.runLeft > 0 || r.slowOnly {
		return 0, vals
	}
	rec := &r.rec
	own, ownElems := rec.Values, rec.Elements
	n, most := 0, len(vals)+MaxBatchValues
	for n < len(objs) && len(vals) < most {
		if r.inObjects && r.off() >= r.objEnd {
			break // endObjects checks the run in Next
		}
		b := r.input.buf.Buffered()
		if len(b) < 2 {
			break
		}
		// The fast path's appends stay in vals's spare room where it
		// has enough (appendDecoded).
		spare := vals[len(vals):cap(vals)]
		var k int
		switch Kind(b[0]) {
		case KindInstance:
			rec.Values = spare[:0]
			k = r.fastInstance(rec, b)
		case KindObjectArray:
			rec.Elements = spare[:0]
			k = r.fastObjectArray(rec, b)
		case KindPrimitiveArray, KindPrimitiveNoData:
			k = r.fastPrimitiveArray(rec, b)
		}
		if k == 0 {
			break
		}
		r.input.buf.Discard(k)
		o := &objs[n]
		o.Kind, o.Trace, o.ID, o.Lo = rec.Kind, rec.Trace, rec.ID, len(vals)
		switch rec.Kind {
		case KindInstance:
			vals = appendDecoded(vals, spare, rec.Values)
			o.Class = rec.Class
		case KindObjectArray:
			vals = appendDecoded(vals, spare, rec.Elements)
			o.Class, o.Count = rec.Class, rec.Count
		default:
			o.Type, o.Count = rec.Type, rec.Count
		}
		o.Hi = len(vals)
		n++
	}
	// The Record's slices are the Reader's own again: Next must not
	// write in the caller's values.
	rec.Values, rec.Elements = own[:0], ownElems[:0]
	return n, vals
}

// MaxBatchValues bounds the values one call of NextObjects appends: it
// decodes no record after the one that reaches it. An instance has a
// value for each field of its class and superclasses, the dropped
// primitive fields too, which take no byte of the file: the two-byte
// INSTANCE records of a class of 65,535 fields (a file of 135 KB) made
// 33.6 M values (269 MB) in one call before the bound, until the layout
// work the file's size allows ran out; with a megabyte of other records
// before them, 769 MB.
const MaxBatchValues = 1 << 16

// appendDecoded appends v to vals: v was decoded into spare, vals's spare
// room, if it fitted there (an append within its capacity stays in it),
// and is then in place; else it is in a slice of its own.
func appendDecoded(vals, spare, v []uint64) []uint64 {
	if len(v) <= len(spare) {
		return vals[:len(vals)+len(v)]
	}
	return append(vals, v...)
}
