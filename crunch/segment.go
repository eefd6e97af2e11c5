package crunch

import (
	"io"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// segment is what pass 1 learns from the sub-records of one heap dump
// record, or of a run of them, read apart from the rest of the dump: on
// another goroutine (a record split off, HEAP DUMP SEGMENTs being a
// megabyte each in JDK dumps), or inline, on pass 1's goroutine, for a
// record too large to split. pass1.merge then adds it to what pass 1
// knows, in file order, so that the result is the same as reading the
// sub-records one by one.
type segment struct {
	r     hprof.Reader  // the record split off (SplitHeapDump)
	done  chan struct{} // closed when the record is read
	start int64         // the file offset of the bytes it reads
	rec   hprof.Record  // the record split off
	clock chunkClock    // pass 1's chunk clock at its start (merge)
	// batch, when it has records, are the small heap dump records the
	// segment reads, one after the other, instead of r's: their bytes
	// (batchBytes), sub-records and where their reading ended.
	batch      []batchRecord
	batchBytes int64
	// A piece of a large record (pass1.bigRecord) is read from target, or
	// from a start guessed at or after it (guess), to the first
	// sub-record boundary at or after stop; found says that a start was
	// (at).
	guess        bool
	target, stop int64
	found        bool
	at           int64
	sub          hprof.SubRecord
	heads        []hprof.ObjectHead // objects skimmed, reused
	ids          []uint64           // their IDs
	// readAt: the record is read from the file at its offset (splitAt),
	// into the buffer of the goroutine that reads it (newSegmentPool).
	readAt bool
	// ahead: the batch is the small heap dump records from rec on, which
	// the goroutine that reads them finds in the file read at offsets
	// (batchAhead); walked is closed once it has, batch holding them and
	// end the offset after them.
	ahead  bool
	walked chan struct{}
	end    int64

	subs    int   // sub-records read
	objs    idRun // IDs of the objects kept, in order
	drops   idRun // IDs of the objects of dropped heaps
	addrs   addressLayout
	array1  objectArrayAt // the first object array
	classes []segClass    // class dumps, in order
	needs   []segNeed     // classes needed, each at least at its first need
	heaps   []heapName    // HEAP DUMP INFO records
	heap    heapTracker   // the current heap: given before, updated
	err     error         // the error that ended the reading, if any

	// markEvery, when not 0, has read note marks, sub-record boundaries
	// about markEvery bytes apart from the segment's start, where pass 2
	// may cut a large record into spans (pass1.pieces); markAt is the
	// offset of the next.
	markEvery, markAt int64
	marks             []segMark

	// needSeen remembers classes whose need is recorded, here or in an
	// earlier use of this segment: that one was earlier in the file and is
	// merged before this one, so its need comes first.
	needSeen recentClasses
}

// batchRecord is a heap dump record of a segment's batch: its
// sub-records read, and the offset where their reading ended.
type batchRecord struct {
	rec  hprof.Record
	subs int
	read int64
}

// segMark is a sub-record boundary of a segment: its file offset, and the
// sub-records the segment read before it.
type segMark struct {
	off  int64
	subs int
}

// markFrom has read note marks every markEvery bytes from file offset
// start on (none if markEvery is 0).
func (sg *segment) markFrom(start, markEvery int64) {
	sg.markEvery, sg.markAt = markEvery, 0
	if markEvery > 0 {
		sg.markAt = start + markEvery
	}
}

// objectArrayAt is an object array's ID and length.
type objectArrayAt struct {
	id     uint64
	length uint32
	ok     bool
}

// segClass is a class dump of a segment, and its place.
type segClass struct {
	dump   *hprof.ClassDump
	offset int64
	sub    int // the index of its sub-record in the segment
}

// segNeed records that a class is needed by the sub-record of index sub.
type segNeed struct {
	id  uint64
	sub int
}

// heapName is a HEAP DUMP INFO record's heap type and name.
type heapName struct {
	heap uint32
	name uint64
}

// reset empties sg for the next record, keeping its buffers.
func (sg *segment) reset() {
	sg.subs, sg.err, sg.readAt, sg.ahead, sg.end = 0, nil, false, false, 0
	sg.batch, sg.batchBytes = sg.batch[:0], 0
	sg.guess, sg.target, sg.stop, sg.found, sg.at = false, 0, 0, false, 0
	sg.objs.reset()
	sg.drops.reset()
	sg.addrs, sg.array1 = addressLayout{}, objectArrayAt{}
	clear(sg.classes)
	sg.classes, sg.needs, sg.heaps = sg.classes[:0], sg.needs[:0], sg.heaps[:0]
	sg.markEvery, sg.markAt, sg.marks = 0, 0, sg.marks[:0]
}

// read reads the sub-records of r's heap dump record, all of them, or at
// most limit if limit > 0, stopping too at the first that ends at offset
// until or after it if until > 0; it reports whether the record has more.
// The objects of a heap in drop go to drops: sg.heap must say which heap
// the record starts in when drop has any.
func (sg *segment) read(r *hprof.Reader, limit int, until int64, drop map[uint32]bool) (more bool) {
	if sg.heads == nil {
		sg.heads, sg.ids = make([]hprof.ObjectHead, skimBatch), make([]uint64, skimBatch)
	}
	for n := 0; (limit <= 0 || n < limit) && (until <= 0 || r.Offset() < until); n++ {
		if sg.markAt > 0 && r.Offset() >= sg.markAt {
			sg.marks = append(sg.marks, segMark{off: r.Offset(), subs: sg.subs})
			sg.markAt = r.Offset() + sg.markEvery
		}
		// Most sub-records are objects: a batch of them at a time, what
		// the rest of the loop does for each in one loop.
		heads := sg.heads
		if limit > 0 {
			heads = heads[:min(len(heads), limit-n)]
		}
		if k := r.SkimObjects(heads, until); k > 0 {
			if err := sg.objects(heads[:k], drop); err != nil {
				sg.err = err
				return false
			}
			n += k - 1
			continue
		}
		err := r.NextSub(&sg.sub)
		if err == io.EOF {
			return false
		}
		if err == nil {
			err = sg.subRecord(&sg.sub, drop)
		}
		if err != nil {
			sg.err = err
			return false
		}
		sg.subs++
	}
	return true
}

// skimBatch is how many objects segment.read skims at a time.
const skimBatch = 256

// objects records the objects of heads and counts them (sg.subs), as
// subRecord and read did one by one. What can be is done once for the
// batch: the count, and the alignment (addrs.object), nearly always known
// after the first objects. It is not inlined: in segment.read its loop
// reloaded read's values at every object (33 instructions an object
// before these changes, 25 after, cachegrind, 134 MB dump).
//
//go:noinline
func (sg *segment) objects(heads []hprof.ObjectHead, drop map[uint32]bool) error {
	run, dropped := &sg.objs, sg.heap.dropped(drop)
	if dropped {
		run = &sg.drops
	}
	if !sg.addrs.aligned() {
		for i := 0; i < len(heads) && heads[i].ID != 0; i++ { // up to a null, an error below
			sg.addrs.object(heads[i].ID)
		}
	}
	ids := sg.ids[:len(heads)]
	for i := range heads {
		h := &heads[i]
		if h.ID == 0 {
			run.addAll(ids[:i])
			sg.subs += i
			return nullObject(h.Offset, h.Tag)
		}
		ids[i] = h.ID
		switch h.Tag {
		case hprof.SubInstanceDump:
			if _, seen := sg.needSeen.get(h.ClassID); !seen && !dropped {
				sg.newNeed(h.ClassID, sg.subs+i) // as need
			}
		case hprof.SubObjectArrayDump:
			if !sg.array1.ok {
				sg.array1 = objectArrayAt{h.ID, h.Length, true}
			}
			sg.addrs.objectArray(h.ID, h.Length)
		}
	}
	sg.subs += len(heads)
	run.addAll(ids)
	return nil
}

// nullObject is the error of an object sub-record with ID 0 (null): no
// reference could reach it, and a number for it would shift every object
// after it.
func nullObject(offset int64, tag hprof.SubTag) error {
	return &hprof.FormatError{Offset: offset, Record: tag.String(), Tag: int(tag), Msg: "object ID 0 (null)"}
}

func (sg *segment) subRecord(s *hprof.SubRecord, drop map[uint32]bool) error {
	switch s.Tag {
	case hprof.SubClassDump, hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
		if s.ID == 0 {
			return nullObject(s.Offset, s.Tag)
		}
	}
	switch s.Tag {
	case hprof.SubHeapDumpInfo:
		sg.heap.cur, sg.heap.set = s.HeapType, true
		sg.heaps = append(sg.heaps, heapName{s.HeapType, s.HeapName})
	case hprof.SubClassDump:
		sg.addrs.object(s.ID)
		sg.classes = append(sg.classes, segClass{dump: s.Class.Clone(), offset: s.Offset, sub: sg.subs})
		sg.need(s.ID)
	case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
		sg.addrs.object(s.ID)
		if s.Tag == hprof.SubObjectArrayDump {
			if !sg.array1.ok {
				sg.array1 = objectArrayAt{s.ID, s.Length, true}
			}
			sg.addrs.objectArray(s.ID, s.Length)
		}
		if sg.heap.dropped(drop) {
			sg.drops.add(s.ID)
			return nil
		}
		sg.objs.add(s.ID)
		if s.Tag == hprof.SubInstanceDump {
			sg.need(s.ClassID)
		}
	}
	return nil
}

// need records that the class with HPROF ID id is needed by the current
// sub-record, unless an earlier need of it is recorded.
func (sg *segment) need(id uint64) {
	if _, seen := sg.needSeen.get(id); !seen {
		sg.newNeed(id, sg.subs)
	}
}

// newNeed records the first need of a class by the sub-record of index
// sub. It is not inlined: it is rare, and inlined in segment.objects its
// append left fewer registers to the loop over the objects.
//
//go:noinline
func (sg *segment) newNeed(id uint64, sub int) {
	sg.needSeen.put(id, 0)
	sg.needs = append(sg.needs, segNeed{id, sub})
}
