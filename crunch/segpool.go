package crunch

import (
	"runtime"
	"sync"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// segmentPool reads heap dump records split off by pass 1 on goroutines of
// its own, while pass 1 reads on; pass 1 merges them in file order.
type segmentPool struct {
	jobs    chan *segment
	queue   []*segment // split off and not merged yet, in file order
	free    []*segment
	filling *segment // the batch of small records being filled, last of queue
	wg      sync.WaitGroup
}

// A batch of small records (segment.batch) goes to the pool once it holds
// splitBatchBytes, or batchRecords records: about a JDK's record of 1 MB.
// In batches of 64 KiB the hand-overs cost more than the goroutines
// saved: pass 1 of an Android-like dump of 134 MB (genhprof -segsize
// 4KiB) took 96 to 102 ms with two cores, against 70 to 92 ms inline, and
// 49 to 68 ms in batches of 1 MiB (strace, three runs each). Tests change
// splitBatchBytes.
var splitBatchBytes int64 = 1 << 20

// batchRecords bounds a batch's records, and so its memory.
const batchRecords = 1024

// newSegmentPool starts n goroutines, with n+1 segments to fill: one more
// than they read at once, for pass 1 to split the next record into. They
// read the heap dump records of a dump with header h. Each goroutine reads
// the records given to it at offsets (splitAt) into a buffer of its own,
// which it gives back (input.giveBack) when it ends, for pass 2 to reuse.
// A buffer that went with its segment, as until the thirty-seventh
// session, was filled on one core after the other had parsed it, and the
// kernel's copy into it waited for its cache lines to come over: pass 1's
// copies took 120 ms a crunch of big-1300m.hprof where they take 83 ms
// (perf, three runs each; 78 ms on one core), and crunch 1,793.6 ms of
// processor time where it takes 1,757.3 (medians of 16 alternating runs).
func newSegmentPool(n int, in *input, h hprof.Header) *segmentPool {
	sp := &segmentPool{jobs: make(chan *segment, n+1)}
	for range n + 1 {
		sp.free = append(sp.free, new(segment))
	}
	sp.wg.Add(n)
	for range n {
		go func() {
			defer sp.wg.Done()
			var buf []byte
			defer func() { in.giveBack(buf) }()
			for sg := range sp.jobs {
				switch {
				case sg.readAt:
					sg.readFile(in, h, &buf)
				case sg.ahead:
					sg.readAhead(in, h, &buf)
				case len(sg.batch) > 0:
					sg.readBatch(in, h)
				case sg.stop > 0:
					sg.readPiece(in, h)
				default:
					sg.readAll(in)
				}
				close(sg.done)
			}
		}()
	}
	return sp
}

// hand hands the batch being filled to the goroutines, if any.
func (sp *segmentPool) hand() {
	if sp.filling != nil {
		sp.jobs <- sp.filling
		sp.filling = nil
	}
}

// take returns a free segment, once one is, queued (in file order) after
// the batch being filled, if any, which it hands to the goroutines: the
// records before the one the segment is for.
func (p *pass1) take() (*segment, error) {
	sp := p.pool
	sp.hand()
	if len(sp.free) == 0 {
		if err := p.mergeOldest(); err != nil {
			return nil, err
		}
	}
	sg := sp.free[len(sp.free)-1]
	sp.free = sp.free[:len(sp.free)-1]
	sg.reset()
	sg.done = make(chan struct{})
	sp.queue = append(sp.queue, sg)
	return sg, nil
}

// batchRecord adds heap dump record rec, small and whole in the mapped
// file, to the batch being filled, which goes to the goroutines once it
// holds splitBatchBytes or batchRecords records. The Reader skips
// its body (Next): only a batch's goroutine reads it.
func (p *pass1) batchRecord(rec hprof.Record) error {
	sp := p.pool
	if sp.filling == nil {
		sg, err := p.take()
		if err != nil {
			return err
		}
		sg.start, sp.filling = rec.Body(), sg
	}
	sg := sp.filling
	sg.batch = append(sg.batch, batchRecord{rec: rec})
	if sg.batchBytes += int64(rec.Length); sg.batchBytes >= splitBatchBytes || len(sg.batch) == batchRecords {
		sp.hand()
	}
	return nil
}

// batchAhead hands heap dump record rec, small and whole in the file
// read at offsets, and the small records after it, as many as a batch
// takes, to the pool (segment.readAhead), whose goroutine finds them; the
// Reader then goes on after them (hprof.Reader.SkipRecords), seeking past
// their bytes: pass 1's goroutine reads little of them, the 4 KiB it reads
// after a seek for the next header (TestBatchAheadSkips). Where it read
// them to note them (batchRecord, as for a mapped file) and the pool read
// them again, pass 1 of the Android-shaped dump of 134 MB took 56.3 and
// 61.5 ms, 97.3 and 103.9 ms of processor time, where batchAhead (before
// readAhead's yield) took 51.9 and 53.3 ms, 77.3 and 81.0 ms, and on its
// own goroutine, as before 2026-12-07, 76.3 and 79.1 ms, 79.7 and 82.7 ms
// (throwaway marks, medians of 9 runs in two rounds; docs/measurements.md,
// "Pass 1 of an Android dump read at offsets in batches").
func (p *pass1) batchAhead(rec hprof.Record) error {
	sg, err := p.take()
	if err != nil {
		return err
	}
	sg.start, sg.rec, sg.ahead, sg.walked = rec.Offset, rec, true, make(chan struct{})
	p.pool.jobs <- sg
	<-sg.walked // then sg.end is set, and the batch the pool's to change
	last := rec.Tag
	if sg.end > rec.End() {
		last = hprof.TagHeapDumpSegment // findBatch adds no other kind
	}
	return p.r.SkipRecords(sg.end, last)
}

// readAhead reads the batch batchAhead hands over, from the file read at
// offsets into buffer buf, the reading goroutine's: the heap dump record
// at sg.start (sg.rec), whole in the file, and the HEAP DUMP SEGMENTs
// after it, each under minSplitRecord bytes and whole in the bytes read,
// up to splitBatchBytes or batchRecords records. It says where they end
// (walked) before it reads their sub-records, and then lets pass 1's
// goroutine hand the next batch over at once: left to wait until one of
// the pool's goroutines stopped, pass 1 of the Android-shaped dump kept
// 1.46 to 1.54 cores busy and took 61.2 to 72.0 ms, with the yield 1.65
// to 1.76 and 51.9 to 65.2 ms (throwaway marks, medians of 5 runs in
// three rounds).
func (sg *segment) readAhead(in *input, h hprof.Header, buf *[]byte) {
	first := sg.start
	data, err := in.readAt(buf, first, min(splitBatchBytes+int64(minSplitRecord)+9, in.size-first))
	sg.batch = append(sg.batch[:0], batchRecord{rec: sg.rec})
	sg.end = sg.rec.End()
	if err == nil {
		sg.end = sg.findBatch(data, first)
	}
	close(sg.walked)
	runtime.Gosched()
	if err != nil {
		sg.err = err
		return
	}
	sg.readRecords(h, data, first)
}

// findBatch adds to the batch the HEAP DUMP SEGMENTs that follow its
// first record in data, the file's bytes from offset first on, while
// each is under minSplitRecord bytes and whole in data, up to
// splitBatchBytes or batchRecords records, and returns the offset after
// the last. A record of another kind, a larger one or one cut short is
// left to pass 1's goroutine, which reads it as any other.
func (sg *segment) findBatch(data []byte, first int64) int64 {
	pos := sg.batch[0].rec.End() - first
	for pos < splitBatchBytes && len(sg.batch) < batchRecords && pos+9 <= int64(len(data)) {
		rec := hprof.DecodeRecordHeader(data[pos:pos+9], first+pos)
		if rec.Tag != hprof.TagHeapDumpSegment || rec.Length >= minSplitRecord || rec.End()-first > int64(len(data)) {
			break
		}
		sg.batch = append(sg.batch, batchRecord{rec: rec})
		pos = rec.End() - first
	}
	return first + pos
}

// stop ends the goroutines, once they have read what they were given;
// each gives back its buffer as it ends.
func (sp *segmentPool) stop() {
	close(sp.jobs)
	sp.wg.Wait()
}

// split hands the current heap dump record to the pool, after merging the
// oldest one read if no segment is free.
func (p *pass1) split(rec hprof.Record) error {
	sg, err := p.take()
	if err != nil {
		return err
	}
	if err := p.r.SplitHeapDump(&sg.r); err != nil {
		return err
	}
	sg.start, sg.rec = sg.r.Offset(), rec
	sg.markFrom(sg.start, p.markEvery(rec))
	p.pool.jobs <- sg
	return nil
}

// splitAt hands heap dump record rec to the pool, to be read from the
// file at its offset (input.at), after merging the oldest one read if no
// segment is free. The Reader skips its body (Next).
func (p *pass1) splitAt(rec hprof.Record) error {
	sg, err := p.take()
	if err != nil {
		return err
	}
	sg.start, sg.rec, sg.readAt = rec.Body(), rec, true
	sg.markFrom(sg.start, p.markEvery(rec))
	p.pool.jobs <- sg
	return nil
}

// readFile reads the whole record given to splitAt, from the file read at
// offsets into buffer buf, the reading goroutine's: the segment keeps
// nothing of it once read.
func (sg *segment) readFile(in *input, h hprof.Header, buf *[]byte) {
	data, err := in.readAt(buf, sg.start, sg.rec.End()-sg.start)
	if err != nil {
		sg.err = err
		return
	}
	if sg.err = sg.r.ResetSubRecords(h, sg.rec, data, sg.start); sg.err != nil {
		return
	}
	sg.r.SkipElements = true
	for sg.read(&sg.r, 1<<14, 0, nil) {
	}
}

// mergeOldest waits for the oldest record split off and merges it.
func (p *pass1) mergeOldest() error {
	sp := p.pool
	sp.hand() // if it is the oldest
	sg := sp.queue[0]
	<-sg.done
	sp.queue = append(sp.queue[:0], sp.queue[1:]...)
	sp.free = append(sp.free, sg)
	if err := p.merge(sg, true); err != nil {
		p.failed = true
		return err
	}
	if len(sg.batch) == 0 { // merge notes a batch's records
		p.pieces(sg.rec, sg, true, true, sg.r.Offset())
		p.addSpan(sg.rec, sg.r.Offset(), sg.err, sg.clock)
	}
	return nil
}

// drain merges every record split off, in order, stopping at an error.
func (p *pass1) drain() error {
	for p.pool != nil && len(p.pool.queue) > 0 {
		if err := p.mergeOldest(); err != nil {
			return err
		}
	}
	return nil
}

// readBatch reads the records of the batch, each whole, from the mapped
// file, as a Reader of the file would (ResetSubRecords): to the first
// error, the records after it left out of the batch. A fault reading the
// mapped file is an error.
func (sg *segment) readBatch(in *input, h hprof.Header) {
	defer guard()()
	defer in.catchFault(&sg.err)
	sg.readRecords(h, in.mapped, 0)
}

// readRecords reads the records of the batch, each whole, from data, the
// file's bytes from offset base on, as a Reader of the file would
// (ResetSubRecords): to the first error, the records after it left out
// of the batch.
func (sg *segment) readRecords(h hprof.Header, data []byte, base int64) {
	for i := range sg.batch {
		b := &sg.batch[i]
		if sg.err = sg.r.ResetSubRecords(h, b.rec, data[b.rec.Body()-base:b.rec.End()-base], b.rec.Body()); sg.err == nil {
			subs := sg.subs
			for sg.read(&sg.r, 1<<14, 0, nil) {
			}
			b.subs, b.read = sg.subs-subs, sg.r.Offset()
		}
		if sg.err != nil {
			sg.batch = sg.batch[:i+1]
			return
		}
	}
}

// readAll reads the whole record split off, a fault reading the mapped
// file being its error.
func (sg *segment) readAll(in *input) {
	defer guard()()
	defer in.catchFault(&sg.err)
	// Pieces of a 32 MiB record, say: the pages of the mapped file read
	// are given back as the reading goes on (a record split off is not
	// the main goroutine's to give back until it is merged). Those of a
	// smaller record (a JDK's are 1 MB) are left to the main goroutine,
	// which gives back releaseStep bytes at a time: each call costs the
	// other cores an interrupt to flush their TLBs.
	from := sg.start
	for sg.read(&sg.r, 1<<14, 0, nil) {
		if sg.r.Offset()-from >= releaseStep {
			from = in.dropRange(from, sg.r.Offset())
		}
	}
	if from > sg.start {
		in.dropRange(from, sg.r.Offset())
	}
}
