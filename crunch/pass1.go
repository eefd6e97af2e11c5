package crunch

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/cores"
)

// pass1 reads the dump once to learn what pass 2 needs before it writes
// anything: the strings and which of them are names, the LOAD CLASS
// records, the class dumps and where each class is first needed, and the
// object IDs (for the dense numbering).
type pass1 struct {
	*state
	r       *hprof.Reader
	dec     hprof.BodyDecoder
	dropIDs idSeq // objects of dropped heaps
	heap    heapTracker
	clock   chunkClock
	inline  segment      // for heap dump records read inline, on this goroutine
	pool    *segmentPool // nil: all are read inline
	failed  bool         // a merge failed: its error is the first
	in      *input       // the dump, whose mapped pages it gives back as it reads
	progress
	// The span addSpan is filling (no records: none); noSpans, that
	// pass 2 splits no dump (pass2Split: one core, or
	// HEAPCRUNCH_SPLIT=off), and needs none.
	filling span
	noSpans bool
	piece   pieceStart // the piece of a large record pieces is at
}

// heapTracker follows the Android heap (HEAP DUMP INFO) that the
// sub-records of a heap dump belong to.
type heapTracker struct {
	cur uint32
	set bool // a HEAP DUMP INFO has been met
}

// dropped reports whether the current heap is one the options leave out.
func (h *heapTracker) dropped(drop map[uint32]bool) bool { return h.set && drop[h.cur] }

// chunkSubRecords is how many heap sub-records a chunk holds at most:
// pass 2 writes the definitions (names, LOAD CLASS, CLASS) that a chunk
// needs right before it, so that a file cut anywhere keeps the objects
// before the cut with their classes.
const chunkSubRecords = 4096

// chunkClock numbers the chunks of a dump the same way in both passes: a
// chunk holds chunkSubRecords sub-records, and starts, when it can, with a
// heap dump record, so that the definitions before it are top-level
// records between two heap dump records. A heap dump record larger than a
// chunk holds several.
type chunkClock struct {
	chunk uint32 // the current chunk
	subs  int    // sub-records of the current chunk so far
	begun bool
}

// record notes the start of a heap dump record, and reports whether it
// starts a new chunk: the first one, or after a full one.
func (c *chunkClock) record() bool {
	if !c.begun || c.subs >= chunkSubRecords {
		if c.begun {
			c.chunk++
		}
		c.begun, c.subs = true, 0
		return true
	}
	return false
}

// at returns the chunk of the sub-record i places after the last one
// counted (0 for the next), as next would have it.
func (c *chunkClock) at(i int) uint32 {
	return c.chunk + uint32((c.subs+i)/chunkSubRecords)
}

// advance counts n sub-records, as n calls of next would.
func (c *chunkClock) advance(n int) {
	if n > 0 {
		c.chunk = c.at(n - 1)
		c.subs = (c.subs+n-1)%chunkSubRecords + 1
	}
}

// next counts a sub-record and reports whether it starts a new chunk
// within a heap dump record.
func (c *chunkClock) next() bool {
	c.subs++
	if c.subs > chunkSubRecords {
		c.chunk++
		c.subs = 1
		return true
	}
	return false
}

func (st *state) runPass1(in *input) error {
	r, err := in.reader(1)
	if err != nil {
		return err
	}
	r.SkipElements = true // pass 1 needs object IDs, not references
	st.idSize = r.IDSize()
	st.textsAt = in.texts()
	st.stats.HPROFHeader = r.Header()
	p := &pass1{state: st, r: r, in: in, dec: hprof.BodyDecoder{IDSize: st.idSize}, progress: progress{f: st.opt.Progress, pass: 1},
		noSpans: !pass2Split(math.MaxUint64)}
	defer p.dropIDs.release() // if pass 1 stops before buildIndex does
	if n := segmentWorkers(in.split()); n > 1 && len(st.drop) == 0 {
		// Which heap a split record starts in is known only once the
		// records before it are read: with heaps to drop, all are read
		// inline.
		p.pool = newSegmentPool(n, in, r.Header())
		defer p.pool.stop()
		if in.at != nil { // the records split off are skipped, not read
			r.SetReadAhead(atReadAhead)
		}
	}
	records := 0
	for rec, err := range r.Records() {
		records++
		if err == nil {
			p.progress.at(rec.Offset)
			p.releaseRead(rec.Offset)
			err = p.record(rec)
		}
		if err != nil {
			return p.inOrder(err)
		}
	}
	if err := p.drain(); err != nil {
		return err
	}
	if err := cutAtRecord(r, records); err != nil {
		return err
	}
	st.dumpBytes = r.Offset()
	p.endSpan()
	st.phase(PhaseNumbering)
	return p.finish()
}

