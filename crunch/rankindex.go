package crunch

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bigmem"
	"github.com/heapcrunch/heapcrunch/internal/cores"
)

// rankIndex maps object IDs to dense ordinals with a bitmap over the span
// of the IDs, where it is small: a HotSpot heap is one range of addresses
// with an object every few words (5.3 bits of bitmap per object on the
// 1.3 GB JDK dump of scripts/genbig.sh), so the bitmap with its rank counts
// costs about 1.3 bytes per object, where a sorted table of IDs costs 8.
//
// An ID's rank among the IDs, in address order, is the count of bits set
// before its bit. Ordinals follow the dump's order instead, which is
// address order in long runs (one per heap region: about 700 runs for 22.7
// million objects): the ordinals are kept as pieces, ranges of consecutive
// ranks with consecutive ordinals, and each bitmap word records the piece
// of its first rank, so a lookup reads one 16-byte word and rarely steps
// to the next piece. ZGC and Shenandoah dump objects in heap-walk order
// instead, in address order only for one to three objects at a time: the
// ordinals are then kept in a table by rank (ords).
//
// A G1 heap (the JDK's default collector) is not one range: its full GC
// compacts the live regions into several ranges spread over the heap, and
// the objects archived with the class data (CDS, on by default) are
// mapped at its top, so that a G1 dump's IDs span the whole heap (-Xmx),
// most of it empty. The bitmap then leaves out the blocks of the span
// that hold no ID (blocks), as the ascending runs of the IDs show them.
type rankIndex struct {
	min   uint64
	shift uint
	// rot is 64-shift: id-min rotated left by rot (right by shift) is
	// the unit of an ID of the index, its bit (unit).
	rot    int
	units  uint64 // bits of the span the bitmap covers
	words  []rankWord
	pieces []rankPiece // sorted by rank
	n      int         // distinct IDs
	// ords, when set, gives the ordinal of each rank, in place of the
	// pieces: for a dump whose order follows the addresses only in runs of
	// a few objects, where there would be about a piece per object (ZGC's
	// and Shenandoah's heap walks: 654,144 and 606,125 pieces for about a
	// million objects), and a lookup would search them in most words.
	ords []uint32
	// blocks, when set, gives for each block of 1<<blockBits units the
	// index of its first word, or noBlock for a block that holds no ID
	// and has no words; unset, the words cover every unit in order.
	blocks    []uint32
	blockBits uint
}

// emptyRank is the index of no IDs (units 0), which pass 2 asks where the
// dump has no bitmap index (state.rank), so that lookup needs no nil check.
var emptyRank = &rankIndex{}

// noBlock marks, in rankIndex.blocks, a block without words.
const noBlock = ^uint32(0)

// rankWord is 64 bits of the bitmap, the number of bits set before them,
// and delta, what to add to a rank in the word to get its ordinal (the
// ordinal less the rank, modulo 2³², for the piece that holds the word's
// first rank). When another piece starts within the word, the top bit of
// before is set and a lookup finds the piece among the pieces.
type rankWord struct {
	bits   uint64
	before uint32
	delta  uint32
}

// splitWord is the flag, in rankWord.before, of a word where a piece starts
// after its first rank.
const splitWord = 1 << 31

// rankPiece: ranks from rank on (to the next piece's) have ordinals from
// ord on.
type rankPiece struct {
	rank, ord uint32
}

// rankLayout is the shape of an index's bitmap: its words and, when it
// leaves out the blocks without IDs, the blocks (rankIndex.blocks).
type rankLayout struct {
	words     uint64
	blocks    []uint32
	blockBits uint
}

// bytes returns the memory of an index of that layout, but its pieces.
func (l rankLayout) bytes() uint64 { return l.words*16 + uint64(len(l.blocks))*4 }

// minBlockBits and maxBlocks bound the blocks of a layout: 2¹⁵ units (256
// KB of an 8-byte-aligned heap, 8 KB of bitmap) or more each, so that
// there are at most 2²⁰ of them (4 MB).
const (
	minBlockBits = 15
	maxBlocks    = 1 << 20
)

