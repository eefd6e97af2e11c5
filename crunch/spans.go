package crunch

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/cores"
)

// Pass 2 by spans, on two goroutines or more. A span is a heap dump record
// of a mapped dump (a JDK's HEAP DUMP SEGMENTs are a megabyte each), a run
// of small ones, or a piece of a large one. Its
// objects need, to be written, only what pass 1 built and nothing changes
// in pass 2: the index, which gives each object its dense ID and each
// reference its target, and the classes. So another goroutine can write
// the objects of a span ahead, into runs of object records
// (bmd.ObjectRun), while pass 2's goroutine writes the records before it.
// When pass 2's goroutine comes to the span, it adds the runs to the
// file (bmd.Writer.AddObjects), skips the sub-records they hold, writes
// the roots the other goroutine read and resolved (addRoots: a root
// changes pass 2's state, its chunk clock and the numbering of IDs not in
// the dump), and writes the others itself, one by one, as it writes any
// sub-record: the other sub-records that change pass 2's state (class
// dumps, heap infos), and objects the other goroutine could not write (a reference
// to an ID not in the dump, which pass 2 numbers in the order it meets
// them, an instance of a class not defined yet, an array read in
// pieces). The file is the same, byte for byte, as written on one
// goroutine: a run makes the records writing them one by one makes, and
// a run is added only where what it took for granted holds (its first
// object ID, the chunk of its records, which classes are defined); else
// pass 2's goroutine writes its objects itself.

// span is what another goroutine may write ahead: a heap dump record of
// minSpanBytes to maxSpanBytes, or a run of smaller ones, one after the
// other in the file, that together reach minSpanBytes (an Android
// dump's): from the first one, rec, its sub-records on (start), to the
// end of the last, end; pass 1's chunk clock at its start. Its other
// records' clocks follow from it, as in pass 1, so that nothing is kept
// for each. A piece of a larger record (pass1.pieces) is a span of one
// record, rec standing for its sub-records alone (pieceRecord).
type span struct {
	rec     hprof.Record
	end     int64
	clock   chunkClock
	records int // how many
}

// start returns the file offset of the span's first sub-record.
func (s *span) start() int64 { return s.rec.Body() }

// minSpanBytes and maxSpanBytes bound the heap dump records that are
// spans of their own; smaller ones go in spans of several records. A
// span's handing over costs about as much as writing a few KiB of it: an
// Android dump's HEAP DUMP SEGMENTs of 4 KiB (ART's hprof writes 128
// objects or 4 KiB a segment) go in spans of 16 or so. A record larger
// than 4 MiB is no span whole: the spans written ahead hold their pages of
// the mapped dump and their runs until pass 2's goroutine comes to them,
// and with genhprof's records of 32 MiB as spans crunch took 175 MB where
// one goroutine takes 38 (3.2 M objects, a budget of 101 MB:
// scripts/scale.sh). It is cut into pieces of about pieceBytes instead
// (41 MB there). A JDK writes records of 1 MB. Tests change them.
var (
	minSpanBytes int64 = 64 << 10
	maxSpanBytes int64 = 4 << 20
)

// atSpanBytes bounds the spans, and the pieces of larger records, of a
// dump read at offsets (readAt), which a goroutine reads into a buffer of
// its own before it writes them: on the 134 MB dump, spans of 256 KiB
// took 4,400 page faults where whole records of 1 MB took 5,400 (their
// buffers and runs; 3,200 on one goroutine), and pass 2 0.17 s against
// 0.19 s (2026-12-02). Tests change it.
var atSpanBytes int64 = 256 << 10

// atReadAhead is the most a pass's goroutine reads at a time from a dump
// read at offsets, when other goroutines read its records or spans (its
// Reader skips them: hprof.Reader.SetReadAhead): smaller than the records
// it hands over, so that it reads little of them. With a read ahead the
// Reader also seeks past any skip of 16 KiB or more and reads 4 KiB
// after a seek (bufin's seekBytes and soughtRead).
const atReadAhead = 64 << 10

// spanLimits returns the most bytes of a span, and about the bytes of a
// piece of a larger record: maxSpanBytes and pieceBytes, or for a dump
// read at offsets atSpanBytes if smaller.
func (in *input) spanLimits() (maxSpan, piece int64) {
	if in.mapped == nil {
		return min(maxSpanBytes, atSpanBytes), min(pieceBytes, atSpanBytes)
	}
	return maxSpanBytes, pieceBytes
}

// addSpan notes a heap dump record that pass 1 has read and merged, rec,
// read to file offset read with error err, pass 1's chunk clock at its
// start being clock, as a span or part of one, if it can be: a whole
// record of a file mapped or read at offsets, read without error, of
// maxSpanBytes at most (atSpanBytes read at offsets: spanLimits).
// A small record goes on the span before it if it follows its last
// record in the file.
func (p *pass1) addSpan(rec hprof.Record, read int64, err error, clock chunkClock) {
	if p.noSpans {
		return
	}
	end := rec.End()
	n := int64(rec.Length)
	if maxSpan, _ := p.in.spanLimits(); !p.in.split() || err != nil || read != end || n > maxSpan {
		p.endSpan()
		return
	}
	if g := &p.filling; g.records > 0 && (n >= minSpanBytes || g.end != rec.Offset) {
		p.endSpan()
	}
	if g := &p.filling; g.records == 0 {
		*g = span{rec: rec, clock: clock}
	}
	g := &p.filling
	g.end, g.records = end, g.records+1
	if g.end-g.start() >= minSpanBytes {
		p.endSpan()
	}
}

// pieceBytes is about how large the pieces of a heap dump record larger
// than maxSpanBytes are, each a span (pass1.pieces): a JDK's segments are
// 1 MB. Tests change it.
var pieceBytes int64 = 1 << 20

// markEvery returns how far apart pass 1 marks the sub-record boundaries
// of heap dump record rec where pass 2 may cut it into spans: every
// pieceBytes bytes (atSpanBytes read at offsets: spanLimits) if rec is
// larger than a span and whole in a file mapped or read at offsets, else
// 0, none.
func (p *pass1) markEvery(rec hprof.Record) int64 {
	maxSpan, piece := p.in.spanLimits()
	if p.noSpans || int64(rec.Length) <= maxSpan || !p.in.whole(rec.End()) {
		return 0
	}
	return piece
}

// pieceStart is where the piece of a large record that pass 1 is reading
// starts: its file offset and chunk clock; ok false where there is none.
type pieceStart struct {
	rec   hprof.Record
	from  int64
	clock chunkClock
	ok    bool
}

// pieces notes as spans the pieces of heap dump record rec, larger than
// maxSpanBytes, that segment sg read and marked (segment.markFrom): from
// the record's start or the mark before to each mark, and to the record's
// end once it is read whole. first says that sg starts the record, last
// that it ends its reading, at offset read. A piece is a span of one
// record that is its sub-records from one mark to the next (pieceRecord):
// a goroutine writes it ahead as any other span, and pass 2's goroutine
// takes it up where it comes to its start (singleHeapDump).
func (p *pass1) pieces(rec hprof.Record, sg *segment, first, last bool, read int64) {
	if sg.markEvery == 0 {
		return
	}
	pc := &p.piece
	if first {
		p.endSpan() // the small records' before it
		*pc = pieceStart{rec: rec, from: rec.Body(), clock: sg.clock, ok: true}
	}
	for _, m := range sg.marks {
		c := sg.clock
		c.advance(m.subs)
		p.addPiece(m.off)
		pc.from, pc.clock = m.off, c
	}
	if last {
		if sg.err == nil && read == rec.End() {
			p.addPiece(rec.End())
		}
		pc.ok = false
	}
}

