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
	sub   hprof.SubRecord

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

	// needSeen remembers classes whose need is recorded, here or in an
	// earlier use of this segment: that one was earlier in the file and is
	// merged before this one, so its need comes first.
	needSeen recentClasses
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
	sg.subs, sg.err = 0, nil
	sg.objs.reset()
	sg.drops.reset()
	sg.addrs, sg.array1 = addressLayout{}, objectArrayAt{}
	clear(sg.classes)
	sg.classes, sg.needs, sg.heaps = sg.classes[:0], sg.needs[:0], sg.heaps[:0]
}

// read reads the sub-records of r's heap dump record, all of them, or at
// most limit if limit > 0, stopping too at the first that ends at offset
// until or after it if until > 0; it reports whether the record has more.
// The objects of a heap in drop go to drops: sg.heap must say which heap
// the record starts in when drop has any.
func (sg *segment) read(r *hprof.Reader, limit int, until int64, drop map[uint32]bool) (more bool) {
	for n := 0; (limit <= 0 || n < limit) && (until <= 0 || r.Offset() < until); n++ {
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

func (sg *segment) subRecord(s *hprof.SubRecord, drop map[uint32]bool) error {
	switch s.Tag {
	case hprof.SubClassDump, hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
		if s.ID == 0 {
			// 0 is null: no reference could reach it, and a number for it
			// would shift every object after it.
			return &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: "object ID 0 (null)"}
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
	if _, seen := sg.needSeen.get(id); seen {
		return
	}
	sg.needSeen.put(id, 0)
	sg.needs = append(sg.needs, segNeed{id, sg.subs})
}