// cutAtRecord returns the error of a dump that r has read to its end,
// records in all, where the end is that of a record but the dump is cut
// short all the same: with no record after its header, or with its heap
// dump segments not closed by a HEAP DUMP END.
func cutAtRecord(r *hprof.Reader, records int) error {
	switch {
	case records == 0:
		return &hprof.FormatError{Offset: r.Offset(), Tag: -1, Err: io.ErrUnexpectedEOF,
			Msg: "truncated: no record after the header,"}
	case r.SegmentsUnended():
		return &hprof.FormatError{Offset: r.Offset(), Tag: -1, Err: io.ErrUnexpectedEOF,
			Msg: "truncated: the file ends after HEAP DUMP SEGMENT records, with no HEAP DUMP END to close them,"}
	}
	return nil
}

// releaseRead gives back the pages of the mapped file before offset off
// that no goroutine reads any more: not those of the records split off and
// not merged yet.
func (p *pass1) releaseRead(off int64) {
	if p.pool != nil && len(p.pool.queue) > 0 {
		off = min(off, p.pool.queue[0].start)
	}
	p.in.release(off)
}

// inOrder returns the error to report when reading stops on err: the
// first in the file, that of a record split off before err's place if
// one has any.
func (p *pass1) inOrder(err error) error {
	if p.failed {
		return err // a merge's: the records before it are merged
	}
	if first := p.drain(); first != nil {
		return first
	}
	return err
}

// record handles one top-level record.
func (p *pass1) record(rec hprof.Record) error {
	if rec.Tag.IsHeapDump() {
		return p.heapDump(rec)
	}
	switch rec.Tag {
	case hprof.TagString, hprof.TagLoadClass, hprof.TagStackFrame, hprof.TagStartThread:
	default:
		return nil
	}
	body, err := p.r.Body()
	if err != nil {
		return err
	}
	switch rec.Tag {
	case hprof.TagString:
		id, text, err := p.dec.ParseString(rec, body)
		if err != nil {
			return err
		}
		p.addString(id, text, rec.Body()+int64(p.idSize))
	case hprof.TagLoadClass:
		lc, err := p.dec.ParseLoadClass(rec, body)
		if err != nil {
			return err
		}
		if _, seen := p.classNames[lc.ClassID]; !seen {
			p.classNames[lc.ClassID] = lc.Name
		}
		p.loads = append(p.loads, loadInfo{serial: lc.Serial, trace: lc.StackTrace, time: rec.Time, class: lc.ClassID, name: lc.Name})
	case hprof.TagStackFrame:
		f, err := p.dec.ParseStackFrame(rec, body)
		if err != nil {
			return err
		}
		p.nFrames++
		if _, dup := p.frames[f.ID]; !dup {
			p.frames[f.ID] = p.nFrames
		}
		p.frameNames = append(p.frameNames, frameNames{f.Method, f.Signature, f.SourceFile, f.Class})
	case hprof.TagStartThread:
		t, err := p.dec.ParseStartThread(rec, body)
		if err != nil {
			return err
		}
		p.threadNames = append(p.threadNames, t.Name, t.Group, t.ParentGroup)
	}
	return nil
}

// Heap dump records up to maxSplitRecord bytes (a JDK's HEAP DUMP SEGMENTs
// are 1 MB) are read on segmentWorkers goroutines, when there are more
// than one: those of a dump mapped or read at offsets, where crunch
// splits its passes with another core (cores.SplitCores). Read at
// offsets, a record split off is read by its goroutine into a buffer of
// its own (splitAt), and pass 1's goroutine skips it (its Reader seeks,
// reading atReadAhead bytes at a time). A dump read through a buffer
// alone is read on pass 1's goroutine alone: handing its records over
// costs a copy of each, and with the cores far apart it saved nothing
// (the 134 MB dump: 0.33 to 0.36 s either way, five alternating runs) and
// cost 20 to 30 ms and 8 MB on a 4 MB dump (0.05 to 0.06 s against 0.03;
// 2026-12-02). Larger ones whole in a mapped file (JDK 8's one HEAP DUMP
// record) in guessed pieces there too (bigRecord), others inline (on pass
// 1's goroutine), inlineSubRecords sub-records or releaseStep bytes at a
// time, so that
// what a segment collects stays small, and so do the pages of a mapped
// file read before they are given back (a piece of an Android dump's one
// record of 64 KiB arrays held 80 MiB of them, TestPagesGivenBack). A
// mapped file's records are split off without a copy: up to
// maxSplitMapped bytes (genhprof's segments are 32 MiB), where what a
// segment collects is about 1.5 % of its bytes.
// Records under minSplitRecord bytes are not split off one by one:
// handing one over costs about as much as reading it, and an Android
// dump is tens of thousands of records of 4 KiB at most (ART's hprof
// writes 128 objects or 4 KiB a segment), which split off one by one
// made pass 1 twice as slow with two cores as with one (genhprof -segsize
// 4KiB, 134 MB: 128 to 140 ms against 65 to 72 ms). They go to the pool
// in batches of about splitBatchBytes, one segment each: a mapped file's
// noted by pass 1's goroutine (batchRecord), those of a file read at
// offsets found by the goroutine that reads them (batchAhead); the others
// are read inline. Tests change them to mix the ways.
var (
	segmentWorkers = func(split bool) int {
		if !split {
			return 1
		}
		return runtime.GOMAXPROCS(0)
	}
	minSplitRecord   uint32 = 64 << 10
	maxSplitRecord   uint32 = 4 << 20
	maxSplitMapped   uint32 = 64 << 20
	inlineSubRecords        = 1 << 16
)