// addPiece notes the piece from the last mark to offset to as a span.
func (p *pass1) addPiece(to int64) {
	if pc := &p.piece; pc.ok && to > pc.from {
		p.spans = append(p.spans, span{rec: pieceRecord(pc.rec, pc.from, to), end: to, clock: pc.clock, records: 1})
	}
}

// pieceRecord returns the record that stands for the sub-records of heap
// dump record rec from file offset from to offset to, as if they were a
// record of their own, whose header would end at from.
func pieceRecord(rec hprof.Record, from, to int64) hprof.Record {
	return hprof.Record{Tag: rec.Tag, Time: rec.Time, Offset: from - hprof.RecordHeaderSize, Length: uint32(to - from)}
}

// endSpan ends the span that addSpan is filling, if any.
func (p *pass1) endSpan() {
	if p.filling.records > 0 {
		p.spans = append(p.spans, p.filling)
		p.filling = span{}
	}
}

// pass2Split reports whether pass 2, over objects objects, writes spans
// on other goroutines (cores.Split); tests change it.
var pass2Split = cores.Split

// spanPart is a part of a span: a run of object records that another
// goroutine wrote, a run of GC roots it read, a HEAP DUMP INFO it read,
// or a gap, sub-records that pass 2's goroutine writes.
type spanPart struct {
	from, to int64          // its sub-records' file offsets
	run      *bmd.ObjectRun // nil for a gap, roots or a heap's info
	tag      hprof.SubTag   // the run's first record's
	trace    uint32         // the stack trace serial of its records
	chunk    uint32         // the chunk of its records
	starts   bool           // its first record starts the chunk
	// Roots: its records are GC roots, spanOut.roots[rootsFrom:rootsTo].
	roots              bool
	rootsFrom, rootsTo int
	// A heap's info: its record is a HEAP DUMP INFO, of heap heapType
	// named by the string of ID heapName (Android's hprof starts each
	// segment of about 4 KiB with one).
	info     bool
	heapType uint32
	heapName uint64
}

// gap reports whether the part is a gap.
func (pt *spanPart) gap() bool { return pt.run == nil && !pt.roots && !pt.info }

// spanOut is what a goroutine made of a span: its parts, in order.
type spanOut struct {
	parts    []spanPart       // by record, none from one into the next
	recFirst int              // the first part of the record being cut
	runs     []*bmd.ObjectRun // the runs of parts, reused
	used     int              // runs in use
	roots    []spanRoot       // the roots of the parts of roots
	extras   []rootExtra      // their fields beyond the object
	records  []hprof.Record   // the span's records cut into parts, in order
	whole    bool             // parts cover its records, gaps' bytes in gapData
	gapData  []byte           // the bytes of its gaps, in order, where whole
	failed   bool             // the mapped file failed: all a gap
	home     chan *spanOut    // the free outputs it goes back to (splitter)
	filler   *spanWorker      // the worker that wrote it last, if any
}

// spanRoot is a GC root read ahead: its sub-record's tag, its object
// resolved to its dense ID, or, where the indexes do not hold it (miss),
// the object ID of the dump, which pass 2's goroutine numbers in its
// order, and its other fields where one is not zero (extra). It takes 16
// bytes: nearly all of an Android dump's roots (400,730 of the 410,199 of
// the Android-shaped dump of docs/measurements.md) are interned strings,
// an object and nothing else, and the roots of its spans of 64 KiB were
// the largest of crunch's allocations on that dump, 8.0 MB, with each
// root's thread, frame, stack trace and JNI reference in it (32 bytes),
// grown by append (now 2.6 MB, room made at once and touched only as it
// fills; docs/measurements.md, "Memory written once").
type spanRoot struct {
	object uint64
	extra  uint32 // 1 + its place in spanOut.extras, or 0: all zero
	tag    hprof.SubTag
	miss   bool
}

// rootExtra holds the fields of a GC root beyond its object, where one of
// them is not zero.
type rootExtra struct {
	jniRef               uint64
	thread, frame, trace uint32
}

// reset empties o for another span.
func (o *spanOut) reset() {
	o.parts, o.recFirst, o.used, o.roots, o.extras, o.failed = o.parts[:0], 0, 0, o.roots[:0], o.extras[:0], false
	o.records, o.whole, o.gapData = o.records[:0], false, o.gapData[:0]
}

// newRun returns an empty run of objects from ID first. The runs of o,
// filled one after the other, share one table of classes
// (bmd.ObjectRun.Sibling).
func (o *spanOut) newRun(first uint64, st *state) *bmd.ObjectRun {
	if o.used == len(o.runs) {
		if o.used == 0 {
			o.runs = append(o.runs, bmd.NewObjectRun(uint64(len(st.classes)), st.idSize))
		} else {
			o.runs = append(o.runs, o.runs[0].Sibling())
		}
	}
	r := o.runs[o.used]
	o.used++
	r.Reset(first)
	return r
}

// spanWorker writes the objects of spans into runs. The state it reads,
// pass 1's, does not change in pass 2; what it learns it keeps for itself.
type spanWorker struct {
	st     *state
	h      hprof.Header
	in     *input
	data   []byte   // the mapped dump, or the span read (buf)
	base   int64    // the file offset of data[0]
	buf    []byte   // the span read, where the dump is not mapped
	plan   []uint32 // by class index, the chunk before which pass 2 defines it
	seen   recentClasses
	picks  []workerPicks // by class index
	vals   []uint64
	heads  []hprof.ObjectHead // objects skimmed
	s      hprof.SubRecord
	r      hprof.Reader // of the record being cut, reused
	window wordWindow   // a batch's arrays' elements and their index words (skimmed)
	// beat counts its steps through a span: a batch of objects, or
	// beatSubs other sub-records (recordParts). Pass 2's goroutine,
	// waiting for the span, takes it over where it stops (take).
	beat atomic.Uint64
	subs int // sub-records since the last beat
}

// beatSubs is how many sub-records other than a batch of objects make a
// step of spanWorker.beat: Android's 410,199 roots, one at a time, would
// otherwise cost an atomic add each.
const beatSubs = 64

// workerPicks are a class's picks, as spanWorker keeps them.
type workerPicks struct {
	picks          []fieldPick
	refsOnly, done bool
}

// encode writes what it can of span sp into o.
func (wk *spanWorker) encode(sp *span, o *spanOut) {
	o.reset()
	o.filler = wk
	if wk.in.mapped == nil {
		if !wk.read(sp) {
			o.failed = true
			return
		}
	}
	var err error
	func() {
		defer guard()()
		defer wk.in.catchFault(&err)
		wk.parts(sp, o)
		o.whole = o.keepGaps(sp, wk.data, wk.base)
	}()
	if err != nil {
		o.failed = true
	}
}

