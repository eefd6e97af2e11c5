package decrunch

import (
	"encoding/binary"
	"io"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/cores"
)

// The second pass runs on two goroutines where that is faster
// (secondPass, which times both ways on large files; else on one, runOne,
// which writes each record as it reads it): one reads the BMD records,
// the other converts and writes them in order. Reading (decoding the
// varints and references of the BMD) takes about half of the work and
// cannot be split, so the reader does no more than decode the objects
// into a batch, a run at a time where it can (aheadRun), keep the roots'
// fields, and copy the other records; the writer makes the HPROF IDs,
// encodes the fields, and handles every other record as the first pass's
// reading does. Batches go from the reader to the writer and back for
// reuse.

// aheadItem is a record read ahead: an object, as its dense IDs and
// values, a GC root, as its fields (aheadBatch.roots), or any other
// record, as a copy. Items are small (48 bytes):
// writing them is much of the reader's work.
type aheadItem struct {
	// tag is the sub-record's, or 0 for a copied record (batch.recs[lo]),
	// a run of objects (elem aheadRun) or a root (elem aheadRoot,
	// batch.roots[lo]).
	tag   hprof.SubTag
	elem  hprof.BasicType
	trace uint32
	// length is a primitive array's length, or an object array's whose
	// elements come in pieces (elem aheadPieces; then the items of its
	// pieces, elem aheadPiece, lo and hi); for an instance whose shape
	// is not remembered (shape nil), where its types start in
	// batch.types (as many as its values).
	length uint32
	lo, hi uint32 // instance values or array elements in batch.vals
	id     uint64 // dense IDs
	class  uint64
	shape  *classShape // an instance's, if remembered
}

// aheadBatch is a run of items and the values they point to.
type aheadBatch struct {
	items []aheadItem
	// objs are the objects of the items of aheadRun (lo to hi), as
	// bmd.Reader.NextObjects decoded them, and shapes the shapes of the
	// instances among them, if remembered (else, for such an instance,
	// its ObjectRecord's Count, which an instance has no use for, is
	// where its types start in types).
	objs   []bmd.ObjectRecord
	shapes []*classShape
	vals   []uint64       // instance field values and array elements, as the BMD reader gives them
	types  []bmd.Type     // the field types of instances whose shapes are not remembered
	roots  []aheadRootRec // the roots of the items of aheadRoot (lo)
	recs   []*bmd.Record  // copies of the other records
	held   int            // bytes held by the copied records
	err    error          // the reading error after the items, if any
}

// Batches are small and many are in flight: how long a batch takes to
// read or to write varies with its objects, and with one batch ahead
// each side waited for the other about a third of the time (on a 134 MB
// dump's BMD, reader blocked 62-96 ms and writer 87-100 ms of a 195-270
// ms second pass; with 8 in flight 3-8 and 29-42 ms).
const (
	aheadBatches = 8
	aheadItems   = 2048
	aheadVals    = 1 << 16
	aheadHeld    = 1 << 20
)

func (b *aheadBatch) full() bool {
	return len(b.items) >= aheadItems || len(b.objs) >= aheadItems || len(b.vals) >= aheadVals || len(b.types)+b.held >= aheadHeld
}

// readAhead reads src into batches until the end, an error, or done; or
// until it has read c.aheadLeft objects (see fill), when it sets
// c.aheadStopped.
func (c *converter) readAhead(src Source, out chan<- *aheadBatch, free chan *aheadBatch, done <-chan struct{}) {
	defer close(out)
	b := <-free
	for c.fill(src, b) {
		select {
		case out <- b:
		case <-done:
			return
		}
		if c.aheadStopped {
			return
		}
		select {
		case b = <-free:
			b.reset()
		case <-done:
			return
		}
	}
	select {
	case out <- b:
	case <-done:
	}
}

// fill reads records of src into b until it is full, and reports whether
// there are more; at the end, b.err is the error that ended the reading,
// if any. Once c.aheadLeft objects are read, outside an object array's
// pieces, it ends the batch there and sets c.aheadStopped.
func (c *converter) fill(src Source, b *aheadBatch) (more bool) {
	r, runs := src.(*bmd.Reader)
	for {
		if c.piecesOf != nil { // an object array's elements, in pieces
			if !c.aheadPiece(src.(elementSource), b) {
				return false
			}
		} else if runs && c.aheadRun(r, b) {
			// objects, a run at a time
		} else {
			rec, err := src.Next()
			if err != nil {
				if err != io.EOF {
					b.err = err
				}
				return false
			}
			c.ahead(b, rec)
		}
		if b.full() {
			return true
		}
		if c.aheadLeft == 0 && c.piecesOf == nil {
			c.aheadStopped = true
			return true
		}
	}
}

