package bmd

import (
	"encoding/binary"
	"iter"
	"sort"
)

// An ObjectRun holds object records encoded apart from a Writer, on another
// goroutine say, for Writer.AddObjects to add later: INSTANCE records of
// classes whose values are all references (every class, by default),
// OBJECT ARRAY records and PRIMITIVE ARRAY (and NODATA) records, whose
// object IDs follow one another from the run's first. AddObjects writes
// exactly the bytes that writing them one by one (InstanceKept,
// ObjectArray, PrimitiveArray) would have written, OBJECTS records and
// blocks included, after checking that what the run took for granted of
// the Writer holds: the first ID, and which classes are defined with
// which layouts.
//
//	r := bmd.NewObjectRun(classes, idSize)
//	r.Reset(firstID)
//	if !r.Instance(class, size, refs) { ... } // nothing added: write it otherwise
//	...
//	err := w.AddObjects(r) // on the Writer's goroutine, when its next ID is firstID
type ObjectRun struct {
	first   uint64 // the object ID of the first record
	idSize  int
	classes uint64 // the metadata's class count

	buf   []byte   // the records
	ends  []uint32 // where each record ends in buf
	hprof []uint64 // HPROF bytes of the records up to each one's end

	uses  []classUse  // the class indexes the records name, each once
	table *classTable // finds them in uses, shared with its siblings

	count, bytes [4]uint64 // records and bytes, by kind (kindSlot)
}

// classUse is what the records of a run take for granted of a class
// index: that it is defined with a layout of nvals references and size
// bytes of HPROF data (an instance's class), or whether it is defined (an
// object array's class).
type classUse struct {
	idx       uint64
	instance  bool  // an instance names it
	nvals     int   // the values of its instances
	size      int64 // the HPROF bytes of their data
	arrayDefd int8  // an array names it: -1 no, 0 as undefined, 1 as defined
}

// classTable finds, for one run at a time (its owner), the place in its
// uses of each class index its records name: a slot per class of the
// file. Runs filled one after the other share one (ObjectRun.Sibling):
// with a table each, a span cut into many short runs (objects of as many
// stack trace serials, or each between two roots) took 4 bytes per class
// of the file for each run, hundreds of megabytes.
type classTable struct {
	seen  []uint32   // per class index, 1 + its place in owner's uses, or 0
	owner *ObjectRun // the run whose uses seen holds, or nil
}

// NewObjectRun returns an empty ObjectRun for a Writer whose metadata has
// the given class count and identifier size.
func NewObjectRun(classes uint64, idSize int) *ObjectRun {
	return &ObjectRun{classes: classes, idSize: idSize, table: new(classTable)}
}

// Sibling returns an empty ObjectRun for the same Writer as r, which
// shares r's table of the classes a run's records name: a run and its
// siblings are filled on one goroutine (records are added to one at a
// time), where a table of their own would take 4 bytes per class of the
// file each.
func (r *ObjectRun) Sibling() *ObjectRun {
	return &ObjectRun{classes: r.classes, idSize: r.idSize, table: r.table}
}

// Reset empties the run, its first record to take object ID first.
func (r *ObjectRun) Reset(first uint64) {
	if t := r.table; t.owner == r {
		for _, u := range r.uses {
			t.seen[u.idx] = 0
		}
		t.owner = nil
	}
	r.first = first
	r.buf, r.ends, r.hprof, r.uses = r.buf[:0], r.ends[:0], r.hprof[:0], r.uses[:0]
	r.count, r.bytes = [4]uint64{}, [4]uint64{}
}

// First returns the object ID of the run's first record.
func (r *ObjectRun) First() uint64 { return r.first }

// Count returns the number of records of kind k in the run.
func (r *ObjectRun) Count(k Kind) uint64 {
	if !k.object() {
		return 0
	}
	return r.count[kindSlot(k)]
}

