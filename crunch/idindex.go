package crunch

import (
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/heapcrunch/heapcrunch/internal/bigmem"
)

// idIndex maps the object IDs of an HPROF dump to dense IDs without a map:
// each entry packs the object's ID (rebased and shifted by its alignment)
// into the high bits of a uint64 and the object's ordinal into the low bits;
// the entries are sorted, and a bucket table over the high bits narrows each
// lookup to a few neighbouring entries. It costs 8 bytes per object plus
// half a byte for the buckets.
type idIndex struct {
	keys    []uint64
	min     uint64
	shift   uint
	ordBits uint
	// fallback when packing does not fit in 64 bits
	ids  []uint64
	ords []uint32

	bucketShift uint
	buckets     []uint32 // buckets[b] = first entry whose key>>ordBits>>bucketShift >= b

	// rank, when set, is the index (a bitmap over a compact span of IDs)
	// and the fields above are unused.
	rank *rankIndex
}

// buildIDIndex indexes the IDs of s, s's first ID getting ordinal 0, each
// distinct ID the rank of its first occurrence among the distinct IDs
// (newDedupedIDIndex); dups counts the repeats. It reads s twice or three
// times, gives back the memory of its IDs as it reads them when nothing
// reads them after (a bitmap whose pieces come from the runs), and leaves
// the rest to the caller to release. A bitmap (rankIndex) is
// used when the IDs span at most 32 bitmap bits per ID (HotSpot heaps:
// about 5; of G1's, the blocks that hold IDs: rankIndex), else a sorted
// table of the IDs.
func buildIDIndex(s *idSeq) (*idIndex, int) {
	if l := rankIndexLayout(s); l.words != 0 && l.bytes() <= 8*uint64(s.n)+4096 {
		r, dups := newRankIndex(s, l, true)
		return &idIndex{rank: r}, dups
	}
	ids := makeIDs(s.n)
	s.each(func(id uint64) { ids = append(ids, id) })
	return newDedupedIDIndex(ids)
}

// makeIDs returns an empty table with room for n IDs, from bigmem if it
// takes minBigBitmap or more (idIndex.free gives it back): the sorted
// table of a dump whose IDs a bitmap does not fit, 8 bytes an object, is
// as large as a bitmap can be.
func makeIDs(n int) []uint64 {
	if n >= minBigBitmap/8 {
		if ids := bigmem.Table[uint64](n); len(ids) == n {
			return ids[:0]
		}
	}
	return make([]uint64, 0, n)
}

// newIDIndex builds an index over ids, where ids[i] gets ordinal i. It takes
// ownership of ids (reusing its memory). Duplicate IDs resolve to one of
// their ordinals; newDedupedIDIndex makes them share one.
func newIDIndex(ids []uint64) *idIndex {
	x := &idIndex{}
	n := len(ids)
	if n == 0 {
		return x
	}
	lo, hi, or := ids[0], ids[0], uint64(0)
	for _, v := range ids {
		lo = min(lo, v)
		hi = max(hi, v)
	}
	for _, v := range ids {
		or |= v - lo
	}
	x.min = lo
	if or != 0 {
		x.shift = uint(bits.TrailingZeros64(or))
	}
	x.ordBits = uint(bits.Len64(uint64(n)))
	span := (hi - lo) >> x.shift
	if uint(bits.Len64(span))+x.ordBits <= 64 {
		for i, v := range ids {
			ids[i] = ((v-lo)>>x.shift)<<x.ordBits | uint64(i)
		}
		sortKeys(ids)
		x.keys = ids
		x.buildBuckets(span, func(i int) uint64 { return x.keys[i] >> x.ordBits })
		return x
	}
	// Rare: the IDs span too much to pack. Sort IDs and ordinals together.
	x.ids = ids
	x.ords = make([]uint32, n)
	for i := range x.ords {
		x.ords[i] = uint32(i)
	}
	sort.Sort(pairSorter{x.ids, x.ords})
	x.buildBuckets(span, func(i int) uint64 { return (x.ids[i] - lo) >> x.shift })
	return x
}

type pairSorter struct {
	ids  []uint64
	ords []uint32
}

func (p pairSorter) Len() int           { return len(p.ids) }
func (p pairSorter) Less(i, j int) bool { return p.ids[i] < p.ids[j] }
func (p pairSorter) Swap(i, j int) {
	p.ids[i], p.ids[j] = p.ids[j], p.ids[i]
	p.ords[i], p.ords[j] = p.ords[j], p.ords[i]
}

func (x *idIndex) len() int {
	if x.rank != nil {
		return x.rank.n
	}
	if x.keys != nil {
		return len(x.keys)
	}
	return len(x.ids)
}

// buildBuckets makes about one bucket per 4 entries.
func (x *idIndex) buildBuckets(span uint64, key func(int) uint64) {
	n := x.len()
	nb := uint64(n/4 + 1)
	x.bucketShift = 0
	for span>>x.bucketShift >= nb {
		x.bucketShift++
	}
	nbk := int(span>>x.bucketShift) + 2
	x.buckets = make([]uint32, nbk)
	j := 0
	for b := 0; b < nbk; b++ {
		for j < n && key(j)>>x.bucketShift < uint64(b) {
			j++
		}
		x.buckets[b] = uint32(j)
	}
}