// rankIndexLayout returns the layout of an index over s, with no words if
// the IDs do not fit it (2³¹ objects or more): the words of the whole span
// of the IDs, or fewer, those of its blocks that hold IDs, when that takes
// less memory.
func rankIndexLayout(s *idSeq) rankLayout {
	if s.n == 0 || uint64(s.n) >= splitWord {
		return rankLayout{}
	}
	span := (s.hi - s.lo) >> s.shift()
	dense := rankLayout{words: span/64 + 1}
	if s.runs.over || len(s.runs.spans) < 2 {
		return dense // no runs: which blocks hold IDs is not known
	}
	bb := uint(minBlockBits)
	if l := uint(bits.Len64(span)); l > bb+20 {
		bb = l - 20
	}
	// The ranges of the runs cover every ID: mark the blocks they touch.
	used := make([]bool, span>>bb+1)
	ranges := slices.Clone(s.runs.spans)
	slices.SortFunc(ranges, func(a, b idSpan) int { return cmp.Compare(a.first, b.first) })
	from := uint64(0) // the first block not marked yet
	for _, r := range ranges {
		first, last := (r.first-s.lo)>>s.shift()>>bb, (r.last-s.lo)>>s.shift()>>bb
		for b := max(first, from); b <= last; b++ {
			used[b] = true
		}
		from = max(from, last+1)
	}
	l := rankLayout{blocks: make([]uint32, len(used)), blockBits: bb}
	per := uint64(1) << bb / 64 // words per block
	for b, u := range used {
		l.blocks[b] = noBlock
		if u {
			if l.words+per >= uint64(noBlock) {
				return dense
			}
			l.blocks[b] = uint32(l.words)
			l.words += per
		}
	}
	if l.bytes() >= dense.bytes() {
		return dense
	}
	return l
}

// newRankIndex builds the index of the IDs of s, in the layout l
// (rankIndexLayout). Each distinct ID gets the rank of its first
// occurrence among the distinct IDs; dups counts the other occurrences.
// With consume, it gives back the memory of s's IDs as it reads them
// when it can (then s holds none after).
func newRankIndex(s *idSeq, l rankLayout, consume bool) (x *rankIndex, dups int) {
	x = &rankIndex{min: s.lo, shift: s.shift(), words: makeWords(l.words), units: 64 * l.words,
		blocks: l.blocks, blockBits: l.blockBits}
	if l.blocks != nil {
		x.units = uint64(len(l.blocks)) << l.blockBits
	}
	x.rot = 64 - int(x.shift)
	// Pieces from the runs need only the runs: then nothing reads the IDs
	// after setBits, which gives back each chunk of them once it has set
	// its bits, and the bitmap's pages it touches next reuse their memory
	// (memory given back a moment before costs little to touch again:
	// bigmem).
	fromRuns := x.piecesFromRuns(&s.runs, s.n)
	x.setBits(s, consume && fromRuns)
	c := uint32(0)
	for i := range x.words {
		x.words[i].before = c
		c += uint32(bits.OnesCount64(x.words[i].bits))
	}
	x.n = int(c)
	if !fromRuns {
		dups = x.buildPieces(s)
	}
	x.pieceOfWords()
	return x, dups
}

// makeWords returns n zeroed words: from bigmem if they take minBigBitmap
// or more (the bitmap of 32 million objects takes 50 MB, about 12,700 page
// faults in 4 KiB pages), else from the heap (the 134 MB dump's 3.1
// million, 3.7 MB). free gives them back.
func makeWords(n uint64) []rankWord {
	if n < minBigBitmap/uint64(unsafe.Sizeof(rankWord{})) {
		return make([]rankWord, n)
	}
	if w := bigmem.Table[rankWord](int(min(n, math.MaxInt))); uint64(len(w)) == n {
		return w
	}
	return make([]rankWord, n) // beyond any memory: make says so
}

// minBigBitmap is the size from which a bitmap's words, or a table of IDs
// (makeIDs), come from bigmem. A smaller bitmap comes from the heap, in
// its huge pages (bigmem.HugeHeap).
const minBigBitmap = 8 << 20

// free gives back the memory of the index's bitmap: nothing may read the
// index after.
func (x *rankIndex) free() {
	bigmem.FreeTable(x.words)
	x.words, x.units = nil, 0
}