// read reads span sp's bytes from the file read at offsets into wk.buf,
// and reports whether it read them all. A span of more than maxAtRead
// bytes (a piece with a large array in it) is not read: pass 2's
// goroutine writes it through its own buffer.
func (wk *spanWorker) read(sp *span) bool {
	n := sp.end - sp.start()
	if n > maxAtRead {
		return false
	}
	data, err := wk.in.readAt(&wk.buf, sp.start(), n)
	wk.data, wk.base = data, sp.start()
	return err == nil
}

// maxAtRead bounds the bytes of a span that a goroutine reads at offsets
// into a buffer of its own (pass 1's records split off are bounded by
// maxSplitRecord).
const maxAtRead = 4 << 20

// parts cuts span sp into parts, record by record (recordParts): no
// part goes from one record into the next, where pass 2's goroutine
// writes the end of one and the start of the other. Where a record's
// part leaves the rest of the span to pass 2's goroutine, the parts end.
// The records after the first are read from their headers in the mapped
// dump, their chunk clocks counted on from the first's, as pass 1 did.
func (wk *spanWorker) parts(sp *span, o *spanOut) {
	c := spanCursor{o: o, clk: sp.clock}
	rec := sp.rec
	for i := 0; ; i++ {
		if i > 0 {
			c.clk.record()
		}
		if !wk.recordParts(rec, &c) {
			return
		}
		o.records = append(o.records, rec)
		if rec.End()+hprof.RecordHeaderSize > sp.end || i+1 == sp.records {
			return
		}
		rec = hprof.DecodeRecordHeader(wk.data[rec.End()-wk.base:], rec.End())
		if !rec.Tag.IsHeapDump() || rec.End() > sp.end {
			return // not as pass 1 read it: the file changed, pass 2's goroutine says how
		}
	}
}

// recordParts cuts heap dump record rec into parts: a run of objects ends
// where the next object cannot be added to it (a new chunk, another stack
// trace serial) or is not written here, which starts a gap. Its objects
// are read a batch at a time (SkimObjectsData), the others and the
// objects it leaves one by one (NextSub). It reports false where it
// leaves the rest of the record, and of the span, to pass 2's goroutine.
func (wk *spanWorker) recordParts(rec hprof.Record, c *spanCursor) bool {
	o := c.o
	r := &wk.r
	end := rec.End()
	if r.ResetSubRecords(wk.h, rec, wk.data[rec.Body()-wk.base:end-wk.base], rec.Body()) != nil {
		return false
	}
	r.MaxElements = maxArrayWhole
	if wk.heads == nil {
		wk.heads = make([]hprof.ObjectHead, pass2Skim)
	}
	o.settle() // the record before's last part, if any
	o.recFirst = len(o.parts)
	c.end, c.cur, c.self = end, nil, 0
	s := &wk.s
	for {
		if n, data, base := r.SkimObjectsData(wk.heads, 0); n > 0 {
			wk.beat.Add(1)
			if !wk.skimmed(c, wk.heads[:n], data, base, r.Offset()) {
				return false
			}
			continue
		}
		if wk.subs++; wk.subs == beatSubs {
			wk.subs = 0
			wk.beat.Add(1)
		}
		off := r.Offset()
		err := r.NextSub(s)
		if err == io.EOF {
			o.settle()
			return true
		}
		if err != nil { // the rest is pass 2's goroutine's, which reports it
			o.gap(off).to = end
			return false
		}
		switch s.Tag {
		case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
			h := hprof.ObjectHead{Offset: off, ID: s.ID, ClassID: s.ClassID, StackTrace: s.StackTrace, Length: s.Length, Tag: s.Tag, ElemType: s.ElemType}
			data := s.Data
			if s.Tag == hprof.SubObjectArrayDump {
				data = nil // its elements are s.Elements
			}
			if !wk.object(c, &h, data, s.Elements, s.Pending > 0, c.clk.next()) {
				o.gap(off).to = end
				return false
			}
		default:
			c.clk.next()
			switch {
			case s.Tag.IsRoot():
				c.cur = o.root(off, wk.st, s)
			case s.Tag == hprof.SubHeapDumpInfo:
				o.settle()
				o.parts = append(o.parts, spanPart{from: off, info: true, heapType: s.HeapType, heapName: s.HeapName})
				c.cur = &o.parts[len(o.parts)-1]
			default:
				c.cur = o.gap(off)
			}
		}
		for s.Pending > 0 { // an array read in pieces: its elements are the gap's
			if err := r.NextElements(s, arrayPiece); err != nil {
				c.cur.to = end
				return false
			}
		}
		c.cur.to = r.Offset()
	}
}

// skimmed adds the objects of heads, read by SkimObjectsData from data,
// its first byte at file offset base, the last ending at offset last, as
// parts adds those it reads one by one. It reports false where it leaves the rest of
// the span to pass 2's goroutine. The end of the last part (to) is set
// where the part changes, to the offset of the object that leaves it (the
// objects of heads follow each other), and after the last object: not
// after each (two stores and a branch an object; the split on the 134 MB
// dump 2,426.3 -> 2,387.2 M instructions, the least of three cachegrind
// runs). The switch's two cases stay apart: merged, the lines below moved,
// the PGO profile no longer matched the call of add to its samples, add
// was not inlined, and the instructions saved were lost. The cursor's
// clock and count and the run the objects go on, with its stack trace
// serial, are locals, written back to c around object, which reads and
// changes them; read through c, they were loaded and stored for each
// object (the split on the 134 MB dump 2,356.6 -> 2,342.4 M
// instructions, the least of five cachegrind runs each; its wall time
// did not change in alternating runs). The lines before the
// call of add are as many as before them (their statements joined), so
// that the profile still finds it.
func (wk *spanWorker) skimmed(c *spanCursor, heads []hprof.ObjectHead, data []byte, base, last int64) bool {
	wk.st.rank.windowArrays(&wk.window, heads, data, base, wk.st.idSize)
	clk, self, idSize := c.clk, c.self, wk.st.idSize
	run, trace := c.running()
	for i := range heads {
		h, contents, elems := &heads[i], []byte(nil), []uint64(nil)
		switch h.Tag {
		case hprof.SubInstanceDump:
			contents = h.Contents(data, base, idSize)
		case hprof.SubObjectArrayDump: // elements read by windowArrays
			elems = wk.window.elements(int(h.Length))
		}
		starts := clk.next()
		// Most objects go on the run before them (object's first case),
		// which a run, once begun, always holds.
		if !starts && run != nil && trace == h.StackTrace {
			if !wk.add(run, h, contents, elems, clk.chunk) {
				c.cur.to = h.Offset
				c.cur = c.o.gap(h.Offset)
				run = nil
			}
			self++
			continue
		}
		if c.cur != nil {
			c.cur.to = h.Offset
		}
		c.clk, c.self = clk, self
		if !wk.object(c, h, contents, elems, false, starts) {
			c.o.gap(h.Offset).to = c.end
			return false
		}
		self = c.self
		run, trace = c.running()
	}
	c.clk, c.self = clk, self
	if c.cur != nil {
		c.cur.to = last
	}
	return true
}

// spanCursor is where spanWorker.parts is in a span.
type spanCursor struct {
	o    *spanOut
	end  int64 // the end of the span's record being cut
	clk  chunkClock
	cur  *spanPart // the last part, nil before the first
	self uint64    // the dense ID of the next object, once known
}