// Uses returns what the run takes for granted of the Writer's classes:
// each class index its records name, and whether it must be defined (a
// class of instances, or of object arrays that name it by its index) or
// not (of object arrays that name it by a reference). A class of
// instances and of arrays is given twice.
func (r *ObjectRun) Uses() iter.Seq2[uint64, bool] {
	return func(yield func(uint64, bool) bool) {
		for _, u := range r.uses {
			if u.instance && !yield(u.idx, true) {
				return
			}
			if u.arrayDefd >= 0 && !yield(u.idx, u.arrayDefd == 1) {
				return
			}
		}
	}
}

// Len returns the number of records in the run.
func (r *ObjectRun) Len() int { return len(r.ends) }

// self returns the object ID of the next record.
func (r *ObjectRun) self() uint64 { return r.first + uint64(len(r.ends)) }

// newUse adds a classUse of class index idx (1 to the class count), which
// the run has none of (used said so), and returns it. A record that takes
// a class calls it only once it is sure to be added.
func (r *ObjectRun) newUse(idx uint64) *classUse {
	r.uses = append(r.uses, classUse{idx: idx, arrayDefd: -1})
	r.table.seen[idx] = uint32(len(r.uses))
	return &r.uses[len(r.uses)-1]
}

// used returns the classUse of class index idx, or nil if the run has
// none.
func (r *ObjectRun) used(idx uint64) *classUse {
	t := r.table
	if t.owner != r {
		r.own()
	}
	if e := t.seen[idx]; e != 0 {
		return &r.uses[e-1]
	}
	return nil
}

// own makes the run its table's owner: the slots of the owner before
// emptied, its own filled.
func (r *ObjectRun) own() {
	t := r.table
	if t.seen == nil {
		t.seen = make([]uint32, r.classes+1)
	}
	if o := t.owner; o != nil {
		for _, u := range o.uses {
			t.seen[u.idx] = 0
		}
	}
	for i, u := range r.uses {
		t.seen[u.idx] = uint32(i + 1)
	}
	t.owner = r
}

// Instance adds an INSTANCE of class index class, defined when the run is
// added, whose layout's values are the references refs (dense object IDs,
// 0 for null) and whose data takes size bytes in the HPROF. It reports
// false, adding nothing, if the record cannot be added as the Writer would
// write it: class is not a class index, another record of the run took it
// with another layout, or a reference has no encoding (spec/bmd.md §2.4).
func (r *ObjectRun) Instance(class uint64, size int64, refs []uint64) bool {
	if class == 0 || class > r.classes {
		return false
	}
	u := r.used(class)
	if u != nil && u.instance && (u.nvals != len(refs) || u.size != size) {
		return false
	}
	r.room(1 + binary.MaxVarintLen64 + len(refs)*roomPerRef)
	start := len(r.buf)
	buf := append(r.buf, byte(KindInstance))
	buf = appendUvarint(buf, class)
	buf, ok := appendRefs(buf, refs, r.self())
	if !ok {
		return false
	}
	if u == nil {
		u = r.newUse(class)
	}
	if !u.instance {
		u.instance, u.nvals, u.size = true, len(refs), size
	}
	r.add(buf, start, KindInstance, uint64(size))
	return true
}

// ObjectArray adds an OBJECT ARRAY of elements elems (dense object IDs, 0
// for null) whose class has dense ID class, and which classDefined says is
// a class defined when the run is added (written as its index) or not
// (written as a reference). It reports false, adding nothing, if another
// record of the run took the class the other way, or if a reference has no
// encoding.
func (r *ObjectRun) ObjectArray(class uint64, classDefined bool, elems []uint64) bool {
	isClass := class != 0 && class <= r.classes
	if !isClass && classDefined {
		return false
	}
	want := int8(0)
	if classDefined {
		want = 1
	}
	var u *classUse
	if isClass {
		if u = r.used(class); u != nil && u.arrayDefd >= 0 && u.arrayDefd != want {
			return false
		}
	}
	r.room(2 + 3*binary.MaxVarintLen64 + len(elems)*roomPerRef)
	start := len(r.buf)
	self := r.self()
	buf := append(r.buf, byte(KindObjectArray))
	ok := true
	if classDefined {
		buf = appendUvarint(buf, class)
	} else {
		buf = append(buf, 0)
		buf, ok = appendRef(buf, class, self)
	}
	buf = appendUvarint(buf, uint64(len(elems)))
	if ok {
		buf, ok = appendRefs(buf, elems, self)
	}
	if !ok {
		return false
	}
	if isClass {
		if u == nil {
			u = r.newUse(class)
		}
		u.arrayDefd = want
	}
	r.add(buf, start, KindObjectArray, elementBytes(Object, uint64(len(elems)), r.idSize))
	return true
}

