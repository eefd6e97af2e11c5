package crunch

import (
	"encoding/binary"
	"io"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/cores"
)

// pass2OneGoroutine reports whether pass 2, over objects objects of a
// dump of dumpBytes bytes, runs on one goroutine (pass2.single): unless a
// second goroutine on another core pays (cores.Pipeline). With one core
// (GOMAXPROCS=1), handing the records from a reading goroutine to a
// writing one costs time and gains nothing; with two that do not share a
// cache, or with the other one busy, it costs more than it gains (the
// cores package gives the figures). A dump under minMapBytes, read through
// a buffer without a probe (wayOf), runs on one goroutine without one too,
// unless HEAPCRUNCH_PIPELINE=on (cores.Pipeline's answer for a pass too
// small to ask): the pipeline's batches, 16 MB or more that the process
// touches for the first time, cost more than the pass's few milliseconds
// on two cores gain. genhprof's 12.7 MB dump of 311,173 objects, medians
// of 25 alternating runs (2026-12-05, the probe finding the cores near):
// 23.3 ms and 12.8 MB on one goroutine, 25.9 ms and 29.6 MB in the
// pipeline. Tests change it.
var pass2OneGoroutine = func(objects uint64, dumpBytes int64) bool {
	if dumpBytes < minMapBytes {
		objects = 0
	}
	return !cores.Pipeline(objects)
}

// pass2Skim is how many objects pass 2 reads at a time
// (SkimObjectsData), on one goroutine and in the split's worker; with 0,
// tests have it read each with NextSub, as it did before.
var pass2Skim = skimBatch

// single is pass 2 on one goroutine. The objects of a heap dump, nearly
// all its records, go from the dump to the writer directly, their
// references resolved as they are written: on one core this costs about
// 17 % less than making the items of the two goroutines and reading them
// back (pass 2 of the 134 MB dump: 204 to 216 ms against 249 to 262 ms,
// timers, five alternating runs). Every other record goes through its
// item, made by the reader as for the other goroutine and written at
// once, as do the objects of a dump with objects dumped twice or with
// heaps to drop. The BMD file is the same either way.
func (p *pass2) single(rd *reader) error {
	rd.b = new(aheadBatch)
	p.b = rd.b
	subs := func() error {
		if err := p.writeItems(); err != nil { // the heap dump's start
			return err
		}
		return p.singleHeapDump(rd)
	}
	return rd.eachRecord(subs, p.writeItems)
}

// writeItems writes the items the reader added, and empties the batch.
func (p *pass2) writeItems() error {
	err := p.writeBatch(p.b)
	p.b.reset()
	return err
}

// singleHeapDump writes the sub-records of a heap dump record: objects
// directly, unless objects are dumped twice or heaps dropped, anything
// else through its item; the objects a batch at a time where they can
// be (SkimObjectsData), anything else with NextSub in a plain loop, as in
// reader.heapDump. A batch ends before mark: the sub-record at or past it
// is read by NextSub, and readTo called after it, as when every object
// was read by NextSub, so that progress is reported and pages given back
// at the same offsets, not after a batch of up to 256 objects (256 arrays
// of 512 KiB), and the skim of a mapped dump does not touch the pages of
// objects further ahead (TestPass2ReadToEachObject).
func (p *pass2) singleHeapDump(rd *reader) error {
	if p.redumps || len(p.drop) > 0 {
		return p.itemsHeapDump(rd)
	}
	var piece int64 // where the next piece of the record starts, if any
	if p.split != nil {
		if done, err := p.atSpan(rd); done || err != nil {
			return err
		}
		piece = p.split.pieceIn(rd)
	}
	s := &rd.s
	if p.heads == nil {
		p.heads = make([]hprof.ObjectHead, pass2Skim)
	}
	mark := rd.nextMark()
	for {
		// Most sub-records are objects: a batch of them read at a time
		// (SkimObjectsData), the others and the objects it leaves one by
		// one (NextSub).
		until := mark
		if piece > 0 {
			until = min(until, piece)
		}
		if n, data, base := rd.r.SkimObjectsData(p.heads, until); n > 0 {
			if err := p.directObjects(rd, p.heads[:n], data, base); err != nil {
				return err
			}
			continue
		}
		if piece > 0 && rd.r.Offset() >= piece {
			// a piece of the record, written ahead
			if done, err := p.atSpan(rd); done || err != nil {
				return err
			}
			piece = p.split.pieceIn(rd)
			continue
		}
		if err := rd.r.NextSub(s); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := p.directSub(rd, s); err != nil {
			return err
		}
		// readTo only at the next offset where it does something: one
		// test per sub-record, where readTo made four.
		if s.Offset >= mark {
			rd.readTo(s.Offset)
			mark = rd.nextMark()
		}
	}
}

