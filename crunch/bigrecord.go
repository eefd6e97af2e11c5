package crunch

import (
	"io"
	"sync/atomic"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// A heap dump record larger than maxSplitMapped, whole in a mapped file,
// is read by pass 1 on the pool in pieces of about guessBytes
// (bigRecord): HotSpot in JDK 8 and 9 writes a used heap of up to 2 GB
// as one HEAP DUMP record. Where a piece's first sub-record starts is
// known only by reading every sub-record before it, so each piece but the
// first starts at a guess: the first offset at or after its target from
// which guessSubs sub-records read (or all up to the record's end),
// searched for over guessScan bytes at most. The piece before it reads up
// to the first sub-record boundary at or after that target, and the guess
// is taken only if it is that boundary; else (a guess inside an object's
// data, or none found) pass 1 reads the piece again, on its own
// goroutine, from the true boundary. Either way what is merged was read
// from true boundaries on, in file order, as reading the record inline
// would. Tests change guessBytes, guessScan and guessSubs.
var (
	guessBytes int64 = 4 << 20
	guessScan  int64 = 64 << 10
	guessSubs        = 16 // sub-records that must read from a guessed start
)

// guesses counts the pieces of large records whose guessed start was
// taken, and those read again from the true boundary: the guess was not
// it (redone), or none was found (notFound). Tests read them.
var guesses struct{ taken, redone, notFound atomic.Int64 }

// bigRecord reads heap dump record rec, whole in the mapped file, in
// pieces on the pool (segment.readPiece), merging them in file order.
func (p *pass1) bigRecord(rec hprof.Record) error {
	if err := p.drain(); err != nil { // the records before it first
		return err
	}
	sp := p.pool
	end, next := rec.End(), rec.Body() // next: the next piece's target
	read := rec.Body()                 // where the reading of the record has come to
	issue := func() {
		sg := sp.free[len(sp.free)-1]
		sp.free = sp.free[:len(sp.free)-1]
		sg.reset()
		sg.done = make(chan struct{})
		sg.rec, sg.start, sg.target = rec, next, next
		sg.guess = next != rec.Body()
		sg.stop = min(next+guessBytes, end)
		sg.markEvery = p.markEvery(rec)
		next = sg.stop
		sp.queue = append(sp.queue, sg)
		sp.jobs <- sg
	}
	for read < end {
		for len(sp.free) > 0 && next < end {
			issue()
		}
		sg := sp.queue[0]
		<-sg.done
		sp.queue = append(sp.queue[:0], sp.queue[1:]...)
		sp.free = append(sp.free, sg)
		if sg.stop <= read {
			continue // read again before: up to past its end
		}
		if !sg.found || sg.at != read {
			if sg.found {
				guesses.redone.Add(1)
			} else {
				guesses.notFound.Add(1)
			}
			var done bool
			var err error
			if read, done, err = p.readPieceInline(rec, read, sg.stop); err != nil {
				return p.endBigRecord(err)
			}
			if done {
				break
			}
			continue
		}
		if sg.guess {
			guesses.taken.Add(1)
		}
		err := p.merge(sg, !sg.guess)
		read = sg.r.Offset()
		last := err != nil || read >= end
		p.pieces(rec, sg, !sg.guess, last, read)
		p.progress.at(read)
		p.releaseRead(read)
		if err != nil {
			p.failed = true
			return p.endBigRecord(err)
		}
		if last {
			break
		}
	}
	p.endSpan()
	return p.endBigRecord(nil)
}

// endBigRecord waits for the pieces still being read, which are past the
// record's end or its error, puts them back unmerged, and returns err.
func (p *pass1) endBigRecord(err error) error {
	sp := p.pool
	for _, sg := range sp.queue {
		<-sg.done
		sp.free = append(sp.free, sg)
	}
	sp.queue = sp.queue[:0]
	return err
}

// readPieceInline reads the sub-records of record rec from file offset
// from, a sub-record boundary, to the first boundary at or after stop (or
// to the record's end or an error) on pass 1's goroutine, as heapDump
// reads a record inline, and merges them. It returns where the reading
// came to and whether the record is done (read whole, or ended by an
// error, which it returns).
func (p *pass1) readPieceInline(rec hprof.Record, from, stop int64) (int64, bool, error) {
	sg := &p.inline
	r := &sg.r
	if err := r.ResetSubRecords(p.r.Header(), rec, p.in.mapped[from:rec.End()], from); err != nil {
		return from, true, err
	}
	r.SkipElements = true
	for first := from == rec.Body(); ; first = false {
		sg.reset()
		sg.heap = p.heap
		sg.markFrom(r.Offset(), p.markEvery(rec))
		more := sg.read(r, inlineSubRecords, min(stop, r.Offset()+releaseStep), nil)
		read := r.Offset()
		p.progress.at(read)
		p.releaseRead(read)
		err := p.merge(sg, first)
		done := err != nil || !more
		p.pieces(rec, sg, first, done, read)
		if err != nil {
			p.failed = true
			return read, true, err
		}
		if done || read >= stop {
			return read, done, nil
		}
	}
}

// readPiece reads a piece of a large record (pass1.bigRecord): from its
// target if that is the record's start, else from the start findStart
// guesses (none: not found), to the first sub-record boundary at or after
// stop, or to the record's end or an error.
func (sg *segment) readPiece(in *input, h hprof.Header) {
	defer guard()()
	defer in.catchFault(&sg.err)
	start := sg.target
	if sg.guess {
		var ok bool
		if start, ok = sg.findStart(in, h); !ok {
			return
		}
	}
	sg.found, sg.at = true, start
	// What an earlier use of the segment saw may be a piece read from a
	// wrong start, which is no earlier need of a class: none is kept.
	sg.needSeen = recentClasses{}
	if sg.err = sg.r.ResetSubRecords(h, sg.rec, in.mapped[start:sg.rec.End()], start); sg.err != nil {
		return
	}
	sg.r.SkipElements = true
	sg.markFrom(start, sg.markEvery)
	from := start
	for sg.read(&sg.r, 1<<14, sg.stop, nil) && sg.r.Offset() < sg.stop {
		if sg.r.Offset()-from >= releaseStep {
			from = in.dropRange(from, sg.r.Offset())
		}
	}
}

// findStart returns the first offset from the piece's target on, within
// guessScan bytes, from which guessSubs sub-records read, or all of the
// record's that follow: the guess of where a sub-record starts. The
// first must be an object or a class dump: most offsets are passed over
// at their first byte, and the roots, short, often read from a few bytes
// before a true boundary, their last bytes those of the sub-record before
// (three of 31 guesses on the 134 MB dump made one record, when any
// sub-record could be the first). Where the guess lands among roots, it
// is either not found or later than the boundary, and the piece is read
// again.
func (sg *segment) findStart(in *input, h hprof.Header) (int64, bool) {
	end := sg.rec.End()
	for s := sg.target; s < min(sg.target+guessScan, end); s++ {
		if startTags[in.mapped[s]] && sg.readsFrom(in, h, s, end) {
			return s, true
		}
	}
	return 0, false
}

// startTags says which bytes are the tags of the sub-records a guessed
// start may be: objects and class dumps.
var startTags = func() (tags [256]bool) {
	for _, t := range []hprof.SubTag{hprof.SubClassDump, hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData} {
		tags[t] = true
	}
	return tags
}()

// readsFrom reports whether guessSubs sub-records of the piece's record,
// or all up to its end, read from file offset s on.
func (sg *segment) readsFrom(in *input, h hprof.Header, s, end int64) bool {
	if sg.r.ResetSubRecords(h, sg.rec, in.mapped[s:end], s) != nil {
		return false
	}
	sg.r.SkipElements = true
	for range guessSubs {
		if err := sg.r.NextSub(&sg.sub); err == io.EOF {
			return true
		} else if err != nil {
			return false
		}
	}
	return true
}