// aheadRootRec is a GC root read ahead: its record's fields, and its
// offset, which an ID too large for the file names (placeOverflow). An
// Android dump has a root for each interned string (410,199 in the
// Android-shaped dump of docs/measurements.md): copied as records
// (copyRecord), they made half of decrunch's allocations there, 36 MB.
type aheadRootRec struct {
	object, jniRef       uint64
	offset               int64
	thread, frame, trace uint32
	kind                 uint8
}

// reset empties the batch for reuse.
func (b *aheadBatch) reset() {
	b.items, b.vals, b.types, b.recs, b.held, b.err = b.items[:0], b.vals[:0], b.types[:0], b.recs[:0], 0, nil
	b.roots = b.roots[:0]
	b.objs, b.shapes = b.objs[:0], b.shapes[:0]
}

// aheadRun adds to the batch, as one item, the objects that come next
// and that r decodes a run at a time (NextObjects), up to the batch's
// room and c.aheadLeft, and reports whether there were any: the reader's
// work without a Record per object, nor a copy of its values (the
// reader, not the writer, took most of the time of the pipeline: 60 %
// of the samples of both against 28 %, perf, the 134 MB dump's BMD). The
// shapes are found here, where the reader is the one to make them.
func (c *converter) aheadRun(r *bmd.Reader, b *aheadBatch) bool {
	lo := len(b.objs)
	room := min(uint64(cap(b.objs)-lo), c.aheadLeft)
	if room == 0 {
		return false
	}
	n, vals := r.NextObjects(b.objs[lo:lo+int(room)], b.vals)
	if n == 0 {
		return false
	}
	b.vals = vals
	b.objs = b.objs[:lo+n]
	for i := lo; i < lo+n; i++ {
		var sh *classShape
		if o := &b.objs[i]; o.Kind == bmd.KindInstance {
			s, kept := c.shape(o.Class)
			if kept {
				sh = s
			} else {
				o.Count = uint32(len(b.types))
				b.types = append(b.types, s.types...)
			}
		}
		b.shapes = append(b.shapes, sh)
	}
	b.items = append(b.items, aheadItem{elem: aheadRun, lo: uint32(lo), hi: uint32(lo + n)})
	c.aheadLeft -= uint64(n)
	return true
}

// ahead adds a record to the batch: an object as its dense IDs and
// values, a root as its fields, any other record as a copy.
func (c *converter) ahead(b *aheadBatch, rec *bmd.Record) {
	it := aheadItem{trace: rec.Trace, id: rec.ID, class: rec.Class}
	switch rec.Kind {
	case bmd.KindInstance:
		it.tag = hprof.SubInstanceDump
		sh, kept := c.shape(rec.Class)
		if kept {
			it.shape = sh
		} else {
			it.length = uint32(len(b.types))
			b.types = append(b.types, sh.types...)
		}
		it.lo = uint32(len(b.vals))
		b.vals = append(b.vals, rec.Values[:len(sh.types)]...)
		it.hi = uint32(len(b.vals))
	case bmd.KindObjectArray:
		it.tag = hprof.SubObjectArrayDump
		if rec.Pending > 0 { // its elements in the items after it
			it.elem, it.length, c.piecesOf = aheadPieces, rec.Count, rec
			break
		}
		it.lo = uint32(len(b.vals))
		b.vals = append(b.vals, rec.Elements...)
		it.hi = uint32(len(b.vals))
	case bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		it.tag = hprof.SubPrimitiveArrayDump
		if rec.Kind == bmd.KindPrimitiveNoData {
			it.tag = hprof.SubPrimitiveArrayNoData
		}
		it.length, it.elem = rec.Count, hprof.BasicType(rec.Type)
	case bmd.KindString, bmd.KindHashedString, bmd.KindArrayName, bmd.KindLoadClass,
		bmd.KindTrace, bmd.KindEnd, bmd.KindObjectID:
		return // nothing for the second pass to write (see rest)
	case bmd.KindRoot:
		it = aheadItem{elem: aheadRoot, lo: uint32(len(b.roots))}
		b.roots = append(b.roots, aheadRootRec{object: rec.Object, jniRef: rec.JNIRef, offset: rec.Offset,
			thread: rec.Thread, frame: rec.Frame, trace: rec.Trace, kind: rec.Tag})
	default:
		cp := copyRecord(rec)
		it = aheadItem{lo: uint32(len(b.recs))}
		b.recs = append(b.recs, cp)
		b.held += recordSize(cp)
	}
	b.items = append(b.items, it)
	if it.tag != 0 || it.elem == 0 && b.recs[it.lo].Kind == bmd.KindClass {
		c.aheadLeft -= min(c.aheadLeft, 1)
	}
}