// directObjects writes the objects of heads, read by SkimObjectsData
// from data, its first byte at file offset base, as directSub would.
func (p *pass2) directObjects(rd *reader, heads []hprof.ObjectHead, data []byte, base int64) error {
	p.rank.windowArrays(&p.window, heads, data, base, p.idSize)
	for i := range heads {
		h := &heads[i]
		var err error
		switch h.Tag {
		case hprof.SubInstanceDump:
			err = p.directInstance(rd, h.Offset, h.ClassID, h.StackTrace, h.Contents(data, base, p.idSize))
		case hprof.SubObjectArrayDump:
			err = p.directObjectArray(rd, h.ClassID, h.StackTrace, p.window.elements(int(h.Length)))
		default:
			err = p.directPrimitiveArray(h.Tag, h.ElemType, h.Length, h.StackTrace)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// directSub writes sub-record s: an object, a root or a heap info
// directly, anything else through its item.
func (p *pass2) directSub(rd *reader, s *hprof.SubRecord) error {
	switch s.Tag {
	case hprof.SubInstanceDump:
		return p.directInstance(rd, s.Offset, s.ClassID, s.StackTrace, s.Data)
	case hprof.SubObjectArrayDump:
		if s.Pending == 0 {
			return p.directObjectArray(rd, s.ClassID, s.StackTrace, s.Elements)
		}
		return p.directArrayPieces(rd, s)
	case hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
		return p.directPrimitiveArray(s.Tag, s.ElemType, s.Length, s.StackTrace)
	}
	switch {
	case s.Tag.IsRoot():
		return p.directRoot(s)
	case s.Tag == hprof.SubHeapDumpInfo:
		// Android's hprof sets the heap back to default at each
		// segment it starts (ART's StartNewHeapDumpSegment), so a
		// segment of about 4 KiB starts with one: 30,195 in the
		// Android-shaped dump, most of them in the gaps of its spans.
		if err := p.beforeObject(s.Tag); err != nil {
			return err
		}
		return p.heapInfo(s.HeapType, s.HeapName)
	}
	return p.subItem(rd, s)
}

// directRoot writes GC root s as reader.sub and pass2.sub would, without
// the item: what sub writes before it (no heap is dropped here), then the
// root, its object resolved now (an unknown ID numbered in its order).
// An Android dump has a root for each interned string: 400,730 of the
// 410,199 roots of the Android-shaped dump (docs/measurements.md), where
// the item's way took 25 ms of pass 2's goroutine's time a crunch.
func (p *pass2) directRoot(s *hprof.SubRecord) error {
	if err := p.beforeObject(s.Tag); err != nil {
		return err
	}
	return p.writeRoot(s.Tag, p.obj(s.ID), s.Thread, s.Frame, s.JNIRef, s.StackTrace)
}

// itemsHeapDump is singleHeapDump when objects are dumped twice or heaps
// dropped: every sub-record through its item.
func (p *pass2) itemsHeapDump(rd *reader) error {
	s := &rd.s
	for {
		if err := rd.r.NextSub(s); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := p.subItem(rd, s); err != nil {
			return err
		}
		rd.readTo(s.Offset)
	}
}

// subItem writes sub-record s through its item, as the reader makes it
// for the other goroutine, and the pieces of an array read in pieces.
func (p *pass2) subItem(rd *reader, s *hprof.SubRecord) error {
	rd.sub(s)
	err := p.writeItems()
	if err == nil && s.Tag == hprof.SubObjectArrayDump && s.Pending > 0 {
		err = rd.arrayPieces(s, func() error {
			rd.readTo(rd.r.Offset())
			return p.writeItems()
		})
	}
	return err
}

// beforeObject does for an object record (or a root) what sub does
// before it writes one: counts it, writes the definitions of its chunk if
// it starts one, and the place of the class dumps before it. Its usual
// case, neither, is written out: beginSub and placeRun were calls of
// their own, not inlined in the large functions that call this.
func (p *pass2) beforeObject(tag hprof.SubTag) error {
	if p.clock.subs >= chunkSubRecords || p.place != 0 {
		return p.beforeObjectSlow(tag)
	}
	p.subCount[tag]++
	p.clock.subs++ // clock.next, in a chunk
	return p.w.Err()
}

// beforeObjectSlow is beforeObject when the object starts a chunk or
// follows class dumps.
func (p *pass2) beforeObjectSlow(tag hprof.SubTag) error {
	if err := p.beginSub(tag); err != nil {
		return err
	}
	return p.placeRun()
}

// directInstance writes the instance at file offset off, of class ID
// class and stack trace serial trace, whose fields are the bytes data, in
// the order of reader.instance and pass2.instance: its class checked (an
// error before anything is written, as for an item that failed); what
// sub writes before an object; its class defined; its references
// resolved, unknown IDs numbered in their order (the values kept are read
// as in reader.instance, from picks). It is not inlined: the profile
// (PGO) inlined it into directObjects, and then not its lookups (one
// goroutine, 134 MB dump: 2,250.3 M instructions against 2,156.4 M).
//
//go:noinline
func (p *pass2) directInstance(rd *reader, off int64, class uint64, trace uint32, data []byte) error {
	k, ci, err := rd.instanceClassAt(off, class, len(data))
	if err != nil {
		return err
	}
	if err := p.beforeObject(hprof.SubInstanceDump); err != nil {
		return err
	}
	// ci, class k, is loaded once for its flags and its picks.
	if err := p.ensureDefined(k, ci); err != nil {
		return err
	}
	picks := p.picksOf(k, ci)
	vals := p.valsFor(len(picks))
	x, base := p.rank, p.objBase // in locals: p.objBase was loaded for each reference
	// A loop for the classes whose values are all references (all, by
	// default), for each ID size, and one for the others.
	switch {
	case ci.refsOnly && p.idSize == 4:
		for i := range picks {
			v := uint64(binary.BigEndian.Uint32(data[picks[i].off:]))
			if v != 0 {
				if o, ok := x.lookup(v); ok { // obj, with lookup inlined
					v = base + uint64(o)
				} else {
					v = p.objSlow(v)
				}
			}
			vals[i] = v
		}
	case ci.refsOnly:
		for i := range picks {
			v := binary.BigEndian.Uint64(data[picks[i].off:])
			if v != 0 {
				if o, ok := x.lookup(v); ok {
					v = base + uint64(o)
				} else {
					v = p.objSlow(v)
				}
			}
			vals[i] = v
		}
	default:
		for i, f := range picks {
			v := readValue(data[f.off:], int(f.size))
			if f.ref && v != 0 {
				if o, ok := x.lookup(v); ok {
					v = base + uint64(o)
				} else {
					v = p.objSlow(v)
				}
			}
			vals[i] = v
		}
	}
	if err := p.objectStart(0, trace); err != nil { // no ID: no redumps here
		return err
	}
	_, err = p.w.InstanceKept(uint64(k)+1, vals)
	return err
}

// valsFor returns p.vals with n values, grown if need be.
func (p *pass2) valsFor(n int) []uint64 {
	if cap(p.vals) < n {
		p.vals = make([]uint64, n)
	}
	return p.vals[:n]
}

// directPrimitiveArray writes a primitive array (or Android's NODATA
// one).
func (p *pass2) directPrimitiveArray(tag hprof.SubTag, elem hprof.BasicType, length, trace uint32) error {
	if err := p.beforeObject(tag); err != nil {
		return err
	}
	return p.primitiveArray(tag, uint8(elem), length, 0, trace)
}

// directObjectArray writes an object array of class ID classID and stack
// trace serial trace, its elements, IDs of the dump, resolved in place,
// then its class (a class of the dump first, as arrayClass), as
// reader.sub and pass2.objectArray do. It stays a function of its own:
// inlined in singleHeapDump, where the profile (PGO) makes it hot since
// directArrayPieces came beside it, its lookups were not inlined in turn,
// and crunch ran 2 % more instructions on the 134 MB dump.
//
//go:noinline
func (p *pass2) directObjectArray(rd *reader, classID uint64, trace uint32, elems []uint64) error {
	if err := p.beforeObject(hprof.SubObjectArrayDump); err != nil {
		return err
	}
	x, base := p.rank, p.objBase
	// A stretch of elements at a time, the window's prefetches ahead of
	// them (directObjects; from directSub, the window has none left).
	for from := 0; from < len(elems); from += windowStep {
		to := min(from+windowStep, len(elems))
		p.window.advance(x, to-from)
		for i, v := range elems[from:to] {
			if v != 0 {
				if o, ok := x.lookup(v); ok { // obj, with lookup inlined
					elems[from+i] = base + uint64(o)
				} else {
					elems[from+i] = p.objSlow(v)
				}
			}
		}
	}
	class, ok := rd.class(classID)
	if !ok {
		class = p.obj(classID)
	}
	if err := p.objectStart(0, trace); err != nil { // no ID: no redumps here
		return err
	}
	_, err := p.w.ObjectArray(class, elems)
	return err
}

// directArrayPieces writes an object array whose elements the Reader left
// pending (hprof.Reader.MaxElements), as pass2.objectArray and
// pass2.arrayPiece do for one read in pieces by reader.arrayPieces: its
// class first, then its elements arrayPiece at a time, each piece
// resolved in place.
func (p *pass2) directArrayPieces(rd *reader, s *hprof.SubRecord) error {
	if err := p.beforeObject(s.Tag); err != nil {
		return err
	}
	class, ok := rd.class(s.ClassID)
	if !ok {
		class = p.obj(s.ClassID)
	}
	if err := p.objectStart(0, s.StackTrace); err != nil { // no ID: no redumps here
		return err
	}
	if _, err := p.w.BeginObjectArray(class, uint64(s.Length)); err != nil {
		return err
	}
	for s.Pending > 0 {
		if err := rd.r.NextElements(s, arrayPiece); err != nil {
			return err
		}
		for i, v := range s.Elements {
			if v != 0 {
				s.Elements[i] = p.obj(v)
			}
		}
		if err := p.w.ObjectArrayElements(s.Elements); err != nil {
			return err
		}
		rd.readTo(rd.r.Offset())
	}
	return nil
}
