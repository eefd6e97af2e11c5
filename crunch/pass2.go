package crunch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// pass2 reads the dump again and writes the BMD file: top-level records in
// dump order, each name and class definition written just before the
// first record that needs it (a file cut anywhere keeps what precedes the
// cut), objects with their references remapped.
type pass2 struct {
	*state
	w        *bmd.Writer
	dec      hprof.BodyDecoder
	b        *aheadBatch        // the batch being written
	nextMiss int                // the next of b.missAt to number
	vals     []uint64           // an instance's values (pass2.single)
	heads    []hprof.ObjectHead // objects skimmed (pass2.singleHeapDump)

	class       bmd.Class // reused for each definition
	heap        heapTracker
	heapName    uint64 // HPROF string ID of the current heap's name
	heapInfoOut bool   // the current heap's HEAP INFO is written
	clock       chunkClock
	nextDef     int      // classes of defOrder defined so far
	group       []int    // scratch for defineGroup
	groupNames  []uint64 // scratch for defineGroup: the BMD IDs of its fields' names
	place       uint64   // class dumps met since the last other heap record
	loadsSeen   int      // LOAD CLASS records met

	frames    []uint64
	split     *splitter     // spans written on other goroutines, or nil
	gapReader *hprof.Reader // the gaps' bytes a span's output keeps (gapFrom)
	window    wordWindow    // a batch's arrays' elements and their index words (directObjects)

	topCount, topBytes, subCount [256]int64 // by tag, for Stats
	rawLeftOut                   [256]int64 // top-level records left out (rawKept), by tag
}