// instanceData appends the HPROF field data of an instance, whose fields
// have types and the values vals, to data.
func (c *converter) instanceData(data []byte, types []bmd.Type, vals []uint64) []byte {
	for i, t := range types {
		v := vals[i]
		if t == bmd.Object {
			data = c.enc.AppendID(data, c.obj(v))
			continue
		}
		switch t.Size() {
		case 1:
			data = append(data, byte(v))
		case 2:
			data = binary.BigEndian.AppendUint16(data, uint16(v))
		case 4:
			data = binary.BigEndian.AppendUint32(data, uint32(v))
		case 8:
			data = binary.BigEndian.AppendUint64(data, v)
		}
	}
	return data
}

// copyRecord returns a copy of rec that shares nothing with it.
func copyRecord(rec *bmd.Record) *bmd.Record {
	cp := *rec
	cp.Text = slices.Clone(rec.Text)
	cp.Frames = slices.Clone(rec.Frames)
	cp.Values, cp.Elements = nil, nil
	cp.Def.Constants = slices.Clone(rec.Def.Constants)
	cp.Def.Statics = slices.Clone(rec.Def.Statics)
	cp.Def.Fields = slices.Clone(rec.Def.Fields)
	return &cp
}

// recordSize returns the bytes that a copied record holds apart from
// its struct, so that a batch of records with long names stays small.
func recordSize(rec *bmd.Record) int {
	d := &rec.Def
	return len(rec.Text) + 8*len(rec.Frames) + int(unsafe.Sizeof(bmd.Constant{}))*len(d.Constants) +
		int(unsafe.Sizeof(bmd.Static{}))*len(d.Statics) + int(unsafe.Sizeof(bmd.Field{}))*len(d.Fields)
}

// newAheadBatch returns an empty batch, at its full size at once: grown
// by append, a quarter at a time, its buffers would be copied several
// times over.
func newAheadBatch() *aheadBatch {
	return &aheadBatch{items: make([]aheadItem, 0, aheadItems), vals: make([]uint64, 0, aheadVals),
		objs: make([]bmd.ObjectRecord, 0, aheadItems), shapes: make([]*classShape, 0, aheadItems)}
}

// secondPass runs the second pass on one goroutine (runOne) or on two
// (runAhead), or times both and goes on with the faster (runTimed):
// see cores.Choose, for the objects the file says it holds. Tests
// change it.
var secondPass = func(c *converter, src Source) error {
	var err error
	switch cores.Choose(passObjects(c.meta)) {
	case cores.Two:
		_, err = c.runAhead(src, math.MaxUint64)
	case cores.Measure:
		err = c.runTimed(src, sampleObjects(passObjects(c.meta)), timedRounds, clearMargin)
	default:
		_, err = c.runOne(src, math.MaxUint64)
	}
	return err
}

// A way of running the second pass: it writes records until the end of
// the file (more false), an error, or a record boundary once Stats.Objects
// has reached until (more true).
type passWay func(c *converter, src Source, until uint64) (more bool, err error)

// timedRounds is how many times runTimed times each way, in turns; each
// time for sampleObjects of the pass's objects.
const timedRounds = 2

// sampleObjects returns the objects of each timed stretch of a pass over
// objects: a 32nd of them, so that the four stretches of two rounds take
// an eighth of the pass in all, a sixteenth each way, and at least 2¹⁶.
func sampleObjects(objects uint64) uint64 { return max(objects/32, 1<<16) }