// running returns the run of the cursor's last part and its stack trace
// serial, or nil where that part is not a run (or there is none).
func (c *spanCursor) running() (*bmd.ObjectRun, uint32) {
	if c.cur == nil {
		return nil, 0
	}
	return c.cur.run, c.cur.trace
}

// object adds the object of head h to the run at c, or to a gap: data
// is an instance's fields as the dump holds them, elems an object array's
// elements read, unless pending (read in pieces); starts, that it starts
// a chunk. It reports false if the object's dense ID is not known, where
// the rest of the span is left to pass 2's goroutine.
func (wk *spanWorker) object(c *spanCursor, h *hprof.ObjectHead, data []byte, elems []uint64, pending, starts bool) bool {
	o := c.o
	if c.self == 0 {
		if c.self, _ = wk.st.known(h.ID); c.self == 0 {
			return false
		}
	}
	if c.cur == nil || c.cur.run == nil || starts || c.cur.trace != h.StackTrace {
		o.settle()
		o.parts = append(o.parts, spanPart{from: h.Offset, run: o.newRun(c.self, wk.st), tag: h.Tag, trace: h.StackTrace, chunk: c.clk.chunk, starts: starts})
		c.cur = &o.parts[len(o.parts)-1]
	}
	added := !pending && wk.add(c.cur.run, h, data, elems, c.clk.chunk)
	if !added && c.cur.run.Len() == 0 {
		o.parts, o.used = o.parts[:len(o.parts)-1], o.used-1
		c.cur = nil
		if len(o.parts) > 0 {
			c.cur = &o.parts[len(o.parts)-1]
		}
	}
	c.self++
	if !added {
		c.cur = o.gap(h.Offset)
	}
	return true
}

// gap returns the gap that goes on from the last part, or a new one from
// offset off.
func (o *spanOut) gap(off int64) *spanPart {
	o.settle()
	if n := len(o.parts); n > o.recFirst && o.parts[n-1].gap() {
		return &o.parts[n-1]
	}
	o.parts = append(o.parts, spanPart{from: off, to: off})
	return &o.parts[len(o.parts)-1]
}

// maxSpanRoots bounds the roots a span's output holds (16 bytes each, and
// 24 more for each with fields beyond its object): those after them are
// its gaps'. A span of 64 KiB (an Android dump's) has at most 13,107 roots
// (5 bytes each with 4-byte IDs); a JDK's record of 4 MiB could have
// 838,860, 13 MB in each of the outputs written ahead. Tests change it.
var maxSpanRoots = 1 << 14

// root adds GC root s, its sub-record at offset off, to the part of roots
// that goes on from the last part, or to a new one, which it returns.
// Its object is resolved here, with the indexes of st, which only read
// them. An Android dump has a root for each interned string (400,730 of
// the 410,199 roots of the Android-shaped dump of docs/measurements.md),
// which pass 2's goroutine, whose work there held the other goroutine
// back, then writes without reading or resolving them (addRoots).
func (o *spanOut) root(off int64, st *state, s *hprof.SubRecord) *spanPart {
	if len(o.roots) >= maxSpanRoots {
		return o.gap(off)
	}
	o.settle()
	n := len(o.parts)
	if n == o.recFirst || !o.parts[n-1].roots {
		o.parts = append(o.parts, spanPart{from: off, to: off, roots: true, rootsFrom: len(o.roots), rootsTo: len(o.roots)})
		n++
	}
	if len(o.roots) == 0 {
		// Room for all at once (emptyWithCap): grown by append, a quarter
		// at a time, the roots were copied several times over, into new
		// memory each time (GOGC 800: no collection frees the old).
		o.roots = emptyWithCap(o.roots, maxSpanRoots)
	}
	r := spanRoot{object: s.ID, tag: s.Tag}
	if s.JNIRef|uint64(s.Thread)|uint64(s.Frame)|uint64(s.StackTrace) != 0 {
		o.extras = append(o.extras, rootExtra{jniRef: s.JNIRef, thread: s.Thread, frame: s.Frame, trace: s.StackTrace})
		r.extra = uint32(len(o.extras))
	}
	if d, ok := st.known(s.ID); ok {
		r.object = d
	} else {
		r.miss = true
	}
	o.roots = append(o.roots, r)
	pt := &o.parts[n-1]
	pt.rootsTo = len(o.roots)
	return pt
}

// minRunRecords is the fewest records a run holds: a shorter one is
// written by pass 2's goroutine, in a gap. A run costs its ObjectRun and
// its part, some 500 bytes: a span cut into runs of one record each (each
// object of its own stack trace serial) took 500 MB where pass 2 on one
// goroutine took 25 (a 32 MiB span of 33-byte instances). Tests change
// it.
var minRunRecords = 16

// minRunBytes is the fewest bytes of the dump that a run of fewer than
// minRunRecords records holds: at or above it, it is no gap. A run of 16
// of the smallest records (instances of 33 bytes) holds about 528 bytes;
// one of a few large primitive arrays, where an Android dump has them (a
// segment of about 4 KiB holds one array of 4 KiB or more alone), went
// to a gap, and pass 2's goroutine read and wrote 33.9 MB of the 134 MB
// of the Android-shaped dump in 6,705 such gaps. Tests change it.
var minRunBytes int64 = 1 << 10

// settle turns the last part, once complete, into a gap if it is a run
// of fewer than minRunRecords records and minRunBytes bytes of the dump,
// one with the gap before it.
func (o *spanOut) settle() {
	n := len(o.parts)
	if n == 0 || o.parts[n-1].run == nil || o.parts[n-1].run.Len() >= minRunRecords || o.parts[n-1].to-o.parts[n-1].from >= minRunBytes {
		return
	}
	o.used-- // its run is the last one used
	if n-2 >= o.recFirst && o.parts[n-2].gap() {
		o.parts[n-2].to = o.parts[n-1].to
		o.parts = o.parts[:n-1]
		return
	}
	o.parts[n-1].run = nil
}

// add adds the object of head h (see object), of chunk chunk, to run,
// and reports whether it did.
func (wk *spanWorker) add(run *bmd.ObjectRun, h *hprof.ObjectHead, data []byte, elems []uint64, chunk uint32) bool {
	switch h.Tag {
	case hprof.SubInstanceDump:
		return wk.instance(run, h.ClassID, data, chunk)
	case hprof.SubObjectArrayDump:
		return wk.resolveElements(elems) && wk.objectArray(run, h.ClassID, elems, chunk)
	}
	return run.PrimitiveArray(bmd.Type(h.ElemType), h.Length, h.Tag == hprof.SubPrimitiveArrayNoData)
}