// setBits sets the bit of each ID of s. It walks the deltas itself, as
// idSeq.each does, without a call per ID: it runs once per object. The
// walk is cut into units (idSeq.units) that this goroutine and, where Go
// has another core, a second one take in turn, the words or-ed atomically
// (which cost nothing measurable on one goroutine, BenchmarkRankIndexBuild:
// 9.6 to 10.4 against 9.7 to 10.9 ms, 5 runs each). At pass 1's end the
// second one mostly starts when the strings' work leaves a core free
// (pass1.finish). On the 134 MB dump (43 units) it took 15 to 18 units
// in three runs of four, and none in the fourth; the index took 5.8 to
// 6.5 ms against 6.5 to 9.0 before (six runs each, throwaway marks,
// 2026-12-04). On big-1300m.hprof (312 units) it took 133 to 146, and
// the index 42.8 to 46.5 ms against 51.5 to 57.8 (three each). With
// release, it gives back each chunk of s once its units are done
// (idSeq.releaseChunk), and s holds no IDs after.
func (x *rankIndex) setBits(s *idSeq, release bool) {
	units := s.units()
	left := make([]atomic.Int32, len(s.chunks)) // units not done, by chunk
	for _, u := range units {
		left[u.chunk].Add(1)
	}
	var next atomic.Int64
	walk := func() error {
		for i := next.Add(1) - 1; i < int64(len(units)); i = next.Add(1) - 1 {
			u := &units[i]
			x.setDeltaBits(u.id, s.chunks[u.chunk].delta[u.from:u.to])
			if left[u.chunk].Add(-1) == 0 && release {
				s.releaseChunk(u.chunk)
			}
		}
		return nil
	}
	wait := func() error { return nil }
	if len(units) > 1 {
		wait = cores.Alongside(walk)
	}
	walk()
	wait()
}

// setDeltaBits sets the bits of the IDs of deltas d, which go on from id.
func (x *rankIndex) setDeltaBits(id uint64, d []byte) {
	for i := 0; i < len(d); {
		n, last := x.setOneByteSteps(id, x.shift, d[i:])
		i, id = i+n, last
		if i == len(d) {
			break
		}
		step, n := longDelta(d[i:])
		i, id = i+n, id+step
		x.setUnit(x.words, (id-x.min)>>(x.shift&63))
	}
}

// setOneByteSteps sets the bits of the IDs of the one-byte deltas at the
// start of d, nearly all (idSeq.add), which go on from id, and returns
// how many and the last ID. A leaf function of its own, its loop has a
// register for each value, with few values: the distance from the
// smallest ID, not the ID, and the blocks read only in an index that has
// them (inlined in setBits, whose calls spilled its values, it cost 28
// instructions an ID, 21 here, 19 since it gathers a word's bits). The
// shift (x.shift) is a parameter, the third register of the amd64
// calling convention, CX, where the shift instruction wants it (a field
// loaded to another register, moves to and from CX cost 3 more an ID),
// masked to 63 (it is below 64), which spares the compiler's check of a
// shift by 64 or more.
//
//go:noinline
func (x *rankIndex) setOneByteSteps(id uint64, shift uint, d []byte) (int, uint64) {
	words, u := x.words, id-x.min
	shift &= 63
	i := 0
	// The bits of the IDs of one word, consecutive, are gathered and
	// or-ed into it at once, where or-ing each made each ID wait for the
	// store of the one before: one core, the 134 MB dump, 202 and 211
	// samples against 304 and 307 (perf, 8 runs at 5 kHz, twice), about
	// 2.5 ms a run; on big-1300m.hprof, whose 50 MB bitmap misses the
	// caches, no change. Without blocks a word is k/64, and a loop of its
	// own, without orBits' test of the blocks, took 232 and 234 samples
	// as one loop for both.
	g, bits := ^uint64(0), uint64(0) // the word's 64 units, k/64, and their bits
	if x.blocks != nil {
		for ; i < len(d) && d[i] < 0x80; i++ {
			u += uint64(d[i])
			k := u >> shift
			if k/64 != g {
				x.orBits(words, g, bits)
				g, bits = k/64, 0
			}
			bits |= 1 << (k % 64)
		}
		x.orBits(words, g, bits)
		return i, u + x.min
	}
	for ; i < len(d) && d[i] < 0x80; i++ {
		u += uint64(d[i])
		k := u >> shift
		if k/64 != g {
			if bits != 0 {
				atomic.OrUint64(&words[g].bits, bits)
			}
			g, bits = k/64, 0
		}
		bits |= 1 << (k % 64)
	}
	if bits != 0 {
		atomic.OrUint64(&words[g].bits, bits)
	}
	return i, u + x.min
}