// runTimed runs the second pass in stretches of sample objects, on two
// goroutines and on one in turns, rounds times each (fewer where a round
// finds one way margin times as fast as the other, clearlyFaster; a
// margin of 0 times every round), then the rest of it the way that wrote
// more objects per second. A
// probe cannot tell which way is faster (docs/measurements.md, "Decrunch times both
// ways"): the time a cache line takes between the cores came out the same
// with the other core idle, where two goroutines were faster, and with it
// busy, where one was. Timing the work itself can: both ways write the
// same bytes, and the pass goes on from where a stretch stopped.
func (c *converter) runTimed(src Source, sample uint64, rounds int, margin float64) error {
	ways := timedWays
	var spent [2]time.Duration
	var wrote [2]uint64
	// A stretch on two goroutines first, not timed: the first stretch
	// pays for the pass starting (the output's buffers, the batches;
	// on the 134 MB dump's BMD 17 to 20 ms where the next stretch on
	// two goroutines took 11 to 12). Then the ways in turns, each
	// round in the order of the one before reversed, so that a change
	// along the file weighs on both alike.
	if more, err := ways[1](c, src, c.st.Objects+sample); err != nil || !more {
		return err
	}
	for i := 0; i/2 < rounds; i++ { // not range 2*rounds, which overflows for tests' math.MaxInt
		w := i % 2
		if i/2%2 == 1 {
			w = 1 - w
		}
		start, from := timedNow(), c.st.Objects
		more, err := ways[w](c, src, from+sample)
		spent[w] += timedNow().Sub(start)
		wrote[w] += c.st.Objects - from
		if err != nil || !more {
			return err
		}
		if i%2 == 1 && margin > 0 && clearlyFaster(wrote, spent, margin) {
			break // a round said it plainly: no more stretches the slow way
		}
	}
	_, err := ways[faster(wrote, spent)](c, src, math.MaxUint64)
	return err
}

// timedWays are the ways runTimed times: one goroutine, two. Tests wrap
// them.
var timedWays = [2]passWay{(*converter).runOne, (*converter).runAhead}

// timedNow is the clock runTimed times the ways with. Tests replace it:
// a way slowed by real time (a sleep) does not reliably lose to one whose
// stretches a loaded machine or the race detector delays as much.
var timedNow = time.Now

// clearlyFaster reports whether one way wrote at least margin times as
// many objects per second as the other: then runTimed times no more
// rounds. On the 134 MB dump's BMD (2026-12-02, its cores far) two
// rounds of stretches of 97,651 objects took one goroutine 8.0 to 12.1 ms
// and two 16.0 to 22.4 ms, 1.49 to 2.48 times as long (ten runs): the
// second round cost a stretch of the slow way more.
func clearlyFaster(wrote [2]uint64, spent [2]time.Duration, margin float64) bool {
	r0, r1 := float64(wrote[0])*float64(spent[1]), float64(wrote[1])*float64(spent[0]) // rates, times spent[0]*spent[1]
	return r0 >= margin*r1 || r1 >= margin*r0
}

// clearMargin is how much faster a way must be, after a round, for the
// second pass to stop timing (runTimed's margin): where the ways are
// near each other, or this VM's speed swings from one stretch to the
// next, both rounds are timed.
const clearMargin = 1.5

// faster returns the way (0 or 1) that wrote more objects per second,
// given the objects each wrote and the time each took; 0 on a tie.
func faster(wrote [2]uint64, spent [2]time.Duration) int {
	// wrote[1]/spent[1] > wrote[0]/spent[0], without dividing by zero.
	if float64(wrote[1])*float64(spent[0]) > float64(wrote[0])*float64(spent[1]) {
		return 1
	}
	return 0
}

// passObjects returns the objects the metadata says a file holds; a
// version 1 file says none (its metadata has no count), and its pass is
// taken as large, so that the timing alone decides.
func passObjects(m bmd.Metadata) uint64 {
	if m.Objects == 0 {
		return math.MaxUint64
	}
	return m.Objects
}