// PrimitiveArray adds a PRIMITIVE ARRAY (or, with noData, a PRIMITIVE
// ARRAY NODATA) of length elements of type t. It reports false, adding
// nothing, for a type that is not a primitive one.
func (r *ObjectRun) PrimitiveArray(t Type, length uint32, noData bool) bool {
	if !t.Valid() || t == Object {
		return false
	}
	k, n := KindPrimitiveArray, elementBytes(t, uint64(length), r.idSize)
	if noData {
		k, n = KindPrimitiveNoData, 0
	}
	r.room(2 + binary.MaxVarintLen64)
	start := len(r.buf)
	buf := append(r.buf, byte(k), byte(t))
	r.add(appendUvarint(buf, uint64(length)), start, k, n)
	return true
}

// add records the record of kind k that buf holds from start on, n bytes
// of HPROF.
func (r *ObjectRun) add(buf []byte, start int, k Kind, n uint64) {
	r.buf = buf
	r.ends = append(r.ends, uint32(len(buf)))
	var before uint64
	if len(r.hprof) > 0 {
		before = r.hprof[len(r.hprof)-1]
	}
	r.hprof = append(r.hprof, before+n)
	s := kindSlot(k)
	r.count[s]++
	r.bytes[s] += uint64(len(buf) - start)
}

// roomPerRef is the room a record's reference takes in room's reckoning:
// four bytes, those of a reference within 2^27 objects of its own, as
// nearly all are (a longer one, or ten bytes each, would have the
// buffer of a run of large arrays grow far beyond what it holds).
const roomPerRef = 4

// room makes room in the run's buffer for n more bytes, what the next
// record takes but for its longest references (roomPerRef; append grows
// the buffer by what they need beyond it), at least doubling its
// capacity where it grows.
//
// A run's buffers (and add's) grow by doubling, not by a quarter as
// append grows a large slice: crunch's span outputs hold their runs for
// the next span, and their buffers grown by a quarter at a time were
// copied into new memory several times over before they reached their
// size (crunch runs no collection, GOGC 800, that would free the old): on
// the 134 MB dump of the README, 8.0 MB allocated against 5.2 MB doubled
// (docs/measurements.md, "Memory written once").
func (r *ObjectRun) room(n int) {
	if cap(r.buf)-len(r.buf) < n || len(r.ends) == cap(r.ends) {
		r.grow(n)
	}
}

// grow is room's work where the buffers are short: apart, and not
// inlined, so that room is (a branch a record).
//
//go:noinline
func (r *ObjectRun) grow(n int) {
	if cap(r.buf)-len(r.buf) < n {
		r.buf = append(make([]byte, 0, max(2*cap(r.buf), len(r.buf)+n)), r.buf...)
	}
	if len(r.ends) == cap(r.ends) {
		c := max(2*cap(r.ends), 64)
		r.ends = append(make([]uint32, 0, c), r.ends...)
		r.hprof = append(make([]uint64, 0, c), r.hprof...)
	}
}

// kindSlot numbers the object kinds from 0.
func kindSlot(k Kind) int { return int(k - KindInstance) }