// setUnit sets the bit of unit k in words, the index's words.
func (x *rankIndex) setUnit(words []rankWord, k uint64) {
	x.orBits(words, k/64, 1<<(k%64))
}

// orBits sets bits in the word of units 64g to 64g+63 in words, the
// index's words; none if bits is 0.
func (x *rankIndex) orBits(words []rankWord, g, bits uint64) {
	if bits == 0 {
		return
	}
	w := g
	if x.blocks != nil { // the IDs' block has words
		w, _ = x.blockWord(g * 64)
	}
	atomic.OrUint64(&words[w].bits, bits)
}

// piecesFromRuns makes the pieces from the ascending runs of the IDs,
// without walking them or their bitmap, when it can: when the runs hold
// all n IDs and their ranges do not overlap, so that each ID is in one
// run once (a run ascends), each run's ranks are consecutive and its
// first one is the count of IDs in the runs below. It makes the pieces
// buildPieces would, and reports whether it could.
func (x *rankIndex) piecesFromRuns(a *ascRuns, n int) bool {
	if a.over {
		return false
	}
	type run struct {
		idSpan
		rank, ord uint32
	}
	runs := make([]run, len(a.spans))
	ord := uint64(0)
	for i, sp := range a.spans {
		runs[i] = run{idSpan: sp, ord: uint32(ord)}
		ord += uint64(sp.n)
	}
	if ord != uint64(n) {
		return false // not the runs of all the IDs
	}
	byID := make([]*run, len(runs))
	for i := range runs {
		byID[i] = &runs[i]
	}
	slices.SortFunc(byID, func(a, b *run) int { return cmp.Compare(a.first, b.first) })
	rank := uint32(0)
	for i, r := range byID {
		if i > 0 && r.first <= byID[i-1].last {
			return false // overlapping ranges
		}
		r.rank = rank
		rank += r.n
	}
	x.pieces = x.pieces[:0]
	for i, r := range runs {
		if i == 0 || r.rank != runs[i-1].rank+runs[i-1].n {
			x.pieces = append(x.pieces, rankPiece{rank: r.rank, ord: r.ord})
		}
	}
	slices.SortFunc(x.pieces, func(a, b rankPiece) int { return cmp.Compare(a.rank, b.rank) })
	x.pieces = slices.Clip(x.pieces)
	return true
}

// buildPieces walks the IDs in dump order and gives each distinct ID the
// next ordinal, in a table by rank, from which it makes the pieces: a
// piece starts at each rank whose ordinal does not follow the rank
// before's, which is where, in dump order, an ID's rank does not follow
// the rank of the ID before it. With more than one piece per ordsEvery
// IDs (and more than minOrdsPieces), the index keeps the table instead
// (ords).
func (x *rankIndex) buildPieces(s *idSeq) (dups int) {
	const none = ^uint32(0)
	ords := make([]uint32, x.n)
	for i := range ords {
		ords[i] = none
	}
	ord := uint32(0)
	s.each(func(id uint64) {
		r, _ := x.rank(id)
		if ords[r] != none {
			dups++
			return
		}
		ords[r] = ord
		ord++
	})
	n := 0
	for r := range ords {
		if r == 0 || ords[r] != ords[r-1]+1 {
			n++
		}
	}
	if n > minOrdsPieces && n > x.n/ordsEvery {
		x.ords, x.pieces = ords, nil
		return dups
	}
	x.pieces = make([]rankPiece, 0, n)
	for r := range ords {
		if r == 0 || ords[r] != ords[r-1]+1 {
			x.pieces = append(x.pieces, rankPiece{rank: uint32(r), ord: ords[r]})
		}
	}
	return dups
}

// ordsEvery: an index keeps its ordinals by rank (rankIndex.ords) when it
// would have more than one piece per ordsEvery IDs. The table costs 4
// bytes per ID, the pieces 8 bytes each, and a lookup in a word where a
// piece starts searches them.
const ordsEvery = 64