// runAhead is run (with rest) on two goroutines: see above. It is a
// passWay: the reader stops once it has read as many objects as
// Stats.Objects lacks to reach until (class definitions and instances
// and arrays, which Stats counts), and the batches read are written.
func (c *converter) runAhead(src Source, until uint64) (more bool, err error) {
	c.source = src
	batches := make(chan *aheadBatch, aheadBatches)
	free := make(chan *aheadBatch, aheadBatches)
	for range aheadBatches {
		if n := len(c.spareBatches); n > 0 {
			free <- c.spareBatches[n-1]
			c.spareBatches = c.spareBatches[:n-1]
			continue
		}
		free <- newAheadBatch()
	}
	defer func() { // for the next stretch of runTimed
		for len(free) > 0 {
			b := <-free
			b.reset()
			c.spareBatches = append(c.spareBatches, b)
		}
	}()
	done := make(chan struct{})
	finished := make(chan struct{})
	c.aheadLeft, c.aheadStopped = until-min(until, c.st.Objects), false
	go func() {
		defer close(finished)
		c.readAhead(src, batches, free, done)
	}()
	defer func() {
		close(done)
		<-finished
	}()
	for b := range batches {
		if err := c.finishBatch(b); err != nil {
			return false, err
		}
		free <- b
	}
	return c.aheadStopped, nil // set by the reader before it closed batches
}

// runOne is runAhead on one goroutine, without the batches: each record
// is written as soon as it is read. With one core (GOMAXPROCS=1), or with
// two that do not share a cache or one of which is busy, handing the
// batches from one goroutine to another costs more than it gains, and
// copying the objects into them is work that one goroutine need not do.
// The output is the same.
// It is a passWay.
func (c *converter) runOne(src Source, until uint64) (more bool, err error) {
	c.source = src
	for c.st.Objects < until {
		rec, err := src.Next()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if err := c.direct(rec); err != nil {
			return false, placeOverflow(err, rec)
		}
	}
	return true, nil
}

// direct writes a record read by runOne, as ahead and writeAhead would.
func (c *converter) direct(rec *bmd.Record) error {
	switch rec.Kind {
	case bmd.KindInstance:
		sh, kept := c.shape(rec.Class)
		if kept {
			return c.shapedInstance(rec.ID, rec.Class, rec.Trace, sh, rec.Values[:len(sh.types)])
		}
		return c.instance(rec.ID, rec.Class, rec.Trace, sh.types, rec.Values[:len(sh.types)])
	case bmd.KindObjectArray:
		if rec.Pending > 0 {
			return c.objectArrayPieces(c.source.(elementSource), rec)
		}
		return c.objectArray(rec.ID, rec.Class, rec.Trace, rec.Elements)
	case bmd.KindPrimitiveArray:
		return c.primitiveArray(hprof.SubPrimitiveArrayDump, rec.ID, rec.Trace, rec.Count, hprof.BasicType(rec.Type))
	case bmd.KindPrimitiveNoData:
		return c.primitiveArray(hprof.SubPrimitiveArrayNoData, rec.ID, rec.Trace, rec.Count, hprof.BasicType(rec.Type))
	case bmd.KindTime:
		c.time = rec.Time
		return nil
	}
	return c.rest(rec)
}

// finishBatch writes the items of a batch, then returns the error that
// ended its reading, if any.
func (c *converter) finishBatch(b *aheadBatch) error {
	if err := c.writeAhead(b); err != nil {
		return err
	}
	return b.err
}

// writeAhead converts and writes the items of a batch.
func (c *converter) writeAhead(b *aheadBatch) error {
	for i := range b.items {
		it := &b.items[i]
		if it.tag == 0 && it.elem == aheadRun {
			if err := c.runObjects(b, int(it.lo), int(it.hi)); err != nil {
				return err
			}
			continue
		}
		if it.tag == 0 && it.elem == aheadRoot {
			r := &b.roots[it.lo]
			if err := c.writeRoot(r.kind, r.object, r.thread, r.frame, r.jniRef, r.trace); err != nil {
				return placeOverflowAt(err, bmd.KindRoot, r.offset)
			}
			continue
		}
		if it.tag == 0 {
			rec := b.recs[it.lo]
			if rec.Kind == bmd.KindTime {
				c.time = rec.Time
				continue
			}
			if err := c.rest(rec); err != nil {
				return placeOverflow(err, rec)
			}
			continue
		}
		var err error
		switch it.tag {
		case hprof.SubInstanceDump:
			if it.shape != nil {
				err = c.shapedInstance(it.id, it.class, it.trace, it.shape, b.vals[it.lo:it.hi])
			} else {
				err = c.instance(it.id, it.class, it.trace, b.types[it.length:it.length+it.hi-it.lo], b.vals[it.lo:it.hi])
			}
		case hprof.SubObjectArrayDump:
			switch it.elem {
			case aheadPieces:
				err = c.beginArray(it.id, it.class, it.trace, it.length)
			case aheadPiece:
				err = c.arrayElements(b.vals[it.lo:it.hi])
			default:
				err = c.objectArray(it.id, it.class, it.trace, b.vals[it.lo:it.hi])
			}
		default:
			err = c.primitiveArray(it.tag, it.id, it.trace, it.length, it.elem)
		}
		if err != nil {
			id := it.id
			if it.tag == hprof.SubObjectArrayDump && it.elem == aheadPiece {
				id = c.arrayID
			}
			return c.overflowIn(err, itemKind(it), id)
		}
	}
	return nil
}