// heapDump reads the sub-records of a heap dump record: split off to the
// pool, or inline.
func (p *pass1) heapDump(rec hprof.Record) error {
	limit := maxSplitRecord
	if p.in.mapped != nil {
		limit = max(limit, maxSplitMapped)
	}
	switch {
	case p.pool == nil:
	case p.in.at != nil:
		// Read at offsets, a small record and those after it go to the
		// pool in a batch that its goroutine finds (batchAhead).
		if rec.Length >= minSplitRecord && rec.Length <= limit && p.in.whole(rec.End()) {
			return p.splitAt(rec)
		}
		if rec.Length < minSplitRecord && p.in.whole(rec.End()) {
			return p.batchAhead(rec)
		}
	case rec.Length >= minSplitRecord && rec.Length <= limit:
		return p.split(rec)
	case rec.Length < minSplitRecord && p.in.mapped != nil && rec.End() <= int64(len(p.in.mapped)):
		return p.batchRecord(rec) // small and whole: with others
	case p.in.mapped != nil && rec.End() <= int64(len(p.in.mapped)):
		return p.bigRecord(rec) // large and whole: in guessed pieces
	}
	if err := p.drain(); err != nil {
		return err
	}
	sg := &p.inline
	for first := true; ; first = false {
		sg.reset()
		sg.heap = p.heap
		sg.markFrom(p.r.Offset(), p.markEvery(rec))
		more := sg.read(p.r, inlineSubRecords, p.r.Offset()+releaseStep, p.drop)
		p.progress.at(p.r.Offset())
		p.releaseRead(p.r.Offset())
		if err := p.merge(sg, first); err != nil {
			return err
		}
		p.pieces(rec, sg, first, !more, p.r.Offset())
		if !more {
			if first { // whole, a span's if small (an Android dump's)
				p.addSpan(rec, p.r.Offset(), nil, sg.clock)
			} else {
				p.endSpan()
			}
			return nil
		}
	}
}

// merge adds what segment sg read to what pass 1 knows, as reading its
// sub-records here would; first says that sg starts a heap dump record.
// A segment of a batch of records (segment.batch) starts each of them,
// and notes each as a span or part of one (addSpan). It returns the
// error that ended sg's reading, if any.
func (p *pass1) merge(sg *segment, first bool) error {
	for _, c := range sg.classes {
		if err := p.classDump(c); err != nil {
			return err
		}
	}
	if len(sg.batch) == 0 {
		if first {
			p.clock.record()
		}
		sg.clock = p.clock
		p.needs(sg.needs, sg.subs)
	} else {
		needs, base := sg.needs, 0
		for i := range sg.batch {
			b := &sg.batch[i]
			p.clock.record()
			clock := p.clock
			n := 0 // the needs of record b; the last record takes the rest
			for n < len(needs) && (needs[n].sub < base+b.subs || i == len(sg.batch)-1) {
				needs[n].sub -= base
				n++
			}
			p.needs(needs[:n], b.subs)
			needs, base = needs[n:], base+b.subs
			var err error
			if i == len(sg.batch)-1 {
				err = sg.err
			}
			p.addSpan(b.rec, b.read, err, clock)
		}
	}
	p.objs.appendRun(&sg.objs)
	p.dropIDs.appendRun(&sg.drops)
	p.addrs.append(&sg.addrs, sg.array1)
	for _, h := range sg.heaps {
		p.heapsSeen[h.heap] = true
		p.heapNames[h.name] = true
	}
	p.heap = sg.heap
	return sg.err
}