// minOrdsPieces: with this many pieces or fewer, an index keeps them, even
// for few IDs.
const minOrdsPieces = 256

// pieceOfWords records in each word the delta of the piece holding its
// first rank, and flags the words where another piece starts.
func (x *rankIndex) pieceOfWords() {
	if x.ords != nil { // every word looks its ordinals up (ordinal)
		for i := range x.words {
			x.words[i].before |= splitWord
		}
		return
	}
	p := 0
	for i := range x.words {
		w := &x.words[i]
		for p+1 < len(x.pieces) && x.pieces[p+1].rank <= w.before {
			p++
		}
		w.delta = x.pieces[p].ord - x.pieces[p].rank
		last := w.before + uint32(bits.OnesCount64(w.bits)) // the next word's first rank
		if p+1 < len(x.pieces) && x.pieces[p+1].rank < last {
			w.before |= splitWord
		}
	}
}

// rank returns the rank of id among the IDs, and whether id is one of them.
func (x *rankIndex) rank(id uint64) (uint32, bool) {
	k := x.unit(id)
	if k >= x.units {
		return 0, false
	}
	i := k / 64
	if x.blocks != nil {
		var ok bool
		if i, ok = x.blockWord(k); !ok {
			return 0, false
		}
	}
	w := &x.words[i]
	bit := uint64(1) << (k % 64)
	if w.bits&bit == 0 {
		return 0, false
	}
	return w.before&^splitWord + uint32(bits.OnesCount64(w.bits&(bit-1))), true
}

// unit returns the unit of id, its bit in the span if it is one of the
// IDs: id-min rotated right by shift. An ID below min wraps around to
// the top, and the low bits of an ID between two units rotate to the top,
// so that one comparison with units does what three did (below min,
// unaligned, past the span): it runs once per reference. The few IDs not
// of the index that still come out below units are no error: the
// rotation maps each ID to its own unit, so their bits are not set.
func (x *rankIndex) unit(id uint64) uint64 {
	return bits.RotateLeft64(id-x.min, x.rot)
}

// blockWord returns, in an index with blocks, the word of unit k, and
// whether its block has words (the one place of that step, small enough
// to inline in rank, lookup and touch).
func (x *rankIndex) blockWord(k uint64) (uint64, bool) {
	b := x.blocks[k>>x.blockBits]
	return uint64(b) + k&(1<<x.blockBits-1)/64, b != noBlock
}

// lookup returns the ordinal of id and whether it is in the index (none is
// in emptyRank): one word read, and the pieces searched only in a word
// where one starts. It repeats rank's steps rather than calling a shared helper: it runs once
// per reference, and the call that the compiler does not inline cost 30 %
// (BenchmarkIndexLookup/bitmap/dump_order, 5.5 -> 7.2 ns).
func (x *rankIndex) lookup(id uint64) (uint32, bool) {
	k := x.unit(id)
	if k >= x.units {
		return 0, false
	}
	i := k / 64
	if x.blocks != nil {
		var ok bool
		if i, ok = x.blockWord(k); !ok {
			return 0, false
		}
	}
	w := &x.words[i]
	bit := uint64(1) << (k % 64)
	if w.bits&bit == 0 {
		return 0, false
	}
	r := w.before + uint32(bits.OnesCount64(w.bits&(bit-1)))
	if w.before&splitWord != 0 {
		return x.ordinal(r &^ splitWord), true
	}
	return r + w.delta, true
}

// ordinal returns the ordinal of rank r, from its piece or the table.
func (x *rankIndex) ordinal(r uint32) uint32 {
	if x.ords != nil {
		return x.ords[r]
	}
	i, found := slices.BinarySearchFunc(x.pieces, r, func(p rankPiece, r uint32) int { return cmp.Compare(p.rank, r) })
	if !found {
		i--
	}
	return r - x.pieces[i].rank + x.pieces[i].ord
}

// bytes returns the memory the index holds.
func (x *rankIndex) bytes() int64 {
	return int64(cap(x.words))*16 + int64(cap(x.pieces))*8 + int64(cap(x.blocks))*4 + int64(cap(x.ords))*4
}