// itemKind is the kind of the object record of a batch item.
func itemKind(it *aheadItem) bmd.Kind {
	switch it.tag {
	case hprof.SubInstanceDump:
		return bmd.KindInstance
	case hprof.SubObjectArrayDump:
		return bmd.KindObjectArray
	case hprof.SubPrimitiveArrayDump:
		return bmd.KindPrimitiveArray
	}
	return bmd.KindPrimitiveNoData
}

// runObjects writes the objects lo to hi of the batch, which the reader
// decoded a run at a time (aheadRun).
func (c *converter) runObjects(b *aheadBatch, lo, hi int) error {
	for i := lo; i < hi; i++ {
		o := &b.objs[i]
		vals := b.vals[o.Lo:o.Hi]
		var err error
		switch o.Kind {
		case bmd.KindInstance:
			if sh := b.shapes[i]; sh != nil {
				err = c.shapedInstance(o.ID, o.Class, o.Trace, sh, vals[:len(sh.types)])
			} else {
				err = c.instance(o.ID, o.Class, o.Trace, b.types[o.Count:int(o.Count)+len(vals)], vals)
			}
		case bmd.KindObjectArray:
			err = c.objectArray(o.ID, o.Class, o.Trace, vals)
		case bmd.KindPrimitiveArray:
			err = c.primitiveArray(hprof.SubPrimitiveArrayDump, o.ID, o.Trace, o.Count, hprof.BasicType(o.Type))
		default:
			err = c.primitiveArray(hprof.SubPrimitiveArrayNoData, o.ID, o.Trace, o.Count, hprof.BasicType(o.Type))
		}
		if err != nil {
			return c.overflowIn(err, o.Kind, o.ID)
		}
	}
	return nil
}

// instance writes an instance, of dense IDs id and class, whose fields
// have types and the values vals.
func (c *converter) instance(id, class uint64, trace uint32, types []bmd.Type, vals []uint64) error {
	c.begun()
	c.inst = c.instanceData(c.inst[:0], types, vals)
	if e := c.enums; e != nil && id >= e.nextFix {
		if f := e.due(id); f != nil && !f.array {
			e.putCount(f, c.inst)
		}
	}
	c.s.Tag, c.s.ID, c.s.StackTrace, c.s.ClassID, c.s.Data = hprof.SubInstanceDump, c.obj(id), trace, c.obj(class), c.inst
	return c.object()
}

// shapedInstance writes an instance as instance does, for a class whose
// shape is remembered: its data is written in the Writer's buffer, from
// the shape's plan. An ID too large for the dump's IDs leaves the
// instance unwritten.
func (c *converter) shapedInstance(id, class uint64, trace uint32, sh *classShape, vals []uint64) error {
	c.begun()
	refs, max := sh.refs, c.ids.max
	for i := range refs {
		if vals[refs[i].i] > max {
			c.idOverflow = true
		}
	}
	hid, hclass := c.obj(id), c.obj(class)
	if !c.inHeap || c.idOverflow {
		return c.canWrite(hprof.SubInstanceDump)
	}
	data, err := c.w.Instance(hid, trace, hclass, int(sh.bytes))
	if err != nil {
		return err
	}
	// The IDs as objectIDs.id makes them, in a loop for each layout
	// (uncompressed, 4-byte, 8-byte compressed). Each ID's room is cut to
	// its size, and d<<shift is d*mul: with data[f.off:] (its pointer
	// masked for an empty slice) and a shift (its count moved to CX), a
	// reference took 27 instructions.
	mul := c.ids.mul
	switch {
	case c.ids.odd != 0:
		for i := range refs {
			o, d := int(refs[i].off), vals[refs[i].i]
			binary.BigEndian.PutUint64(data[o:o+8], d<<31+(d&1)*mul)
		}
	case c.meta.IDSize == 4:
		for i := range refs {
			o := int(refs[i].off)
			binary.BigEndian.PutUint32(data[o:o+4], uint32(vals[refs[i].i]*mul))
		}
	default:
		for i := range refs {
			o := int(refs[i].off)
			binary.BigEndian.PutUint64(data[o:o+8], vals[refs[i].i]*mul)
		}
	}
	for _, f := range sh.prims {
		putValue(data[f.off:], f.size, vals[f.i])
	}
	if e := c.enums; e != nil && id >= e.nextFix {
		if f := e.due(id); f != nil && !f.array {
			e.putCount(f, data)
		}
	}
	c.st.Objects++
	return nil
}