// needs records the first needs of classes among needs, by sub-records
// of the heap dump record pass 1 is in, of which there are subs, and
// counts those.
func (p *pass1) needs(needs []segNeed, subs int) {
	for _, n := range needs {
		if _, ok := p.firstNeed[n.id]; !ok {
			p.firstNeed[n.id] = p.clock.at(n.sub)
		}
	}
	p.clock.advance(subs)
}

// classDump records a class dump. A class dumped again (a file with
// several heap dumps) must have the same super class and fields.
func (p *pass1) classDump(c segClass) error {
	d := c.dump
	if k, dup := p.classIdx[d.ID]; dup {
		old := p.classes[k].dump
		if old.Super != d.Super || !slices.Equal(old.Fields, d.Fields) {
			return &hprof.FormatError{Offset: c.offset, Record: hprof.SubClassDump.String(), Tag: int(hprof.SubClassDump),
				Msg: fmt.Sprintf("class 0x%x dumped again with another super class or other fields", d.ID)}
		}
		p.stats.Redumps++
		return nil
	}
	p.classIdx[d.ID] = len(p.classes)
	p.classes = append(p.classes, &classInfo{dump: d, offset: c.offset, chunk: noChunk})
	return nil
}

// finish turns what pass 1 read into what pass 2 needs. The object index
// is built alongside the strings' work (cores.Alongside), which writes
// none of what it reads or writes (buildIndex): on the 134 MB dump the
// strings' index and classification took 3.0 to 9.3 ms and the object
// index 5.9 to 14.6 ms, one after the other on one goroutine (six runs,
// 2026-12-04). The STRING records of pass 1 (a HotSpot dump's whole
// symbol table), which classifyStrings drops, are not collected before
// the index's bitmap is made: since the heap's pages are huge
// (bigmem.HugeHeap) the new pages cost less than the collection, which
// took longer with two cores (4 to 9 ms) than with one (about 2.7 ms). On
// the 134 MB dump (1.75 MB of STRING records), alternating runs of crunch
// with two cores, medians: 198.0 against 207.8 ms to /dev/null (30 runs),
// 213.5 against 218.2 ms to a new file (30); one core 248.1 against 247.7
// ms (20); peak RSS 31.1 against 27.7 MB; the 200 MB and 1.3 GB dumps the
// same either way (2026-12-03).
func (p *pass1) finish() error {
	idBytes := p.objs.heapBytes() // before buildIDIndex gives chunks back
	index := cores.Alongside(p.buildIndex)
	p.indexStrings()
	textErr := p.keepReferenced()
	if textErr == nil {
		p.keptValues()
		p.optionWarnings()
		p.classifyStrings()
	}
	err := index()
	p.pass1Dropped += idBytes
	if err != nil {
		return err
	}
	if textErr != nil {
		return textErr
	}
	if err := p.hierarchy(); err != nil {
		return err
	}
	p.planDefinitions()
	return nil
}

// buildIndex numbers the objects: classes first in CLASS DUMP order, then
// the other objects in file order, each distinct ID once. It runs
// alongside the strings' work (finish): it reads the class dumps' IDs and
// the object IDs, and writes only the indexes, the object counts and
// fields of stats that the strings' work leaves alone.
func (p *pass1) buildIndex() error {
	// Classes apart: their mirrors are spread over the heap, and in the
	// objects' index each would break a run of consecutive ordinals.
	classIDs := make([]uint64, len(p.classes))
	for i, c := range p.classes {
		classIDs[i] = c.dump.ID
	}
	p.classIndex, _ = newDedupedIDIndex(classIDs)
	var dups int
	p.index, dups = buildIDIndex(&p.objs)
	p.objs.release()
	p.nObj = uint64(len(p.classes) + p.index.len())
	p.rank, p.objBase = cmp.Or(p.index.rank, emptyRank), uint64(len(p.classes))+1
	p.redumps = dups > 0 || p.stats.Redumps > 0
	p.stats.Redumps += uint64(dups)
	for _, c := range p.classes {
		if _, ok := p.index.lookup(c.dump.ID); ok {
			return fmt.Errorf("crunch: object 0x%x is dumped both as a class and as another object", c.dump.ID)
		}
	}
	p.dropped, _ = buildIDIndex(&p.dropIDs)
	p.dropIDs.release()
	p.stats.Dropped = uint64(p.dropped.len())
	p.stats.IndexBytes = p.classIndex.bytes() + p.index.bytes() + p.dropped.bytes()
	return nil
}
