package crunch

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapcrunch/heapcrunch/internal/bigmem"
)

// idSeq collects object IDs in order, compactly: each ID is stored as its
// difference from the previous one, a delta (appendDelta). A heap is
// dumped mostly in address order, so consecutive IDs differ by an
// object's size: one or two bytes per object where a []uint64 takes
// eight. It also keeps the facts the index needs about the whole set
// (idFacts), so that building the index reads the sequence only to place
// the IDs. Chunks of fixed size mean growing never copies.
type idSeq struct {
	chunks []idChunkData
	idFacts
}

// idFacts are what the index needs to know of a sequence of IDs besides
// the IDs: how many, the smallest and largest, their common alignment,
// their ascending runs.
type idFacts struct {
	n           int
	first, last uint64
	lo, hi      uint64
	or          uint64 // OR of (id XOR first id): its trailing zeros are the alignment
	runs        ascRuns
}

// note adds id to the facts.
func (f *idFacts) note(id uint64) {
	if k := len(f.runs.spans) - 1; k >= 0 {
		// Nearly always, id continues the last run: above its last ID,
		// which is above the smallest, and near it.
		if sp := &f.runs.spans[k]; follows(sp.last, id) && sp.n < math.MaxUint32 {
			sp.last, sp.n = id, sp.n+1
			f.hi = max(f.hi, id)
			f.or |= id ^ f.first
			f.last = id
			f.n++
			return
		}
	}
	if f.n == 0 {
		f.lo, f.hi, f.first = id, id, id
	}
	f.lo, f.hi = min(f.lo, id), max(f.hi, id)
	f.or |= id ^ f.first
	f.runs.add(id)
	f.last = id
	f.n++
}

// append adds the facts of the IDs of o, which come after f's.
func (f *idFacts) append(o *idFacts) {
	if o.n == 0 {
		return
	}
	if f.n == 0 {
		f.lo, f.hi, f.first = o.lo, o.hi, o.first
	}
	f.lo, f.hi = min(f.lo, o.lo), max(f.hi, o.hi)
	f.or |= o.or | (o.first ^ f.first)
	f.runs.append(&o.runs)
	f.last = o.last
	f.n += o.n
}

// idChunkData is a run of deltas, the first from base.
type idChunkData struct {
	base  uint64
	delta []byte
	// marks are places in delta where a walk of the IDs may start, about
	// markBytes apart: rankIndex.setBits shares a chunk's walk between
	// goroutines at them.
	marks []idMark
}

// An idMark is a place in a chunk's deltas: the delta at off follows the
// ID id.
type idMark struct {
	off int
	id  uint64
}

// markBytes is how far apart, at least, room marks a chunk's deltas (at
// the first delta added that far from the last mark): about 64,000 IDs of
// a heap (a byte each, nearly all), and 48 marks in a 3 MB chunk.
const markBytes = 64 << 10

// idSeqChunk is the size of an idSeq's first chunk of deltas, from the Go
// heap, and idSeqBigChunk that of the chunks after it (a dump of more than
// about a million objects), mapped apart where the system has huge pages
// (bigmem): 31 MB of deltas for 32 million objects cost 7,800 page faults
// in 4 KiB pages.
const (
	idSeqChunk    = 1 << 20
	idSeqBigChunk = 4 << 20
)

func (s *idSeq) add(id uint64) {
	c := s.room(binary.MaxVarintLen64)
	c.delta = appendDelta(c.delta, s.last, id)
	s.note(id)
}

// appendDelta appends the encoding of id after last, a delta: a step up
// of less than 128, nearly all (objects are small), in one byte, the step
// itself, which the loops over millions of IDs decode with an addition;
// any other difference as the zigzag varint of it in two bytes or more,
// whose first byte is 128 or more (a zigzag value below 128, a step down
// of at most 64, takes two bytes, the second 0).
func appendDelta(b []byte, last, id uint64) []byte {
	step := id - last
	if step < 0x80 {
		return append(b, byte(step))
	}
	z := protowire.EncodeZigZag(int64(step))
	if z < 1<<14 { // in place, without a call
		return append(b, byte(z)|0x80, byte(z>>7))
	}
	return protowire.AppendVarint(b, z)
}