// instance adds an instance whose values are all references, of a class
// defined by then. Its loops are directInstance's, lookup inlined. It is
// not inlined itself: the profile (PGO) inlined it into add, and then
// not its lookups, a call for each reference (with the loop that resolved
// a batch's array elements then, likewise, split:
// 2,530.9 M instructions against 2,475.8 M on the 134 MB dump, 2,821.3
// against 2,693.4 M on big-200m.hprof, the least of three to four runs:
// under valgrind, the probe of internal/cores can spin for billions).
// The picks are in a local (picks): read through pk, the slice was loaded
// again for each reference, since the stores to vals might have changed
// it (a change within the spread of cachegrind's counts of the split).
//
//go:noinline
func (wk *spanWorker) instance(run *bmd.ObjectRun, classID uint64, data []byte, chunk uint32) bool {
	k, ok := wk.classOf(classID)
	if !ok {
		return false
	}
	ci := wk.st.classes[k]
	if ci.chainSize != len(data) || !wk.defined(k, chunk) {
		return false
	}
	pk := wk.picksOf(k)
	if !pk.refsOnly {
		return false
	}
	if cap(wk.vals) < len(pk.picks) {
		wk.vals = make([]uint64, len(pk.picks))
	}
	vals := wk.vals[:len(pk.picks)]
	x, base, picks := wk.st.rank, wk.st.objBase, pk.picks
	if wk.st.idSize == 4 {
		for i, p := range picks {
			v := uint64(binary.BigEndian.Uint32(data[p.off:]))
			if v != 0 {
				if o, ok := x.lookup(v); ok {
					v = base + uint64(o)
				} else if v, ok = wk.st.known(v); !ok {
					return false
				}
			}
			vals[i] = v
		}
	} else {
		for i, p := range picks {
			v := binary.BigEndian.Uint64(data[p.off:])
			if v != 0 {
				if o, ok := x.lookup(v); ok {
					v = base + uint64(o)
				} else if v, ok = wk.st.known(v); !ok {
					return false
				}
			}
			vals[i] = v
		}
	}
	return run.Instance(uint64(k)+1, int64(ci.chainSize), vals)
}

// resolveElements turns an object array's elements, HPROF IDs, into
// dense IDs in place, and reports whether all are objects of the dump
// (or null). It resolves them a stretch at a time, the window's
// prefetches ahead of them (skimmed, windowArrays; for an array read
// with NextSub, the window has none left or prefetches the words of a
// batch left to pass 2's goroutine, which do no harm). Where a lookup
// fails, the window counts the rest of its stretch only, and prefetches
// behind the lookups for the rest of its batch: such an array goes to
// pass 2's goroutine, as the rest of the span mostly does. Its loop is
// written out (lookup inlined by the profile), as directInstance's.
//
//go:noinline
func (wk *spanWorker) resolveElements(elems []uint64) bool {
	x, base := wk.st.rank, wk.st.objBase
	for from := 0; from < len(elems); from += windowStep {
		to := min(from+windowStep, len(elems))
		wk.window.advance(x, to-from)
		for i := from; i < to; i++ {
			if v := elems[i]; v != 0 {
				if o, ok := x.lookup(v); ok {
					elems[i] = base + uint64(o)
				} else if elems[i], ok = wk.st.known(v); !ok {
					return false
				}
			}
		}
	}
	return true
}

// objectArray adds an object array whose elements (dense IDs, or 0) and
// class are all objects of the dump.
func (wk *spanWorker) objectArray(run *bmd.ObjectRun, classID uint64, elems []uint64, chunk uint32) bool {
	if k, ok := wk.classOf(classID); ok {
		return run.ObjectArray(uint64(k)+1, wk.defined(k, chunk), elems)
	}
	class, ok := wk.resolve(classID)
	return ok && run.ObjectArray(class, false, elems)
}

// resolve returns the dense ID of object id, if it is an object of the
// dump (or null): as pass2.obj would, where obj numbers other IDs in the
// order it meets them.
func (wk *spanWorker) resolve(id uint64) (uint64, bool) {
	if o, ok := wk.st.rank.lookup(id); ok {
		return wk.st.objBase + uint64(o), true
	}
	return wk.st.known(id)
}

// classOf returns the class index of the class with HPROF ID id, if it
// is one, as reader.classOf does.
func (wk *spanWorker) classOf(id uint64) (int, bool) {
	if k, ok := wk.seen.get(id); ok {
		return int(k), true
	}
	o, ok := wk.st.classIndex.lookup(id)
	if !ok {
		return 0, false
	}
	wk.seen.put(id, int32(o))
	return int(o), true
}

// defined reports whether class k is defined when pass 2 writes a record
// of chunk chunk, as the plan has it: pass 2 defines a class before the
// chunk of its first need, its dump or an instance of it or of a
// subclass (planDefinitions). (pass2.fits checks it.)
func (wk *spanWorker) defined(k int, chunk uint32) bool {
	return wk.plan[k] <= chunk
}

// picksOf returns the picks of class k, as state.picks would.
func (wk *spanWorker) picksOf(k int) *workerPicks {
	if wk.picks == nil {
		wk.picks = make([]workerPicks, len(wk.st.classes))
	}
	pk := &wk.picks[k]
	if !pk.done {
		pk.picks, pk.refsOnly = wk.st.pickFields(k, nil)
		pk.done = true
	}
	return pk
}

// Span states.
const (
	spanFree  = iota // nobody's yet
	spanAhead        // taken by a goroutine writing it ahead
	spanDone         // written ahead
	spanHere         // pass 2's goroutine writes it itself (taken, or taken over)
)

// splitter hands spans to goroutines that write them ahead, and gives
// pass 2's goroutine what they wrote, in order.
type splitter struct {
	spans      []span
	states     []atomic.Int32
	outs       []*spanOut      // by span, once done
	done       []chan struct{} // by span, closed once done
	free       chan *spanOut   // outputs to fill, the goroutines' writing ahead
	helperFree chan *spanOut   // helper's outputs to fill (helperOuts)
	next       atomic.Int64    // the first span a goroutine may take
	stop       chan struct{}
	wg         sync.WaitGroup
	here       int         // the span pass 2's goroutine is in or comes to next
	helper     *spanWorker // pass 2's goroutine's, writing ahead while it waits
	mine       *spanOut    // what it writes of a span it takes (spansHere false)
	// What was written of the current span, or nil if none (written
	// here); whether it goes back to its free outputs after; the next of
	// its parts.
	cur     *spanOut
	curFree bool
	part    int

	added, refused int // runs added, and runs written one by one instead (fits)
	unread         int // spans written without reading them (writeSpanRecords)
	infosAdded     int // heap infos written from parts (addInfo)
	rootsAdded     int // roots written from parts of roots (addRoots)

	// Taking over a span whose goroutine stopped writing it (take): by
	// span, the goroutine writing it ahead; the spans taken over.
	writer []atomic.Pointer[spanWorker]
	stolen int
}

// Tests set these: newSpanWorker changes each spanWorker made (the
// helper first), splitStopped sees the splitter when pass 2 ends,
// writingAhead each span a goroutine begins to write ahead, on that
// goroutine, takingSpan each span pass 2's goroutine comes to (take),
// stallCheck each of its looks at the goroutine writing the span it waits
// for, and spanTaken each span it takes over.
var (
	newSpanWorker = func(*spanWorker) {}
	splitStopped  = func(*splitter) {}
	writingAhead  = func(*spanWorker) {}
	takingSpan    = func(int) {}
	stallCheck    = func() {}
	spanTaken     = func(int) {}
	// spansHere lets pass 2's goroutine write a span no other goroutine
	// has taken as any other record; without it, it writes the span ahead
	// itself and adds what it wrote.
	spansHere = true
)

// splitWorkers is how many goroutines write spans ahead, beside pass 2's.
const splitWorkers = 1