func (st *state) runPass2(in *input, out io.Writer) error {
	r, err := in.reader(2)
	if err != nil {
		return err
	}
	r.MaxElements = maxArrayWhole // larger arrays in pieces: reader.arrayPieces
	h := r.Header()
	meta := &bmd.Metadata{HPROFVersion: h.Version, IDSize: h.IDSize, Timestamp: h.Timestamp, Hash: bmd.HashXX64,
		Options: st.opt.Canonical(), Tool: st.opt.Tool, Objects: st.nObj, Classes: uint64(len(st.classes)), Strings: st.nStrings,
		ClassesPlaced: true, Alignment: st.addrs.alignment(), UncompressedRefs: h.IDSize == 8 && st.addrs.seen && !st.addrs.overlap,
		Labels: st.opt.Labels}
	w, err := bmd.NewWriter(out, meta)
	if err != nil {
		return err
	}
	p := &pass2{state: st, w: w, dec: hprof.BodyDecoder{IDSize: st.idSize}}
	st.nStrings = 0 // now: strings written
	if err := p.consume(r, in); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// Pass 1 read the dump to its end: it was cut since.
			return fmt.Errorf("crunch: the input file changed while it was read, cut short after the first pass: %w", err)
		}
		return err
	}
	for _, ci := range st.classes {
		if !ci.placed {
			return fmt.Errorf("crunch: class 0x%x dumped outside any heap dump", ci.dump.ID)
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	p.fillStats(r.Offset())
	p.rawWarning()
	return nil
}

// oneGoroutine reports whether pass 2, not split, runs on one goroutine:
// as pass2OneGoroutine says.
func (p *pass2) oneGoroutine() bool { return pass2OneGoroutine(p.nObj, p.dumpBytes) }

// consume runs the reading side of pass 2 on r in another goroutine and
// writes what it reads, in order; with one core, both on this goroutine
// (pass2.single). Split by spans (startSplit), other goroutines write
// spans ahead, also where another program has the other core's time:
// pass 2's goroutine takes over a span whose goroutine is slow to write it
// (splitter.take).
func (p *pass2) consume(r *hprof.Reader, in *input) error {
	rd := &reader{state: p.state, r: r, in: in, progress: progress{f: p.opt.Progress, pass: 2}}
	if p.startSplit(in, r.Header()); p.split != nil {
		defer p.stopSplit()
		if in.at != nil { // the spans' bytes are skipped, not read
			r.SetReadAhead(atReadAhead)
		}
		return p.single(rd)
	}
	if p.oneGoroutine() {
		return p.single(rd)
	}
	// Two filled batches may wait for the writer: with none, each side
	// waited for the other about 20 ms of the 134 MB dump's 145 ms pass 2
	// (the reader with every reference of its batch resolved, the writer
	// for a batch), and crunch took 6 % longer.
	const queued = 2
	pp := startPipe(queued+3, queued, rd.run)
	defer pp.stop()
	for b := range pp.full {
		if err := p.writeBatch(b); err != nil {
			return err
		}
		if b.err != nil {
			return b.err
		}
		pp.recycle(b)
	}
	return nil
}

// writeBatch resolves the references of batch b the reader left, and
// writes its items.
func (p *pass2) writeBatch(b *aheadBatch) error {
	p.b, p.nextMiss = b, 0
	b.resolveRefs(p.state, len(b.refAt))
	return p.batch()
}

// batch writes the items of the current batch.
func (p *pass2) batch() error {
	for i := range p.b.items {
		it := &p.b.items[i]
		var err error
		switch it.kind {
		case aheadTop:
			p.topCount[it.tag]++
			p.topBytes[it.tag] += int64(it.n) + 9
			if err = p.w.Time(it.trace); err == nil {
				err = p.record(it)
			}
		case aheadHeapDump:
			p.topCount[it.tag]++
			p.topBytes[it.tag] += int64(it.n) + 9
			err = p.heapDump(it)
		case aheadSub:
			err = p.sub(it)
		case aheadHeapEnd:
			err = p.placeRun()
		case aheadSubFailed:
			err = p.b.errs[it.lo]
		case aheadArrayPiece:
			err = p.arrayPiece(it)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dense returns the dense ID of a resolved value: a miss gets its number
// now, in order.
func (p *pass2) dense(v uint64) uint64 {
	if v&missBit != 0 {
		return p.obj(p.b.misses[v&^missBit])
	}
	return v
}

// record handles one top-level record.
func (p *pass2) record(it *ahead) error {
	rec := hprof.Record{Tag: hprof.Tag(it.tag), Time: it.trace, Offset: int64(it.id), Length: it.n}
	switch rec.Tag {
	case hprof.TagString: // written where first used
		return nil
	case hprof.TagLoadClass:
		return p.loadClass()
	case hprof.TagHeapDumpEnd:
		return p.w.HeapDumpEnd()
	}
	body := p.b.bytes[it.lo : it.lo+it.n]
	switch rec.Tag {
	case hprof.TagUnloadClass:
		serial, err := p.dec.ParseSerial(rec, body)
		if err != nil {
			return err
		}
		return p.w.UnloadClass(serial)
	case hprof.TagEndThread:
		serial, err := p.dec.ParseSerial(rec, body)
		if err != nil {
			return err
		}
		return p.w.EndThread(serial)
	case hprof.TagStackFrame:
		return p.stackFrame(rec, body)
	case hprof.TagStackTrace:
		return p.stackTrace(rec, body)
	case hprof.TagStartThread:
		return p.startThread(rec, body)
	}
	if !rawKept(rec.Tag, body) {
		p.rawLeftOut[rec.Tag]++
		return nil
	}
	return p.w.RawRecord(uint8(rec.Tag), body)
}

// rawKept reports whether a top-level record that has no BMD record of its
// own is kept, its body unchanged, as a RAW RECORD: only a record of the
// four tags whose layouts hold numbers alone (flags, sizes, counts and
// serials), with the length of that layout. A record of another tag may
// hold anything, a string or an array's contents among its bytes, and so
// may bytes that a layout does not account for: crunch cannot tell, so it
// leaves them out (spec/bmd.md §5.9).
func rawKept(tag hprof.Tag, body []byte) bool {
	n := uint64(len(body))
	switch tag {
	case hprof.TagControlSettings: // u4 flags, u2 stack trace depth
		return n == 6
	case hprof.TagHeapSummary: // u4 live bytes and instances, u8 allocated bytes and instances
		return n == 24
	case hprof.TagCPUSamples: // u4 samples, u4 traces, each trace u4 samples and u4 stack trace serial
		return n >= 8 && n == 8+8*uint64(binary.BigEndian.Uint32(body[4:]))
	case hprof.TagAllocSites: // u2 flags, u4 cutoff, u4 live bytes and instances, u8 allocated bytes and instances, u4 sites, 25 bytes each
		return n >= 34 && n == 34+25*uint64(binary.BigEndian.Uint32(body[30:]))
	}
	return false
}

// rawWarning says which top-level records rawKept left out, if any.
func (p *pass2) rawWarning() {
	var total int64
	var tags []string
	for t, c := range p.rawLeftOut {
		if c > 0 {
			total += c
			tags = append(tags, fmt.Sprintf("%s ×%d", hprof.Tag(t), c))
		}
	}
	if total > 0 {
		p.stats.Warnings = append(p.stats.Warnings, fmt.Sprintf("%d top-level records left out, of a tag unknown or of a length its layout does not have, which could hold anything: %s",
			total, strings.Join(tags, ", ")))
	}
}

// loadClass writes a LOAD CLASS record where the dump has it, unless it
// is written with its class's definition.
func (p *pass2) loadClass() error {
	l := &p.loads[p.loadsSeen]
	p.loadsSeen++
	if l.deferred {
		return nil
	}
	return p.writeLoad(l)
}

// writeLoad writes a LOAD CLASS record, with its time.
func (p *pass2) writeLoad(l *loadInfo) error {
	name, err := p.sid(l.name)
	if err != nil {
		return err
	}
	if err := p.w.Time(l.time); err != nil {
		return err
	}
	return p.w.LoadClass(l.serial, p.obj(l.class), l.trace, name)
}

func (p *pass2) stackFrame(rec hprof.Record, body []byte) error {
	f, err := p.dec.ParseStackFrame(rec, body)
	if err != nil {
		return err
	}
	var ids [3]uint64
	for i, hid := range [3]uint64{f.Method, f.Signature, f.SourceFile} {
		if ids[i], err = p.sid(hid); err != nil {
			return err
		}
	}
	_, err = p.w.StackFrame(ids[0], ids[1], ids[2], f.Class, f.Line)
	return err
}

func (p *pass2) stackTrace(rec hprof.Record, body []byte) error {
	t, err := p.dec.ParseStackTrace(rec, body, p.frames)
	if err != nil {
		return err
	}
	p.frames = t.Frames
	for i, f := range p.frames {
		p.frames[i] = p.state.frames[f]
	}
	return p.w.StackTrace(t.Serial, t.Thread, p.frames)
}

func (p *pass2) startThread(rec hprof.Record, body []byte) error {
	t, err := p.dec.ParseStartThread(rec, body)
	if err != nil {
		return err
	}
	var ids [3]uint64
	for i, hid := range [3]uint64{t.Name, t.Group, t.ParentGroup} {
		if ids[i], err = p.sid(hid); err != nil {
			return err
		}
	}
	return p.w.StartThread(t.Serial, p.obj(t.Object), t.StackTrace, ids[0], ids[1], ids[2])
}

// heapDump starts a heap dump record: the definitions its first chunk
// needs, and the HEAP DUMP record. Its sub-records follow (sub), with the
// definitions of its later chunks before each; its end writes the place of
// its last class dumps.
func (p *pass2) heapDump(it *ahead) error {
	if p.clock.record() {
		if err := p.defineChunk(p.clock.chunk); err != nil {
			return err
		}
	}
	// The record's time after the definitions: a LOAD CLASS written with
	// its class's definition sets its own (TestRecordTimes).
	if err := p.w.Time(it.trace); err != nil {
		return err
	}
	return p.w.HeapDump(hprof.Tag(it.tag) == hprof.TagHeapDumpSegment)
}

// placeRun writes the place of the class dumps met since the last other
// sub-record.
func (p *pass2) placeRun() error {
	n := p.place
	p.place = 0
	return p.w.PlaceClasses(n)
}

// sub writes a sub-record, after the definitions of its chunk if it
// starts one.
func (p *pass2) sub(it *ahead) error {
	tag := hprof.SubTag(it.tag)
	if err := p.beginSub(tag); err != nil {
		return err
	}
	if tag == hprof.SubClassDump {
		return p.classDump(it)
	}
	if err := p.placeRun(); err != nil {
		return err
	}
	dropped := p.heap.dropped(p.drop)
	switch {
	case tag == hprof.SubHeapDumpInfo:
		return p.heapInfo(it.n, it.id)
	case tag.IsRoot():
		if dropped && tag != hprof.SubRootThreadObject {
			return nil
		}
		return p.root(it)
	case dropped:
		return nil
	case tag == hprof.SubInstanceDump:
		return p.instance(it)
	case tag == hprof.SubObjectArrayDump:
		return p.objectArray(it)
	case tag == hprof.SubPrimitiveArrayDump, tag == hprof.SubPrimitiveArrayNoData:
		return p.primitiveArray(tag, it.elem, it.n, it.id, it.trace)
	}
	return nil
}

// beginSub counts a sub-record and writes the definitions of its chunk if
// it starts one.
func (p *pass2) beginSub(tag hprof.SubTag) error {
	p.subCount[tag]++
	if p.clock.next() {
		return p.defineChunk(p.clock.chunk)
	}
	return nil
}

// heapInfo writes a HEAP DUMP INFO of heap heapType, named by the HPROF
// string ID name.
func (p *pass2) heapInfo(heapType uint32, name uint64) error {
	p.heap.cur, p.heap.set, p.heapName = heapType, true, name
	p.heapInfoOut = !p.drop[heapType]
	if !p.heapInfoOut {
		return nil
	}
	id, err := p.sid(name)
	if err != nil {
		return err
	}
	return p.w.HeapInfo(heapType, id)
}

// classDump places a class's first dump (its definition was written
// before), or writes another dump of it (a file with several heap dumps)
// where it is.
func (p *pass2) classDump(it *ahead) error {
	k := p.classIdx[it.id]
	ci := p.classes[k]
	if ci.placed {
		if err := p.placeRun(); err != nil {
			return err
		}
		c, err := p.bmdClass(k, p.b.dumps[it.lo], nil)
		if err != nil {
			return err
		}
		c.Redump = true
		_, err = p.w.Class(c)
		return err
	}
	if p.heap.dropped(p.drop) && !p.heapInfoOut {
		// A class is never dropped: name its heap.
		name, err := p.sid(p.heapName)
		if err != nil {
			return err
		}
		if err := p.w.HeapInfo(p.heap.cur, name); err != nil {
			return err
		}
		p.heapInfoOut = true
	}
	if err := p.defineChain(k); err != nil {
		return err
	}
	ci.placed = true
	p.place++
	return nil
}

// defineChain makes sure class k and its super classes are defined (the
// plan of pass 1 has done it before, but for a damaged plan).
func (p *pass2) defineChain(k int) error {
	for j := k; j >= 0 && !p.classes[j].defined; j = p.super(j) {
		if err := p.define(j); err != nil {
			return err
		}
	}
	return nil
}

// root writes a GC root, unless its object is left out with its heap. A
// ROOT THREAD OBJECT always stays, its object left out or not: the roots
// of a thread's frames name it by its serial, and an analyzer looks the
// thread up by that serial (Android Studio's perflib fails to load a dump
// where a frame's thread has none).
func (p *pass2) root(it *ahead) error {
	return p.writeRoot(hprof.SubTag(it.tag), p.dense(it.id), it.lo, it.n, it.aux, it.trace)
}

// writeRoot writes a GC root of dense object o, as root says.
func (p *pass2) writeRoot(tag hprof.SubTag, o uint64, thread, frame uint32, jniRef uint64, trace uint32) error {
	if o > p.nObj && o <= p.nObj+uint64(p.dropped.len()) && tag != hprof.SubRootThreadObject {
		return nil // a root of an object left out with its heap
	}
	return p.w.Root(uint8(tag), o, thread, frame, jniRef, trace)
}

// objectStart writes what precedes an object record: its stack trace
// serial, and, in a file where objects are dumped more than once, its ID
// (resolved, a miss numbered now).
func (p *pass2) objectStart(id uint64, trace uint32) error {
	if p.redumps {
		if err := p.w.ObjectID(p.dense(id)); err != nil {
			return err
		}
	}
	return p.w.Trace(trace)
}

// primitiveArray writes a primitive array (or Android's NODATA one) of n
// elements of type elem.
func (p *pass2) primitiveArray(tag hprof.SubTag, elem uint8, n uint32, id uint64, trace uint32) error {
	if err := p.objectStart(id, trace); err != nil {
		return err
	}
	_, err := p.w.PrimitiveArray(bmd.Type(elem), n, tag == hprof.SubPrimitiveArrayNoData)
	return err
}

// instance and objectArray number unknown IDs in the order the values,
// the object and the class come in.

func (p *pass2) instance(it *ahead) error {
	k := int(it.n)
	if err := p.ensureDefined(k, p.classes[k]); err != nil {
		return err
	}
	values := p.resolved(it, uint32(it.aux))
	if err := p.objectStart(it.id, it.trace); err != nil {
		return err
	}
	_, err := p.w.InstanceKept(uint64(k)+1, values)
	return err
}

// ensureDefined makes sure class k, ci, is defined before an instance of
// it.
func (p *pass2) ensureDefined(k int, ci *classInfo) error {
	if ci.defined {
		return nil
	}
	return p.defineChain(k)
}

func (p *pass2) objectArray(it *ahead) error {
	if it.elem == aheadPieces { // its elements follow (arrayPiece): the class first
		if err := p.objectStart(it.id, it.trace); err != nil {
			return err
		}
		_, err := p.w.BeginObjectArray(p.dense(it.aux), uint64(it.n))
		return err
	}
	elems := p.resolved(it, it.lo+it.n)
	if err := p.objectStart(it.id, it.trace); err != nil {
		return err
	}
	_, err := p.w.ObjectArray(p.dense(it.aux), elems)
	return err
}

// arrayPiece writes elements of the object array begun before (objectArray).
func (p *pass2) arrayPiece(it *ahead) error {
	if p.heap.dropped(p.drop) {
		return nil
	}
	return p.w.ObjectArrayElements(p.resolved(it, it.lo+it.n))
}

// resolved returns the values of an instance or array, vals[it.lo:hi],
// the misses among them numbered.
func (p *pass2) resolved(it *ahead, hi uint32) []uint64 {
	v := p.b.vals[it.lo:hi]
	for p.nextMiss < len(p.b.missAt) && p.b.missAt[p.nextMiss] < it.lo {
		p.nextMiss++ // of an object not written (a dropped heap's)
	}
	for p.nextMiss < len(p.b.missAt) && p.b.missAt[p.nextMiss] < hi {
		at := p.b.missAt[p.nextMiss]
		v[at-it.lo] = p.dense(v[at-it.lo])
		p.nextMiss++
	}
	return v
}

// readValue reads a big-endian value of size bytes.
func readValue(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// fillStats counts what went in and out.
func (p *pass2) fillStats(inBytes int64) {
	st := p.stats
	for t := range 256 {
		if p.topCount[t] > 0 {
			st.InRecords[hprof.Tag(t).String()] += p.topCount[t]
			st.InBytesBy[hprof.Tag(t).String()] += p.topBytes[t]
		}
		if p.subCount[t] > 0 {
			st.InRecords[hprof.SubTag(t).String()] += p.subCount[t]
		}
	}
	st.InBytes = inBytes
	st.Objects = p.w.Objects()
	st.Classes = uint64(len(p.classes))
	st.Strings = p.nStrings
	st.Dangling = uint64(len(p.danglingIDs))
	for k := range p.w.Count {
		if p.w.Count[k] > 0 {
			st.OutRecords[bmd.Kind(k).String()] = p.w.Count[k]
			st.OutBytesBy[bmd.Kind(k).String()] = p.w.Bytes[k]
		}
	}
	st.OutBytes = p.w.Written()
}