// touch brings the bitmap words of the IDs vals[at], for each at, into
// the processor's caches, so that their cache misses overlap before
// lookup needs the words (wordToucher). The caller keeps the sum it
// returns, so that loads, where they are made, are not left out.
func (x *rankIndex) touch(vals []uint64, refAt []uint32) uint64 {
	t := wordToucher{x: x}
	for _, at := range refAt {
		if t.full() {
			t.flush()
		}
		if i, ok := x.wordOf(vals[at]); ok {
			t.put(i)
		}
	}
	return t.flush()
}

// windowArrays readies w, a wordWindow, for the elements of the object
// arrays of heads, read by SkimObjectsData from data (its first byte at
// file offset base), IDs of idSize bytes: their IDs, read (the callers
// take each array's with elements, and resolve them in place), and, where
// the processor can prefetch, the byte offsets of their bitmap words, one
// per element, in the order the callers then resolve them, the objects one
// after the other (each calls w.advance before a stretch of elements).
// Instances are left out: finding their references (their class, its
// fields) cost more than their misses, on the 1.3 GB JDK 17 dump 2.33 s
// against 2.11 s with neither (one core, 4 alternating runs, loads),
// against 1.95 s with the arrays alone; prefetched, on the 134 MB dump
// 260.8 against 242.4 ms (one core, 20 runs, 2026-12-03), on the 1.3 GB
// dump no faster; in the window, 1,868.4 against 1,753.8 ms (one core,
// the 1.3 GB dump, 8 runs, 2026-12-04).
//
//go:noinline
func (x *rankIndex) windowArrays(w *wordWindow, heads []hprof.ObjectHead, data []byte, base int64, idSize int) {
	w.ids, w.offs, w.taken, w.next, w.used = w.ids[:0], w.offs[:0], 0, 0, 0
	if cap(w.arrays) < len(heads) {
		w.arrays = make([]int32, len(heads))
	}
	arrays, n := w.arrays[:len(heads)], 0
	for i := range heads {
		arrays[n] = int32(i)
		if heads[i].Tag == hprof.SubObjectArrayDump {
			n++
		}
	}
	for _, i := range arrays[:n] {
		h := &heads[i]
		c := h.Contents(data, base, idSize)
		if idSize == 4 {
			w.ids, w.offs = appendWords[uint32](x, w.ids, w.offs, c)
		} else {
			w.ids, w.offs = appendWords[uint64](x, w.ids, w.offs, c)
		}
	}
	w.advance(x, 0)
}

// appendWords appends to ids the IDs of c, big-endian, of ID's size, and,
// where the processor can prefetch, to offs the byte offset in x.words of
// the word of each: for an ID without one (null, or not an object of the
// index), the offset before it (a line brought in already), or 0.
func appendWords[ID uint32 | uint64](x *rankIndex, ids, offs []uint64, c []byte) ([]uint64, []uint64) {
	size := 4
	if uint64(^ID(0)) > 1<<32-1 {
		size = 8
	}
	last := uint64(0)
	if len(offs) > 0 {
		last = offs[len(offs)-1]
	}
	for p := 0; p <= len(c)-size; p += size {
		id := uint64(binary.BigEndian.Uint32(c[p:]))
		if size == 8 {
			id = binary.BigEndian.Uint64(c[p:])
		}
		ids = append(ids, id)
		if canPrefetch {
			if i, ok := x.wordOf(id); ok {
				last = i * uint64(unsafe.Sizeof(rankWord{}))
			}
			offs = append(offs, last)
		}
	}
	return ids, offs
}

// A wordWindow holds the IDs of the elements of a batch's object arrays
// (windowArrays), and brings the bitmap words of their lookups into the
// processor's caches a few lookups ahead of each (windowAhead), where the
// processor can prefetch; elsewhere it only holds the IDs. All of a batch's
// words prefetched at once (up to 128 at a time, wordToucher), most were
// not there when looked up on the VM of 2026-12-04 (AMD EPYC, 150 ns to
// memory), likely more prefetches than the processor has room for misses
// in flight (that VM has no counters to check). In a C loop of random
// lookups into 40 MB, with 10 dependent multiplies after each: 41.6 ns a
// lookup with 128 prefetched at once, 30.4 with 32, 12.8 with each
// prefetched 16 lookups ahead, against 86.1 with none and 8.3 for the
// multiplies alone.
type wordWindow struct {
	ids    []uint64 // the IDs of the batch's arrays' elements
	arrays []int32  // the places of the batch's arrays among its heads
	offs   []uint64 // byte offsets in the index's words, one per lookup
	taken  int      // the IDs taken (elements)
	next   int      // the first offset not prefetched
	used   int      // the lookups made or passed
}