// helperOuts is how many outputs pass 2's goroutine has of its own, to
// write spans ahead into while it waits (splitter.take): each output goes
// back to the outputs it came from (spanOut.home), and so is always
// filled on the same goroutine. Drawn from the outputs the goroutines
// share, as until the thirty-seventh session, an output was filled on
// one core after the other had filled it and read it, about half the
// time (each wrote about half of the spans ahead: 2,441 and 2,512 of
// big-1300m.hprof's 4,953), and waited for its cache lines to come over:
// crunch took 1,775.8 ms of processor time where it takes 1,741.9
// (medians of 20 alternating runs), and 146.7 ms on the 134 MB dump where
// it takes 139.3 (30 runs; with 4 of its own, 143.9 ms). The
// Android-shaped dump, whose spans' outputs matter most (below): 196.6
// against 194.0 ms (30 runs), 44.6 against 46.7 MB of peak RSS (5 runs).
const helperOuts = 2

// The outputs of spans (spanOut) the goroutines writing ahead share,
// spanOuts of them: about aheadBytes of the dump's spans, from minOuts to
// maxOuts. A JDK's spans of 1 MB get minOuts. With minOuts for an Android
// dump's spans of 64 KiB, the goroutine writing ahead waited for an output
// to fill for 27 to 65 ms of pass 2's 106 to 144 ms on the Android-shaped
// dump of 134 MB (a throwaway timer, 2026-12-05): pass 2's goroutine, at a
// span not written yet, writes the next one ahead itself (splitter.take)
// and held one of these outputs (one of its own since the thirty-seventh
// session, helperOuts), while those written waited for it. With 8, the medians of
// crunch there were 5 to 25 ms lower in four series of alternating runs of
// five (142.8 against 168.5 ms in one of 30), the same in the fifth, the
// slowest; 44 against 40 MB. 16 and 32 were no faster, and took 49.8 and
// 55.6 MB (docs/measurements.md, "The split's outputs").
const (
	aheadBytes = 4 << 20
	minOuts    = 2*splitWorkers + 2
	maxOuts    = 2 * minOuts
)

// spanOuts returns how many outputs the goroutines writing spans ahead
// share: aheadBytes over the spans' mean size, from minOuts to maxOuts.
func spanOuts(spans []span) int {
	if len(spans) == 0 {
		return minOuts
	}
	var bytes int64
	for i := range spans {
		bytes += spans[i].end - spans[i].start()
	}
	mean := max(bytes/int64(len(spans)), 1)
	return int(min(max(aheadBytes/mean, minOuts), maxOuts))
}

// startSplit starts the goroutines that write spans ahead, if pass 2 has
// spans and the cores for them.
func (p *pass2) startSplit(in *input, h hprof.Header) {
	if len(p.spans) == 0 || p.redumps || len(p.drop) > 0 || !in.split() || !pass2Split(p.nObj) {
		return
	}
	sp := &splitter{spans: p.spans, states: make([]atomic.Int32, len(p.spans)), outs: make([]*spanOut, len(p.spans)),
		done: make([]chan struct{}, len(p.spans)), free: make(chan *spanOut, spanOuts(p.spans)), stop: make(chan struct{}),
		writer: make([]atomic.Pointer[spanWorker], len(p.spans))}
	for i := range sp.done {
		sp.done[i] = make(chan struct{})
	}
	for range cap(sp.free) {
		sp.free <- &spanOut{home: sp.free}
	}
	sp.helperFree = make(chan *spanOut, helperOuts)
	for range helperOuts {
		sp.helperFree <- &spanOut{home: sp.helperFree}
	}
	plan := make([]uint32, len(p.classes))
	for k, ci := range p.classes {
		plan[k] = ci.chunk
	}
	worker := func() *spanWorker {
		wk := &spanWorker{st: p.state, h: h, in: in, data: in.mapped, plan: plan}
		newSpanWorker(wk)
		return wk
	}
	sp.helper = worker()
	sp.wg.Add(splitWorkers)
	for range splitWorkers {
		wk := worker()
		go func() {
			defer sp.wg.Done()
			for {
				select {
				case <-sp.stop:
					return
				default:
				}
				var o *spanOut
				select {
				case o = <-sp.free:
				case <-sp.stop:
					return
				}
				if !sp.ahead(wk, o) {
					return
				}
			}
		}()
	}
	p.split = sp
}

// stopSplit stops the goroutines writing ahead, and waits for them.
func (p *pass2) stopSplit() {
	if p.split != nil {
		close(p.split.stop)
		p.split.wg.Wait()
		splitStopped(p.split)
	}
}

// ahead takes the next free span and writes it into o, reporting false if
// there is none left. Where pass 2's goroutine took the span over
// meanwhile (take), o goes back unread.
func (sp *splitter) ahead(wk *spanWorker, o *spanOut) bool {
	for i := sp.next.Load(); i < int64(len(sp.spans)); i++ {
		if sp.states[i].CompareAndSwap(spanFree, spanAhead) {
			sp.next.Store(i + 1)
			sp.writer[i].Store(wk)
			writingAhead(wk)
			wk.encode(&sp.spans[i], o)
			sp.outs[i] = o
			if !sp.states[i].CompareAndSwap(spanAhead, spanDone) {
				sp.outs[i] = nil
				o.home <- o
				return true
			}
			close(sp.done[i])
			return true
		}
	}
	o.home <- o
	return false
}

// atSpan writes the heap dump record the reader is at the start of, if it
// is a record of a span written ahead, or the piece of the record that
// starts where the reader is, and reports whether it wrote the rest of
// the record. At a span's first record, if no goroutine has taken the
// span, pass 2's goroutine takes it, and writes its records as any other;
// if one is writing it, it waits, writing another span ahead meanwhile if
// it can, and keeps what was written for the span's other records.
func (p *pass2) atSpan(rd *reader) (bool, error) {
	sp := p.split
	off := rd.r.Offset()
	for sp.here < len(sp.spans) && sp.spans[sp.here].end <= off {
		sp.leave() // not met to its end: pass 2 stopped at an error before
	}
	if sp.here == len(sp.spans) || off < sp.spans[sp.here].start() {
		return false, nil
	}
	s := &sp.spans[sp.here]
	if off == s.start() {
		sp.take(sp.here)
	}
	if sp.cur == nil { // written here, as any other record
		return false, nil
	}
	if off == s.start() && sp.cur.whole {
		err := p.writeSpanRecords(rd, s)
		if err == nil {
			sp.leave()
		}
		return true, err
	}
	end := min(rd.rec.End(), s.end) // a piece's end, or the record's
	err := p.writeSpanRecord(rd, s, end)
	if err == nil && end == s.end {
		sp.leave()
	}
	return end == rd.rec.End() || err != nil, err
}

// pieceIn returns the file offset of the next span that starts within
// the heap dump record the reader is in, at its offset or after, and that
// pass 2's goroutine has not taken to write itself: a piece of it
// (pass1.pieces); or 0, none.
func (sp *splitter) pieceIn(rd *reader) int64 {
	off := rd.r.Offset()
	for i := sp.here; i < len(sp.spans); i++ {
		st := sp.spans[i].start()
		if st < off || st == off && sp.states[i].Load() == spanHere {
			continue
		}
		if st < rd.rec.End() {
			return st
		}
		return 0
	}
	return 0
}