// room returns the chunk to append n more bytes of deltas to: the last
// one, or a new one, from s.last, if it has no room for them.
func (s *idSeq) room(n int) *idChunkData {
	if k := len(s.chunks); k == 0 || len(s.chunks[k-1].delta)+n > cap(s.chunks[k-1].delta) {
		size := idSeqChunk
		if k > 0 {
			size = idSeqBigChunk
		}
		s.chunks = append(s.chunks, idChunkData{base: s.last, delta: bigmem.Bytes(max(size, n))[:0]})
	}
	c := &s.chunks[len(s.chunks)-1]
	last := 0 // the last mark
	if k := len(c.marks); k > 0 {
		last = c.marks[k-1].off
	}
	if off := len(c.delta); off-last >= markBytes {
		c.marks = append(c.marks, idMark{off: off, id: s.last})
	}
	return c
}

// An idUnit is a stretch of a chunk's deltas that a walk of the IDs can
// take on its own: chunk's deltas from from to to, the first following
// the ID id.
type idUnit struct {
	chunk, from, to int
	id              uint64
}

// units cuts the IDs' deltas into units at the chunks' starts and marks.
func (s *idSeq) units() []idUnit {
	var us []idUnit
	for k := range s.chunks {
		c := &s.chunks[k]
		from, id := 0, c.base
		for _, m := range c.marks {
			us = append(us, idUnit{chunk: k, from: from, to: m.off, id: id})
			from, id = m.off, m.id
		}
		us = append(us, idUnit{chunk: k, from: from, to: len(c.delta), id: id})
	}
	return us
}

// idRun collects the IDs of a segment (a part of the dump read apart),
// encoded as idSeq encodes them, for idSeq.appendRun; its memory is
// reused from one segment to the next.
type idRun struct {
	delta    []byte // the deltas, the first from 0
	firstLen int    // the bytes of the first delta
	idFacts
}

func (r *idRun) reset() {
	*r = idRun{delta: r.delta[:0], idFacts: idFacts{runs: ascRuns{spans: r.runs.spans[:0]}}}
}

func (r *idRun) add(id uint64) {
	r.delta = appendDelta(r.delta, r.last, id) // the first from 0: r.last is 0
	if r.n == 0 {
		r.firstLen = len(r.delta)
	}
	r.note(id)
}

// addAll adds ids in order, as add would one by one. Its loop does in
// local variables what add does for nearly every ID of a heap dumped in
// address order, an ID that continues the last run, small steps above
// the last one; any other goes through add.
func (r *idRun) addAll(ids []uint64) {
	for len(ids) > 0 {
		k := len(r.runs.spans) - 1
		if k < 0 { // the first ID, or beyond maxSpans
			r.add(ids[0])
			ids = ids[1:]
			continue
		}
		sp := &r.runs.spans[k] // its last ID is r.last
		// Only what changes from one ID to the next in the loop: the
		// counts follow from i, and the largest ID, of ascending IDs,
		// is the last.
		d := slices.Grow(r.delta, len(ids))
		run := ids
		if room := math.MaxUint32 - sp.n; uint64(len(run)) > uint64(room) {
			run = run[:room] // the run's count fits 32 bits: add starts another
		}
		i, last, or := oneByteSteps(d[len(d):cap(d)], run, r.last, r.or, r.first)
		d = d[:len(d)+i]
		r.delta, r.last, r.hi, r.or, r.n, sp.last, sp.n = d, last, max(r.hi, last), or, r.n+i, last, sp.n+uint32(i)
		if i < len(ids) {
			r.add(ids[i])
			i++
		}
		ids = ids[i:]
	}
}

// oneByteSteps writes to out, which has room for them, the one-byte
// deltas of the IDs of run that go on from last with steps up of 1 to 127,
// up to the first that does not, and returns how many, the last of them
// (last if none) and or with the bits of each XOR first added: idRun.note
// for an ID that continues the run, in local variables. A leaf function
// of its own, its loop has a register for each value (in addAll, whose
// calls spilled them, it cost 22 instructions an ID; 13 here).
//
//go:noinline
func oneByteSteps(out []byte, run []uint64, last, or, first uint64) (int, uint64, uint64) {
	i, out := 0, out[:len(run)]
	for ; i < len(run); i++ {
		id := run[i]
		step := id - last
		if step-1 >= 0x7f {
			break // not a step up of 1 to 127, a one-byte delta in the run
		}
		out[i] = byte(step)
		last, or = id, or|(id^first)
	}
	return i, last, or
}

