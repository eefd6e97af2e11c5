package crunch

import (
	"fmt"
	"io"
	"slices"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// With more than one core, pass 2 runs on two goroutines (with one, on
// one: pass2.single): one reads the dump and does what needs
// only what pass 1 built (the indexes, the class layouts): it parses each
// record, decodes the instance values the BMD keeps (picks), and maps the
// IDs of objects, roots and array classes to dense IDs; the other writes
// the BMD file in order, with everything that depends on what was written
// before (names, class definitions, chunks, unknown IDs). Mapping the
// references among the values (aheadBatch.resolveRefs) is shared: the
// reader maps those of the batch it is about to send while the writer is
// busy, the writer the rest, so that neither waits for the other whichever
// is faster on a dump.
// Batches of records go from the first to the second and back for reuse,
// so the reading runs ahead by at most a few batches.

// aheadKind says what an ahead item is.
type aheadKind uint8

const (
	aheadTop        aheadKind = iota // a top-level record other than a heap dump
	aheadHeapDump                    // the start of a HEAP DUMP (SEGMENT) record
	aheadSub                         // a sub-record of the heap dump
	aheadHeapEnd                     // the end of the heap dump record
	aheadSubFailed                   // a sub-record whose resolution failed: err
	aheadArrayPiece                  // elements of the object array before, read in pieces
)

// aheadPieces marks, in ahead.elem, an object array whose elements come
// after it in pieces (aheadArrayPiece items; reader.arrayPieces).
const aheadPieces = 1

// arrayPiece is how many elements of an object array are read, resolved
// and written at a time: an array of more is never held whole (an
// Object[40_000_000] took 1.09 GB of peak RSS to crunch when it was), and
// is written outside the runs of objects (bmd.Writer.BeginObjectArray).
const arrayPiece = 1 << 16

// maxArrayWhole is the longest object array held whole (arrayPiece; tests
// set 0 to hold every array whole, as before arrays were read in pieces).
var maxArrayWhole = arrayPiece

// ahead is one record or sub-record, read and resolved: 32 bytes, as
// several million of them go from one goroutine to the other (storing and
// loading them is a fair part of pass 2's time), so fields serve several
// kinds:
//
//	kind            n             lo               id                   aux
//	top-level       body length   body in bytes    file offset
//	heap dump       body length                    file offset
//	instance        class index   values in vals   own dense ID (*)     end of its values
//	object array    length        values in vals   own dense ID (*)     dense ID of its class
//	  (in pieces: elem aheadPieces, its values in the aheadArrayPiece items after it)
//	array piece     count         values in vals
//	primitive array length                         own dense ID (*)
//	class dump                    index in dumps   raw class ID
//	HEAP DUMP INFO  heap type                      name's string ID
//	root            frame         thread           dense ID of object   JNI GLOBAL's reference ID
//	failed                        index in errs
//
// (*) in a file where objects are dumped more than once (state.redumps).
type ahead struct {
	kind  aheadKind
	tag   uint8  // hprof.Tag or hprof.SubTag
	elem  uint8  // primitive array element type
	n     uint32 // see the table
	trace uint32 // stack trace serial; a top-level record's time
	lo    uint32 // see the table
	id    uint64 // see the table
	aux   uint64 // see the table
}

// aheadBatch is a run of items and the data they point to.
type aheadBatch struct {
	items  []ahead
	vals   []uint64 // dense IDs (or misses) and primitive values
	bytes  []byte   // top-level record bodies
	misses []uint64 // IDs no index holds, in order of use
	missAt []uint32 // for each miss among vals, its place there
	refAt  []uint32 // the places in vals of object IDs to resolve
	nRefs  int      // those of refAt resolved
	sink   uint64   // what rankIndex.touch returns, kept
	dumps  []*hprof.ClassDump
	errs   []error
	err    error // the reading error after the items, if any
}

// missBit marks, in a resolved ID, an ID no index holds: the low bits are
// its place in batch.misses. The writer gives it a dense ID (obj), in
// order, as it does for every other unknown ID. Among vals, where
// primitive values may have any bits, missAt says which values are misses.
const missBit = 1 << 63

// A batch is sent when it holds this many items, values or body bytes (a
// single large array or record makes one larger batch). Batches are
// large: each batch handed over may wake the other goroutine's thread,
// which costs tens of microseconds. (With one core, pass 2 runs on one
// goroutine: pass2.single.)
const (
	batchItems = 16384
	batchVals  = 1 << 18
	batchBytes = 1 << 20
)

func (b *aheadBatch) reset() {
	b.items, b.vals, b.bytes, b.misses, b.missAt, b.refAt, b.nRefs, b.err = b.items[:0], b.vals[:0], b.bytes[:0], b.misses[:0], b.missAt[:0], b.refAt[:0], 0, nil
	clear(b.dumps)
	b.dumps, b.errs = b.dumps[:0], b.errs[:0]
}

// reserve gives an empty batch room for what it may hold, at once:
// grown by append, a quarter at a time, its buffers would be copied
// several times over before they reach that size. They are made empty,
// not grown (slices.Grow zeroes the room it adds): the memory of a new
// buffer is touched only as a batch fills it, and a batch cut by its
// items leaves most of its values' room untouched.
func (b *aheadBatch) reserve() {
	b.items = emptyWithCap(b.items, batchItems+2)
	b.vals = emptyWithCap(b.vals, batchVals+4096)
	b.refAt = emptyWithCap(b.refAt, batchVals+4096)
}

// emptyWithCap returns s emptied, or a new empty slice of capacity n if s
// has less.
func emptyWithCap[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// full reports whether the batch is to be sent.
func (b *aheadBatch) full() bool {
	return len(b.items) >= batchItems || len(b.vals) >= batchVals || len(b.bytes) >= batchBytes
}

// reader is the reading side of pass 2.
type reader struct {
	*state
	r    *hprof.Reader
	pipe *pipe[aheadBatch]
	b    *aheadBatch
	stop bool // the writer has stopped
	in   *input
	progress
	classSeen recentClasses // class ID -> class index
	s         hprof.SubRecord
	rec       hprof.Record // the top-level record being read
}

// run reads the dump, sending batches until the end or an error, or until
// the writer stops.
func (rd *reader) run(p *pipe[aheadBatch], b *aheadBatch) {
	rd.pipe, rd.b = p, b
	rd.b.reserve()
	err := rd.readAll()
	if !rd.stop { // else the writer has stopped, and send left no batch
		rd.b.err = err
		p.last(rd.b)
	}
}

// readAll reads the records, a fault reading the mapped file being an
// error.
func (rd *reader) readAll() (err error) {
	defer guard()()
	defer rd.in.catchFault(&err)
	return rd.records()
}

// send passes the current batch on and takes a free one. While the writer
// is busy with the batches before, it resolves the batch's references,
// a few at a time, for the writer to have fewer to resolve.
func (rd *reader) send() bool {
	b := rd.b
	if rd.b = rd.pipe.sendWhile(b, func() bool { return b.resolveRefs(rd.state, resolveStep) }); rd.b == nil {
		rd.stop = true
		return false
	}
	rd.b.reset()
	rd.b.reserve()
	return true
}

// errStopped ends the reading when the writer has stopped.
var errStopped = fmt.Errorf("crunch: pass 2 stopped")

func (rd *reader) records() error {
	return rd.eachRecord(rd.heapDump, func() error {
		if rd.b.full() && !rd.send() {
			return errStopped
		}
		return nil
	})
}

// eachRecord reads the top-level records, adding the item of each
// (reader.top); subs reads the sub-records of a heap dump record, after
// which its end item is added; after is called at the end of each
// record.
func (rd *reader) eachRecord(subs, after func() error) error {
	for rec, err := range rd.r.Records() {
		if err != nil {
			return err
		}
		if err := rd.startRecord(rec); err != nil {
			return err
		}
		if rec.Tag.IsHeapDump() {
			if err := subs(); err != nil {
				return err
			}
			rd.endHeapDump()
		}
		if err := after(); err != nil {
			return err
		}
	}
	return nil
}

// startRecord starts top-level record rec, whose header the reader has
// read: its item added (top), progress reported and the input before it
// given back.
func (rd *reader) startRecord(rec hprof.Record) error {
	rd.rec = rec
	rd.progress.at(rec.Offset)
	rd.in.release(rec.Offset)
	return rd.top(rec)
}

// endHeapDump adds the item of the end of a heap dump record, after its
// sub-records'.
func (rd *reader) endHeapDump() {
	rd.b.items = append(rd.b.items, ahead{kind: aheadHeapEnd})
}

// top adds the item of a top-level record (for a heap dump record, the
// item of its start: its sub-records follow), with its body if the writer
// needs it.
func (rd *reader) top(rec hprof.Record) error {
	it := ahead{kind: aheadTop, tag: uint8(rec.Tag), trace: rec.Time, n: rec.Length, id: uint64(rec.Offset)}
	switch {
	case rec.Tag.IsHeapDump():
		it.kind = aheadHeapDump
	case rec.Tag == hprof.TagString, rec.Tag == hprof.TagLoadClass, rec.Tag == hprof.TagHeapDumpEnd:
		// the writer needs no body
	default:
		body, err := rd.r.Body()
		if err != nil {
			return err
		}
		it.lo, it.n = uint32(len(rd.b.bytes)), uint32(len(body))
		rd.b.bytes = append(rd.b.bytes, body...)
	}
	rd.b.items = append(rd.b.items, it)
	return nil
}

func (rd *reader) heapDump() error {
	s := &rd.s
	for {
		// NextSub in a plain loop, not through SubRecords: no call of a
		// loop body per sub-record.
		if err := rd.r.NextSub(s); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		rd.sub(s)
		if s.Tag == hprof.SubObjectArrayDump && s.Pending > 0 {
			if err := rd.arrayPieces(s, func() error { return rd.sendIfFull(rd.r.Offset()) }); err != nil {
				return err
			}
		}
		if rd.b.full() { // here, not through sendIfFull, which is not inlined
			if err := rd.sendAt(s.Offset); err != nil {
				return err
			}
		}
	}
}

// readTo notes the input before offset off read: progress reported, the
// pages of the mapped file given back.
func (rd *reader) readTo(off int64) {
	rd.progress.at(off)
	rd.in.release(off)
}

// nextMark returns the offset from which readTo does something (reports
// progress or gives pages back): readTo of an offset below it may be left
// out.
func (rd *reader) nextMark() int64 {
	mark := rd.in.released + releaseStep
	if rd.progress.f != nil {
		mark = min(mark, rd.progress.next)
	}
	return mark
}

// sendIfFull sends the batch if it is full, the input before offset off
// read.
func (rd *reader) sendIfFull(off int64) error {
	if rd.b.full() {
		return rd.sendAt(off)
	}
	return nil
}

// sendAt sends the batch, the input before offset off read.
func (rd *reader) sendAt(off int64) error {
	rd.readTo(off)
	if !rd.send() {
		return errStopped
	}
	return nil
}

// arrayPieces reads the elements of the object array s that the Reader
// left pending (hprof.Reader.MaxElements), arrayPiece at a time, each
// piece an item after the array's, and calls flush after each.
func (rd *reader) arrayPieces(s *hprof.SubRecord, flush func() error) error {
	for s.Pending > 0 {
		if err := rd.r.NextElements(s, arrayPiece); err != nil {
			return err
		}
		it := ahead{kind: aheadArrayPiece, lo: uint32(len(rd.b.vals)), n: uint32(len(s.Elements))}
		rd.addRefs(s.Elements)
		rd.b.items = append(rd.b.items, it)
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// addRefs adds object IDs to the batch's values, to be resolved.
func (rd *reader) addRefs(ids []uint64) {
	// Room for all at once: a large array (a big HashMap's table) grown
	// an append at a time was copied over and over.
	rd.b.refAt = slices.Grow(rd.b.refAt, len(ids))
	rd.b.vals = slices.Grow(rd.b.vals, len(ids))
	for _, e := range ids {
		rd.b.refAt = append(rd.b.refAt, uint32(len(rd.b.vals)))
		rd.b.vals = append(rd.b.vals, e)
	}
}

// sub adds a sub-record, resolved.
func (rd *reader) sub(s *hprof.SubRecord) {
	it := ahead{kind: aheadSub, tag: uint8(s.Tag), trace: s.StackTrace}
	if rd.redumps {
		switch s.Tag {
		case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
			it.id = rd.resolve(s.ID)
		}
	}
	switch {
	case s.Tag == hprof.SubInstanceDump:
		if err := rd.instance(s, &it); err != nil {
			it = ahead{kind: aheadSubFailed, lo: uint32(len(rd.b.errs))}
			rd.b.errs = append(rd.b.errs, err)
		}
	case s.Tag == hprof.SubObjectArrayDump:
		it.aux = rd.arrayClass(s.ClassID)
		if s.Pending > 0 { // its elements follow in pieces (arrayPieces)
			it.elem, it.n = aheadPieces, s.Length
			break
		}
		it.lo, it.n = uint32(len(rd.b.vals)), uint32(len(s.Elements))
		rd.addRefs(s.Elements)
	case s.Tag == hprof.SubPrimitiveArrayDump, s.Tag == hprof.SubPrimitiveArrayNoData:
		it.elem, it.n = uint8(s.ElemType), s.Length
	case s.Tag == hprof.SubClassDump:
		it.id, it.lo = s.ID, uint32(len(rd.b.dumps))
		rd.b.dumps = append(rd.b.dumps, s.Class.Clone())
	case s.Tag == hprof.SubHeapDumpInfo:
		it.n, it.id = s.HeapType, s.HeapName
	case s.Tag.IsRoot():
		it.id, it.lo, it.n, it.aux = rd.resolve(s.ID), s.Thread, s.Frame, s.JNIRef
	}
	rd.b.items = append(rd.b.items, it)
}

// instance decodes the values an instance keeps (picks), its references
// to be resolved.
func (rd *reader) instance(s *hprof.SubRecord, it *ahead) error {
	k, _, err := rd.instanceClass(s)
	if err != nil {
		return err
	}
	it.n, it.lo = uint32(k), uint32(len(rd.b.vals))
	for _, f := range rd.picks(k) {
		if f.ref {
			rd.b.refAt = append(rd.b.refAt, uint32(len(rd.b.vals)))
		}
		rd.b.vals = append(rd.b.vals, readValue(s.Data[f.off:], int(f.size)))
	}
	it.aux = uint64(len(rd.b.vals))
	return nil
}

// instanceClass returns the class index of an instance's class, and the
// class (rd.classes[k]), after checking that the instance has the bytes
// of fields its class layout has.
func (rd *reader) instanceClass(s *hprof.SubRecord) (int, *classInfo, error) {
	return rd.instanceClassAt(s.Offset, s.ClassID, len(s.Data))
}

// instanceClassAt is instanceClass for the instance at file offset off
// of class ID class with size bytes of fields.
func (rd *reader) instanceClassAt(off int64, class uint64, size int) (int, *classInfo, error) {
	k, err := rd.classOf(off, class)
	if err != nil {
		return 0, nil, err
	}
	ci := rd.classes[k]
	if ci.chainSize != size {
		return 0, nil, instanceError(off, fmt.Sprintf("instance has %d bytes of fields, its class layout %d", size, ci.chainSize))
	}
	return k, ci, nil
}

// classOf returns the class index of the class of ID class of the
// instance at file offset off.
func (rd *reader) classOf(off int64, class uint64) (int, error) {
	if k, ok := rd.classSeen.get(class); ok {
		return int(k), nil
	}
	o, ok := rd.classIndex.lookup(class)
	if !ok {
		return 0, instanceError(off, fmt.Sprintf("instance of class 0x%x, which has no CLASS DUMP", class))
	}
	rd.classSeen.put(class, int32(o))
	return int(o), nil
}

// instanceError is the error msg of the instance at file offset off.
func instanceError(off int64, msg string) error {
	t := hprof.SubInstanceDump
	return &hprof.FormatError{Offset: off, Record: t.String(), Tag: int(t), Msg: msg}
}

// arrayClass resolves the class ID of an object array: a class, met
// again and again (a heap's object arrays have few classes), from the
// recent classes, where resolve would look in the object index first; any
// other ID as resolve does. A class's dense ID is its class index + 1.
func (rd *reader) arrayClass(id uint64) uint64 {
	if c, ok := rd.class(id); ok {
		return c
	}
	return rd.resolve(id)
}

// class returns the dense ID of the class with HPROF ID id, if it is a
// class of the dump, from the recent classes first.
func (rd *reader) class(id uint64) (uint64, bool) {
	if k, ok := rd.classSeen.get(id); ok {
		return uint64(k) + 1, true
	}
	o, ok := rd.classIndex.lookup(id)
	if !ok {
		return 0, false
	}
	rd.classSeen.put(id, int32(o))
	return uint64(o) + 1, true
}

// resolve maps an object ID to its dense ID with what pass 1 built, or
// to a miss (missBit) for the writer to number.
func (rd *reader) resolve(id uint64) uint64 {
	return rd.b.resolve(rd.state, id)
}

// resolve maps an object ID to its dense ID with the indexes of st, or to
// a miss (missBit) in b for the writer to number. The indexes are only
// read: both goroutines may call it, each on the batch it holds.
func (b *aheadBatch) resolve(st *state, id uint64) uint64 {
	if o, ok := st.rank.lookup(id); ok {
		return st.objBase + uint64(o)
	}
	return b.resolveRest(st, id)
}

// resolveRest is resolve for an ID the bitmap index does not hold.
func (b *aheadBatch) resolveRest(st *state, id uint64) uint64 {
	if d, ok := st.known(id); ok {
		return d
	}
	b.misses = append(b.misses, id)
	return missBit | uint64(len(b.misses)-1)
}

// resolveStep is how many references the reader resolves between two
// looks at whether the writer is free.
const resolveStep = 2048

// touchAhead is how many references resolveRefs looks up at a time, after
// loading their bitmap words (rankIndex.touch).
const touchAhead = 64

// resolveRefs resolves the next object IDs among the batch's values
// (refAt, from nRefs on), at most max of them, all in one loop: the
// index lookups, most of them cache misses, then overlap. It reports
// whether some are left. The writer resolves those the reader did not.
// It is a call of its own (go:noinline): inlined in its two callers, it
// made them too large for the compiler to inline lookup in it in turn, a
// call per reference.
//
//go:noinline
func (b *aheadBatch) resolveRefs(st *state, max int) (more bool) {
	vals := b.vals
	end := min(len(b.refAt), b.nRefs+max)
	for i, at := range b.refAt[b.nRefs:end] {
		if i%touchAhead == 0 {
			b.sink += st.rank.touch(vals, b.refAt[b.nRefs+i:min(b.nRefs+i+touchAhead, end)])
		}
		id := vals[at]
		if id == 0 {
			continue
		}
		if o, ok := st.rank.lookup(id); ok {
			vals[at] = st.objBase + uint64(o)
			continue
		}
		vals[at] = b.resolveRest(st, id)
		if vals[at]&missBit != 0 {
			b.missAt = append(b.missAt, at)
		}
	}
	b.nRefs = end
	return end < len(b.refAt)
}