// take makes span i the current span, with what was written of it ahead
// (sp.cur), or none if pass 2's goroutine writes it itself: where no
// goroutine has taken it, or where the one writing it has made no step
// (spanWorker.beat) through a wait of stallWait while pass 2's goroutine
// had none of its own outputs left to write spans ahead into. That
// goroutine then does not run (another program has its core), and pass 2's
// goroutine takes the span over rather than wait for it; what the other
// writes of it goes back unread (ahead).
func (sp *splitter) take(i int) {
	takingSpan(i)
	sp.cur, sp.curFree, sp.part = nil, false, 0
	if sp.states[i].CompareAndSwap(spanFree, spanHere) {
		sp.writeHere(i)
		return
	}
	more := true // spans left to write ahead
	var watched *spanWorker
	var seen uint64 // its step when last looked at
	for sp.states[i].Load() != spanDone {
		if more {
			select {
			case o := <-sp.helperFree:
				more = sp.ahead(sp.helper, o)
				continue
			case <-sp.done[i]:
				continue
			default:
			}
		}
		stallCheck()
		wk := sp.writer[i].Load()
		if b := wk.beatNow(); wk == nil || wk != watched || b != seen {
			watched, seen = wk, b
			sp.await(i, wk)
			continue
		}
		if sp.states[i].CompareAndSwap(spanAhead, spanHere) {
			sp.stolen++
			spanTaken(i)
			sp.writeHere(i)
			return
		}
	}
	sp.cur, sp.curFree = sp.outs[i], true
	sp.outs[i] = nil
}

// beatNow returns wk's step through its span, 0 for no goroutine (nil).
func (wk *spanWorker) beatNow() uint64 {
	if wk == nil {
		return 0
	}
	return wk.beat.Load()
}

// stallWait is how long pass 2's goroutine waits for a span before it
// looks again at the goroutine writing it, and takes it over if that has
// made no step meanwhile (take). A step is a batch of objects or 64 other
// sub-records, some tens of microseconds; a goroutine that stops, stops
// for a scheduler's slice of several milliseconds.
const stallWait = time.Millisecond

// await waits for span i, until it is done, or for stallWait past the
// last step of wk, the goroutine writing it (nil: not known yet). It
// spins rather than sleep: woken from sleep by the other goroutine, pass
// 2's goroutine ran again about 115 µs later on this VM (a throwaway
// program, medians of 400), where the span it waits for is usually done
// within some hundreds of microseconds, and with a timer, the Go runtime
// woke it about a millisecond late (1.04 to 1.06 ms past a wait of 50
// µs). Each look gives the processor up to any thread waiting for it
// (osYield), where the goroutine it waits for may be: with GOMAXPROCS=2
// on one processor (taskset -c 0), the 134 MB dump took 264.0 against
// 273.4 ms, spinning with runtime.Gosched alone (medians of 21 alternating
// runs; 244.0 against 245.8 beside a loop on the other core, 169.6
// against 169.1 with both cores free, 31 runs).
func (sp *splitter) await(i int, wk *spanWorker) {
	if wk == nil { // taken a moment ago
		runtime.Gosched()
		return
	}
	seen, since := wk.beatNow(), time.Now()
	for sp.states[i].Load() != spanDone {
		if b := wk.beatNow(); b != seen {
			seen, since = b, time.Now()
		} else if time.Since(since) >= stallWait {
			return
		}
		runtime.Gosched()
		osYield()
	}
}

// writeHere has pass 2's goroutine write span i, which it has taken
// (spanHere), as any other record; without spansHere, ahead into its own
// output.
func (sp *splitter) writeHere(i int) {
	if spansHere {
		return
	}
	if sp.mine == nil {
		sp.mine = new(spanOut)
	}
	sp.helper.encode(&sp.spans[i], sp.mine)
	sp.cur = sp.mine
}

// leave ends the current span, giving back what was written of it.
func (sp *splitter) leave() {
	if sp.curFree {
		sp.cur.home <- sp.cur
	}
	sp.cur, sp.curFree = nil, false
	sp.here++
}

// writeSpanRecord writes the heap dump record of span s from the reader's
// offset to end, from the parts that were written of it ahead, and one
// by one what they leave (the rest of a record where they end).
func (p *pass2) writeSpanRecord(rd *reader, s *span, end int64) error {
	sp := p.split
	o := sp.cur
	for ; !o.failed && sp.part < len(o.parts) && o.parts[sp.part].from < end; sp.part++ {
		pt := &o.parts[sp.part]
		if off := rd.r.Offset(); off != pt.from {
			return fmt.Errorf("crunch: pass 2 at offset %d where a part of the span %d to %d starts at %d", off, s.start(), s.end, pt.from)
		}
		added, err := p.addPart(o, pt)
		switch {
		case err != nil:
		case added:
			err = rd.skipPart(pt.to)
		default:
			err = p.gap(rd, pt.to)
		}
		if err != nil {
			return err
		}
	}
	if rd.r.Offset() < end {
		return p.gap(rd, end)
	}
	return nil
}

// addPart writes part pt of output o from what was written of it ahead
// (roots, a heap's info, a run that fits here), and reports false where
// pass 2's goroutine writes it from the dump's bytes instead: a gap, or a
// run refused (fits).
func (p *pass2) addPart(o *spanOut, pt *spanPart) (bool, error) {
	sp := p.split
	switch {
	case pt.roots:
		sp.rootsAdded += pt.rootsTo - pt.rootsFrom
		return true, p.addRoots(o.roots[pt.rootsFrom:pt.rootsTo], o.extras)
	case pt.info:
		return true, p.addInfo(pt)
	case pt.run == nil:
		return false, nil
	case p.fits(pt):
		sp.added++
		return true, p.addRun(pt)
	}
	sp.refused++
	return false, nil
}

// keepGaps reports whether the parts of o cover every record of span s,
// a span of several whole records (an Android dump's HEAP DUMP SEGMENTs
// of about 4 KiB), each from its body to its end, and keeps the bytes of
// their gaps, from data, the file's bytes from offset base on: pass 2's
// goroutine then writes the span without reading it (writeSpanRecords).
// The gaps hold a record's HEAP DUMP INFO no more, nor a run of large
// arrays (minRunBytes): 4.0 MB of the Android-shaped dump's 134 MB,
// where the file's reader of pass 2's goroutine, reading each record's
// header, read 64 KiB at a time (atReadAhead) and so nearly all of it.
func (o *spanOut) keepGaps(s *span, data []byte, base int64) bool {
	n := len(o.records)
	if o.failed || s.records < 2 || n != s.records || o.records[0] != s.rec || o.records[n-1].End() != s.end {
		return false
	}
	i := 0
	for _, rec := range o.records {
		at := rec.Body()
		for ; i < len(o.parts) && o.parts[i].from < rec.End(); i++ {
			pt := &o.parts[i]
			if pt.from != at || pt.to > rec.End() {
				return false
			}
			if pt.gap() {
				if pt.from < base || pt.to-base > int64(len(data)) {
					return false
				}
				o.gapData = append(o.gapData, data[pt.from-base:pt.to-base]...)
			}
			at = pt.to
		}
		if at != rec.End() {
			return false
		}
	}
	return i == len(o.parts)
}