// elements returns the next n IDs of the window (windowArrays): those of
// the elements of the batch's next object array, of n elements.
func (w *wordWindow) elements(n int) []uint64 {
	e := w.ids[w.taken : w.taken+n : w.taken+n]
	w.taken += n
	return e
}

// windowAhead is how many lookups ahead of the next a wordWindow
// prefetches; the callers advance it by windowStep lookups at most, and it
// prefetches windowMin words at a time or more (but the batch's last):
// an object array of the 134 MB dump has 5 or 6 elements on average, and
// a call of prefetchLines for each cost 0.5 % more instructions on it
// (cachegrind, one goroutine).
const (
	windowAhead = 32
	windowStep  = 16
	windowMin   = 8
)

// advance counts n more lookups made and prefetches the words up to
// windowAhead lookups past them, if that is windowMin words or more or
// the last of the batch.
func (w *wordWindow) advance(x *rankIndex, n int) {
	w.used += n
	if to := min(w.used+windowAhead, len(w.offs)); to >= w.next+windowMin || to == len(w.offs) && to > w.next {
		prefetchLines(unsafe.Pointer(unsafe.SliceData(x.words)), w.offs[w.next:to])
		w.next = to
	}
}

// A wordToucher brings the bitmap words of IDs into the processor's
// caches ahead of their lookups, a batch at a time: with a prefetch
// instruction (prefetchLines: amd64 and arm64), which waits for none of
// them; elsewhere with loads that do not depend on each other. The loads
// overlapped their cache misses too, but each waited to retire, and the
// processor ran only so far ahead of the first. Prefetching, crunch of
// the 1.3 GB JDK 17 dump (22.75 M objects, a bitmap of 50 MB) took 1,655
// against 1,876 ms with one core (medians of 5 alternating runs), 1,033
// against 1,131 ms with two (6); the 134 MB dump (a bitmap of 4 MB) 251
// against 267 and 169 against 175 ms (20; 2026-12-03). Batches of 32 and
// 512 words took as long as 128.
type wordToucher struct {
	x    *rankIndex
	offs [touchBatch]uint64 // the byte offsets of words in x.words
	n    uint
	sum  uint64
}

// touchBatch is how many words a wordToucher brings in at a time.
const touchBatch = 128

// prefetching: wordToucher prefetches, where the processor can (tests
// turn it off to check the loads).
var prefetching = canPrefetch

// put adds word i to the batch, which must not be full (full); the
// callers find it with wordOf, in their loops (a method that did both,
// and flushed a full batch, was too large to inline: one core, the 1.3
// GB dump, 1,701 against 1,655 ms).
func (t *wordToucher) put(i uint64) {
	t.offs[t.n] = i * uint64(unsafe.Sizeof(rankWord{}))
	t.n++
}

// full reports whether the batch is full, for flush to bring it in.
func (t *wordToucher) full() bool { return t.n == touchBatch }

// flush brings in the words of the batch, empties it, and returns the sum
// of the bits loaded so far (0 with prefetches).
func (t *wordToucher) flush() uint64 {
	offs := t.offs[:t.n]
	t.n = 0
	if prefetching {
		prefetchLines(unsafe.Pointer(unsafe.SliceData(t.x.words)), offs)
		return 0
	}
	for _, o := range offs {
		t.sum += t.x.words[o/uint64(unsafe.Sizeof(rankWord{}))].bits
	}
	return t.sum
}

// wordOf returns the index in x.words of the word of id, if it has one.
func (x *rankIndex) wordOf(id uint64) (uint64, bool) {
	k := x.unit(id)
	if k >= x.units {
		return 0, false
	}
	i := k / 64
	if x.blocks != nil { // a block without words gives noBlock, past them
		i = uint64(x.blocks[k>>x.blockBits]) + k&(1<<x.blockBits-1)/64
	}
	return i, i < uint64(len(x.words))
}