// AddObjects writes the records of run r, in order, as writing them one
// by one would have. It fails the Writer if r does not fit its state: r's
// first ID is not the next ID, a class r's instances name is not defined
// with the layout they took, or a class r's object arrays name is defined
// where they took it as undefined, or the other way.
func (w *Writer) AddObjects(r *ObjectRun) error {
	if w.err != nil || len(r.ends) == 0 {
		return w.err
	}
	if w.arrayLeft > 0 {
		w.unfinishedArray()
		return w.err
	}
	if r.first != w.nextID {
		return w.fail("a run of objects from ID %d added where the next ID is %d", r.first, w.nextID)
	}
	if r.classes != w.classes || r.idSize != w.lay.idSize {
		return w.fail("a run of objects for %d classes and %d-byte IDs added to a file of %d and %d", r.classes, r.idSize, w.classes, w.lay.idSize)
	}
	for i := range r.uses {
		if err := w.checkUse(&r.uses[i]); err != nil {
			return err
		}
	}
	for i := 0; i < len(r.ends); {
		if !w.inObjects {
			w.openObjects()
		}
		j := len(r.ends) - 1 // the last record of this OBJECTS run
		if w.inObjects {
			// The run ends after the first record that takes it to
			// maxRunBytes, as end does.
			base, room := r.start(i), uint32(maxRunBytes-len(w.buf))
			j = i + sort.Search(j-i, func(k int) bool { return r.ends[i+k]-base >= room })
		}
		w.buf = append(w.buf, r.buf[r.start(i):r.ends[j]]...)
		n := uint64(j + 1 - i)
		w.records += n
		w.nextID += n
		if w.inObjects {
			w.objSize += r.hprofBetween(i, j)
		}
		i = j + 1
		if !w.inObjects || len(w.buf) >= maxRunBytes {
			if err := w.flushIf(); err != nil {
				return err
			}
		}
	}
	for s := range r.count {
		w.Count[KindInstance+Kind(s)] += r.count[s]
		w.Bytes[KindInstance+Kind(s)] += r.bytes[s]
	}
	return w.err
}

// start returns where record i of the run begins in its buffer.
func (r *ObjectRun) start(i int) uint32 {
	if i == 0 {
		return 0
	}
	return r.ends[i-1]
}

// hprofBetween returns the HPROF bytes of records i to j of the run.
func (r *ObjectRun) hprofBetween(i, j int) uint64 {
	if i == 0 {
		return r.hprof[j]
	}
	return r.hprof[j] - r.hprof[i-1]
}

// checkUse checks what a run took for granted of a class against the
// Writer's definitions.
func (w *Writer) checkUse(u *classUse) error {
	if u.instance {
		ts, size, _, ok, missing := w.lay.written(u.idx, w.classes)
		if err := w.checkInstance(u.idx, ok, missing, u.nvals, len(ts), "fields kept"); err != nil {
			return err
		}
		if size != u.size || (len(ts) > 0 && !allObjects(ts)) {
			return w.fail("a run of objects has instances of class %d as %d references and %d bytes, not its layout", u.idx, u.nvals, u.size)
		}
	}
	if u.arrayDefd >= 0 && w.lay.defined(u.idx) != (u.arrayDefd == 1) {
		return w.fail("a run of objects took class %d as defined (%v) where it is not", u.idx, u.arrayDefd == 1)
	}
	return nil
}

// appendUvarint appends v as a varint, the bytes of
// protowire.AppendVarint: one or two in place, the usual values (class
// indexes, array lengths), and a loop for longer ones. It makes no call,
// so that the compiler inlines it wherever it is called (cost 44, under
// its budget of 80), also within Instance and ObjectArray where crunch's
// span workers inline them (hot in the profile, PGO): the compiler
// inlines a call over budget only where the profile marks it hot, which
// it does not within a function inlined. With a call for the values of
// two bytes or more (cost 91) the span workers called it for each
// instance and object array;
// without, crunch split by spans ran 3.1 % fewer instructions on the 134
// MB dump outside pass 1 (1,912.1 M against 1,853.3 M, medians of 7 and 4
// runs; cachegrind).
func appendUvarint(buf []byte, v uint64) []byte {
	if v < 0x80 {
		return append(buf, byte(v))
	}
	if v < 1<<14 {
		return append(buf, byte(v)|0x80, byte(v>>7))
	}
	for v >= 0x80 {
		buf = append(buf, byte(v)|0x80)
		v >>= 7
	}
	return append(buf, byte(v))
}

// appendRef appends the reference target of object self, as ref writes
// it; false if it has no encoding.
func appendRef(buf []byte, target, self uint64) ([]byte, bool) {
	return appendRefs(buf, []uint64{target}, self)
}