// lookup returns the ordinal of id and whether it is in the index.
func (x *idIndex) lookup(id uint64) (uint32, bool) {
	if x.rank != nil {
		return x.rank.lookup(id)
	}
	n := x.len()
	if n == 0 || id < x.min {
		return 0, false
	}
	d := id - x.min
	if d&(1<<x.shift-1) != 0 {
		return 0, false
	}
	k := d >> x.shift
	b := k >> x.bucketShift
	if b+1 >= uint64(len(x.buckets)) {
		return 0, false
	}
	lo, hi := int(x.buckets[b]), int(x.buckets[b+1])
	if x.keys != nil {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if x.keys[m]>>x.ordBits < k {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < n && x.keys[lo]>>x.ordBits == k {
			return uint32(x.keys[lo] & (1<<x.ordBits - 1)), true
		}
		return 0, false
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < n && x.ids[lo] == id {
		return x.ords[lo], true
	}
	return 0, false
}

// free gives back the memory of a bitmap index (rankIndex.free): nothing
// may read the index after. x may be nil.
func (x *idIndex) free() {
	if x == nil {
		return
	}
	if x.rank != nil {
		x.rank.free()
	}
	bigmem.FreeTable(x.keys)
	bigmem.FreeTable(x.ids)
	*x = idIndex{rank: x.rank}
}

// bytes returns the memory the index holds.
func (x *idIndex) bytes() int64 {
	if x.rank != nil {
		return x.rank.bytes()
	}
	return int64(cap(x.keys))*8 + int64(cap(x.ids))*8 + int64(cap(x.ords))*4 + int64(cap(x.buckets))*4
}

// sortKeys sorts distinct keys, on two cores when there are enough of them:
// it partitions the keys in place around the median of a sample and sorts
// the two parts at once. No memory beyond the keys themselves.
func sortKeys(a []uint64) {
	if len(a) < 1<<16 || runtime.GOMAXPROCS(0) < 2 {
		slices.Sort(a)
		return
	}
	var sample [63]uint64
	for i := range sample {
		sample[i] = a[(len(a)-1)*i/(len(sample)-1)]
	}
	slices.Sort(sample[:])
	pivot := sample[len(sample)/2]
	// Hoare-style partition: a[:i] < pivot <= a[i:].
	i, j := 0, len(a)-1
	for {
		for i <= j && a[i] < pivot {
			i++
		}
		for i <= j && a[j] >= pivot {
			j--
		}
		if i >= j {
			break
		}
		a[i], a[j] = a[j], a[i]
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slices.Sort(a[:i])
	}()
	slices.Sort(a[i:])
	wg.Wait()
}

// newDedupedIDIndex builds an index over ids in which each distinct ID
// gets the rank of its first occurrence among the distinct IDs: the
// ordinal of a file with several dumps of one object (several heap dumps)
// is the same for every dump, and ordinals stay dense. It returns the index
// and how many entries were repeats. Like newIDIndex, it owns ids.
func newDedupedIDIndex(ids []uint64) (*idIndex, int) {
	x := newIDIndex(ids)
	n := x.len()
	if n == 0 {
		return x, 0
	}
	// Entries are sorted by ID, then by ordinal: the first of a run of
	// equal IDs has the smallest ordinal. Mark the other ordinals.
	removed := make([]uint64, (n+63)/64)
	dups := 0
	id := func(i int) uint64 {
		if x.keys != nil {
			return x.keys[i] >> x.ordBits
		}
		return x.ids[i]
	}
	ord := func(i int) uint64 {
		if x.keys != nil {
			return x.keys[i] & (1<<x.ordBits - 1)
		}
		return uint64(x.ords[i])
	}
	if x.ids != nil {
		// pairSorter does not order equal IDs by ordinal: do it.
		for i := 0; i < n; {
			j := i + 1
			for j < n && x.ids[j] == x.ids[i] {
				j++
			}
			if j-i > 1 {
				slices.Sort(x.ords[i:j])
			}
			i = j
		}
	}
	for i := 1; i < n; i++ {
		if id(i) == id(i-1) {
			o := ord(i)
			removed[o/64] |= 1 << (o % 64)
			dups++
		}
	}
	if dups == 0 {
		return x, 0
	}
	// rank(o) = o - (removed ordinals below o).
	before := make([]uint32, len(removed))
	c := uint32(0)
	for w, bitsW := range removed {
		before[w] = c
		c += uint32(bits.OnesCount64(bitsW))
	}
	rank := func(o uint64) uint64 {
		w := o / 64
		return o - uint64(before[w]) - uint64(bits.OnesCount64(removed[w]&(1<<(o%64)-1)))
	}
	k := 0
	for i := 0; i < n; i++ {
		if i > 0 && id(i) == id(i-1) {
			continue
		}
		if x.keys != nil {
			x.keys[k] = x.keys[i]>>x.ordBits<<x.ordBits | rank(ord(i))
		} else {
			x.ids[k], x.ords[k] = x.ids[i], uint32(rank(ord(i)))
		}
		k++
	}
	if x.keys != nil {
		x.keys = x.keys[:k]
		x.buildBuckets((x.keys[k-1]>>x.ordBits)+1, func(i int) uint64 { return x.keys[i] >> x.ordBits })
	} else {
		x.ids, x.ords = x.ids[:k], x.ords[:k]
		x.buildBuckets((x.ids[k-1]-x.min)>>x.shift+1, func(i int) uint64 { return (x.ids[i] - x.min) >> x.shift })
	}
	return x, dups
}