// appendRun appends the IDs of r to s, as many adds would.
func (s *idSeq) appendRun(r *idRun) {
	if r.n == 0 {
		return
	}
	rest := r.delta[r.firstLen:] // from r.first on
	c := s.room(binary.MaxVarintLen64 + len(rest))
	c.delta = appendDelta(c.delta, s.last, r.first)
	c.delta = append(c.delta, rest...)
	s.idFacts.append(&r.idFacts)
}

// shift returns the number of low bits all IDs agree on (their alignment),
// as a power of two; 0 for fewer than two distinct IDs.
func (s *idSeq) shift() uint {
	if s.or == 0 {
		return 0
	}
	return uint(bits.TrailingZeros64(s.or))
}

// each calls f with every ID in order.
func (s *idSeq) each(f func(id uint64)) {
	for _, c := range s.chunks {
		id, d := c.base, c.delta
		for len(d) > 0 {
			step, n := uint64(d[0]), 1
			if step >= 0x80 {
				step, n = longDelta(d)
			}
			d = d[n:]
			id += step
			f(id)
		}
	}
}

// longDelta decodes the delta at the start of d that takes two bytes or
// more (d[0] >= 0x80): the step to add to the ID before, modulo 2⁶⁴, and
// its length.
func longDelta(d []byte) (step uint64, n int) {
	var z uint64
	if len(d) > 1 && d[1] < 0x80 {
		z, n = uint64(d[0]&0x7f)|uint64(d[1])<<7, 2
	} else {
		z, n = protowire.ConsumeVarint(d)
	}
	return uint64(protowire.DecodeZigZag(z)), n
}

// releaseChunk gives back the memory of chunk k, whose IDs nothing reads
// after: s then holds none of them (each skips it).
func (s *idSeq) releaseChunk(k int) {
	bigmem.Free(s.chunks[k].delta)
	s.chunks[k].delta = nil
}

// release drops the IDs, giving back the memory of their chunks: nothing
// may read them after.
func (s *idSeq) release() {
	for k := range s.chunks {
		s.releaseChunk(k)
	}
	s.chunks = nil
}

// heapBytes returns the memory of the deltas that the garbage collector
// holds: that of the chunks not mapped apart (bigmem).
func (s *idSeq) heapBytes() int64 {
	var n int64
	for _, c := range s.chunks {
		if !bigmem.IsMapped(c.delta) {
			n += int64(cap(c.delta))
		}
	}
	return n
}

// ascRuns follows a sequence of IDs as runs of ascending, near IDs
// (spans): a HotSpot heap is dumped a region at a time, in address order,
// so that its millions of objects make a few hundred runs, from which the index
// learns the order of the IDs without walking them. Beyond maxSpans runs
// it gives up (over) and the index walks the IDs.
type ascRuns struct {
	spans []idSpan
	over  bool
}

// idSpan is a run of n ascending IDs, from first to last.
type idSpan struct {
	first, last uint64
	n           uint32
}

const maxSpans = 1 << 16

// follows reports whether id continues a run that ends at last: it is
// above, and near. A run that jumped over addresses would take in, in its
// range, objects of a region dumped later, and the index could not use it;
// objects are far smaller than maxRunGap but for large arrays, and these
// only start a new run.
func follows(last, id uint64) bool { return id > last && id-last <= maxRunGap }

const maxRunGap = 1 << 16

// add follows one more ID.
func (a *ascRuns) add(id uint64) { a.extend(idSpan{id, id, 1}) }

// append follows the IDs o followed, after a's.
func (a *ascRuns) append(o *ascRuns) {
	if o.over {
		a.over, a.spans = true, nil
	}
	for _, sp := range o.spans {
		a.extend(sp)
	}
}

// extend follows the IDs of sp: the last run goes on with them if they
// follow it, else they start a new one, unless there are too many.
func (a *ascRuns) extend(sp idSpan) {
	if k := len(a.spans) - 1; k >= 0 && follows(a.spans[k].last, sp.first) && uint64(a.spans[k].n)+uint64(sp.n) <= math.MaxUint32 {
		a.spans[k].last = sp.last
		a.spans[k].n += sp.n
		return
	}
	if a.over || len(a.spans) == maxSpans {
		a.over, a.spans = true, nil
		return
	}
	a.spans = append(a.spans, sp)
}