// putValue puts the size bytes of a primitive value v at the start of b.
func putValue(b []byte, size uint8, v uint64) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.BigEndian.PutUint16(b, uint16(v))
	case 4:
		binary.BigEndian.PutUint32(b, uint32(v))
	case 8:
		binary.BigEndian.PutUint64(b, v)
	}
}

// objectArray writes an object array of dense IDs id and class, whose
// elements are dense IDs, in the Writer's buffer. An ID too large for
// the dump's IDs leaves it unwritten.
func (c *converter) objectArray(id, class uint64, trace uint32, elems []uint64) error {
	c.begun()
	max := c.ids.max
	for _, e := range elems {
		if e > max {
			c.idOverflow = true
		}
	}
	hid, hclass := c.obj(id), c.obj(class)
	if !c.inHeap || c.idOverflow {
		return c.canWrite(hprof.SubObjectArrayDump)
	}
	room, err := c.w.ObjectArray(hid, trace, hclass, len(elems))
	if err != nil {
		return err
	}
	// The IDs as objectIDs.id makes them (see shapedInstance).
	mul := c.ids.mul
	switch {
	case c.ids.odd != 0:
		room = room[:8*len(elems)]
		for i, d := range elems {
			binary.BigEndian.PutUint64(room[8*i:8*i+8], d<<31+(d&1)*mul)
		}
	case c.meta.IDSize == 4:
		room = room[:4*len(elems)]
		for i, d := range elems {
			binary.BigEndian.PutUint32(room[4*i:4*i+4], uint32(d*mul))
		}
	default:
		room = room[:8*len(elems)]
		for i, d := range elems {
			binary.BigEndian.PutUint64(room[8*i:8*i+8], d*mul)
		}
	}
	c.st.Objects++
	return nil
}

// primitiveArray writes a primitive array (tag: with its data, zeros, or
// without) of dense ID id, after refusing what it asks for beyond the
// output limit, before writing any of it.
func (c *converter) primitiveArray(tag hprof.SubTag, id uint64, trace, length uint32, elem hprof.BasicType) error {
	c.begun()
	if size := int64(length) * int64(elem.Size(c.meta.IDSize)); c.opt.MaxOutput > 0 && c.w.Written()+size > c.opt.MaxOutput {
		return &OutputLimitError{Limit: c.opt.MaxOutput}
	}
	hid := c.obj(id)
	if tag != hprof.SubPrimitiveArrayDump {
		c.s.Tag, c.s.ID, c.s.StackTrace, c.s.Length, c.s.ElemType, c.s.Data = tag, hid, trace, length, elem, nil
		return c.object()
	}
	if !c.inHeap || c.idOverflow {
		return c.canWrite(tag)
	}
	if e := c.enums; e != nil && id >= e.nextFix {
		if f := e.due(id); f != nil && f.array {
			if text := e.arrayText(f, length, elem); text != nil {
				c.st.countText(f.kind)
				c.s.Tag, c.s.ID, c.s.StackTrace, c.s.Length, c.s.ElemType, c.s.Data = tag, hid, trace, length, elem, text
				return c.object()
			}
		}
	}
	if err := c.w.ZeroArray(hid, trace, length, elem); err != nil {
		return err
	}
	c.st.Objects++
	return nil
}

// object writes the object sub-record in c.s and counts it.
func (c *converter) object() error {
	err := c.sub(&c.s)
	c.s.Data, c.s.Elements = nil, nil
	if err != nil {
		return err
	}
	c.st.Objects++
	return nil
}