// writeSpanRecords writes the records of span s, whose output covers
// them (keepGaps), from the reader's offset, the first one's body, to the
// span's end: each record's start and end as eachRecord would
// (spanRecord), and its parts as writeSpanRecord would (addPart), but
// without reading them from the file: its gaps from the bytes the output keeps
// (gapFrom). The file's reader then goes on from the span's end
// (hprof.Reader.SkipRecords), seeking past it. Only a run that does not
// fit here (fits) is read from the file, the reader moved to it first
// (enterSpanRecord). With an Android dump's records of 4 KiB, pass 2's
// goroutine read nearly all of a span that another goroutine had read
// and written, each header it read taking the 64 KiB after it
// (atReadAhead).
func (p *pass2) writeSpanRecords(rd *reader, s *span) error {
	sp := p.split
	sp.unread++
	o := sp.cur
	if rd.rec != o.records[0] {
		return recordChanged(rd.rec, o.records[0])
	}
	in := 0   // the record the file's reader is in: the first, at its body
	gaps := 0 // the gaps' bytes written
	for k, rec := range o.records {
		if k > 0 {
			if err := p.spanRecord(rd, rec); err != nil {
				return err
			}
		}
		for ; sp.part < len(o.parts) && o.parts[sp.part].from < rec.End(); sp.part++ {
			pt := &o.parts[sp.part]
			added, err := p.addPart(o, pt)
			switch {
			case err != nil, added:
			case pt.gap():
				n := int(pt.to - pt.from)
				err = p.gapFrom(rd, rec, o.gapData[gaps:gaps+n], pt.from)
				gaps += n
			default: // a run refused
				if err = p.enterSpanRecord(rd, o.records, &in, k, pt.from); err == nil {
					err = p.gap(rd, pt.to)
				}
			}
			if err != nil {
				return err
			}
			rd.readTo(pt.to)
		}
	}
	if last := len(o.records) - 1; in < last {
		return rd.r.SkipRecords(s.end, o.records[last].Tag)
	}
	return nil
}

// gapFrom writes the sub-records of a gap of record rec from data, its
// bytes from file offset off on, kept by the goroutine that wrote the
// span, as gap would from the file: with a reader of those bytes in the
// file's reader's place.
func (p *pass2) gapFrom(rd *reader, rec hprof.Record, data []byte, off int64) error {
	if p.gapReader == nil {
		p.gapReader = new(hprof.Reader)
	}
	gr := p.gapReader
	if err := gr.ResetSubRecords(rd.r.Header(), rec, data, off); err != nil {
		return err
	}
	gr.MaxElements = maxArrayWhole
	file := rd.r
	rd.r = gr
	err := p.gap(rd, off+int64(len(data)))
	rd.r = file
	return err
}

// spanRecord ends the heap dump record before rec and starts rec, a
// record of a span written without reading it, as eachRecord would.
func (p *pass2) spanRecord(rd *reader, rec hprof.Record) error {
	rd.endHeapDump()
	if err := p.writeItems(); err != nil {
		return err
	}
	if err := rd.startRecord(rec); err != nil {
		return err
	}
	return p.writeItems()
}

// recordChanged is the error of pass 2's goroutine reading record rec
// where the goroutine that wrote its span read want.
func recordChanged(rec, want hprof.Record) error {
	return fmt.Errorf("crunch: pass 2 at a %s of %d bytes at offset %d where its span's goroutine read a %s of %d bytes: the file changed", rec.Tag, rec.Length, rec.Offset, want.Tag, want.Length)
}

// enterSpanRecord moves the reader to offset at in record k of records,
// those of the span writeSpanRecords writes, where it is in record *in:
// past the records before k, which it has not read, to k's header, which
// it reads, and then to at.
func (p *pass2) enterSpanRecord(rd *reader, records []hprof.Record, in *int, k int, at int64) error {
	if *in != k {
		if err := rd.r.SkipRecords(records[k].Offset, records[k-1].Tag); err != nil {
			return err
		}
		rec, err := rd.r.Next()
		if err != nil {
			return err
		}
		if rec != records[k] {
			return recordChanged(rec, records[k])
		}
		*in = k
	}
	return rd.r.SkipSubs(at)
}

// fits reports whether run pt can be added here: its first object ID is
// the next, its records are those of the chunk where they are, and the
// classes it took as defined or not are.
func (p *pass2) fits(pt *spanPart) bool {
	starts := p.clock.subs >= chunkSubRecords
	chunk, subs := p.clock.chunk, p.clock.subs
	if starts {
		chunk, subs = chunk+1, 0
	}
	n := pt.run.Len()
	if starts != pt.starts || chunk != pt.chunk || subs+n > chunkSubRecords || pt.run.First() != p.w.NextID() {
		return false
	}
	for idx, defined := range pt.run.Uses() {
		ci := p.classes[idx-1]
		if (ci.defined || starts && ci.chunk <= chunk) != defined {
			return false
		}
	}
	return true
}

// addRun writes run pt, as writing its objects one by one (beforeObject,
// objectStart and the record) would.
func (p *pass2) addRun(pt *spanPart) error {
	if err := p.beforeObject(pt.tag); err != nil {
		return err
	}
	if err := p.objectStart(0, pt.trace); err != nil {
		return err
	}
	if err := p.w.AddObjects(pt.run); err != nil {
		return err
	}
	p.clock.subs += pt.run.Len() - 1
	p.subCount[pt.tag]--
	p.subCount[hprof.SubInstanceDump] += int64(pt.run.Count(bmd.KindInstance))
	p.subCount[hprof.SubObjectArrayDump] += int64(pt.run.Count(bmd.KindObjectArray))
	p.subCount[hprof.SubPrimitiveArrayDump] += int64(pt.run.Count(bmd.KindPrimitiveArray))
	p.subCount[hprof.SubPrimitiveArrayNoData] += int64(pt.run.Count(bmd.KindPrimitiveNoData))
	return nil
}

// skipPart skips the sub-records of a part written ahead, to offset to.
func (rd *reader) skipPart(to int64) error {
	if err := rd.r.SkipSubs(to); err != nil {
		return err
	}
	rd.readTo(to)
	return nil
}

// addInfo writes the HEAP DUMP INFO of part pt, read ahead, as directSub
// would.
func (p *pass2) addInfo(pt *spanPart) error {
	p.split.infosAdded++
	if err := p.beforeObject(hprof.SubHeapDumpInfo); err != nil {
		return err
	}
	return p.heapInfo(pt.heapType, pt.heapName)
}

// addRoots writes the GC roots of a part of roots, read ahead, as
// directRoot would, their fields beyond the object in extras (spanRoot).
func (p *pass2) addRoots(roots []spanRoot, extras []rootExtra) error {
	for i := range roots {
		r := &roots[i]
		if err := p.beforeObject(r.tag); err != nil {
			return err
		}
		o := r.object
		if r.miss {
			o = p.obj(o)
		}
		var x rootExtra
		if r.extra != 0 {
			x = extras[r.extra-1]
		}
		if err := p.writeRoot(r.tag, o, x.thread, x.frame, x.jniRef, x.trace); err != nil {
			return err
		}
	}
	return nil
}

// gap writes the sub-records from the reader's offset to offset to, one
// by one.
func (p *pass2) gap(rd *reader, to int64) error {
	s := &rd.s
	for rd.r.Offset() < to {
		if err := rd.r.NextSub(s); err == io.EOF {
			return fmt.Errorf("crunch: pass 2 at the end of a heap dump record at %d, before %d", rd.r.Offset(), to)
		} else if err != nil {
			return err
		}
		if err := p.directSub(rd, s); err != nil {
			return err
		}
	}
	rd.readTo(to)
	return nil
}
