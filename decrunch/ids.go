package decrunch

import (
	"math/bits"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// objectIDs makes the HPROF object IDs of dense object IDs. IDs of HotSpot
// dumps are addresses, and Eclipse MAT infers two facts of the heap's
// layout from them (plugins/org.eclipse.mat.hprof, Pass1Parser): the object
// alignment, as the greatest common divisor of the differences between
// sorted addresses, and, for 8-byte IDs, whether references are
// compressed, when an object array starts before the previous one would
// end with 8-byte references. Crunch records what the original dump's IDs
// said (bmd.Metadata.Alignment, UncompressedRefs), and the IDs made here
// say the same:
//
//   - compressed references (or 4-byte IDs): d × alignment, so that
//     consecutive object arrays overlap as they did in the original;
//   - uncompressed references: d × 2³¹, plus the alignment for odd d, so
//     that no object array of fewer than 2²⁸ elements overlaps the next
//     object, and the differences still have the alignment as their
//     greatest common divisor.
type objectIDs struct {
	// The ID of d is d<<scale + (d&odd)<<shift: compressed, scale is
	// shift and odd is 0; uncompressed, scale is 31 and odd is 1.
	scale, shift uint
	odd          uint64
	mul          uint64 // 1<<shift, for the loops over references
	max          uint64 // the largest d that gives a valid ID
}

func newObjectIDs(m *bmd.Metadata) objectIDs {
	a := uint64(m.Alignment)
	if a < 8 {
		a = 8
	}
	o := objectIDs{shift: uint(bits.TrailingZeros64(a))}
	o.scale, o.mul = o.shift, 1<<o.shift
	idMax := uint64(1)<<(8*m.IDSize) - 1
	if m.IDSize == 8 {
		idMax = ^uint64(0)
	}
	if m.UncompressedRefs && m.IDSize == 8 {
		o.scale, o.odd = 31, 1
		o.max = (idMax - a) >> 31
	} else {
		o.max = idMax >> o.shift
	}
	return o
}

// id returns the HPROF ID of dense object ID d (0 for 0); ok is false when
// d is too large for the dump's identifier size. It has one test: it runs
// for each object (the object and its class), and the loops over
// references make the same IDs.
func (o objectIDs) id(d uint64) (uint64, bool) {
	if d > o.max {
		return 0, false
	}
	return d<<(o.scale&63) + (d&o.odd)<<(o.shift&63), true // &63: no test of the shift's count
}
