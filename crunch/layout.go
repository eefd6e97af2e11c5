package crunch

import "math/bits"

// addressLayout is what the object IDs of a dump say about the heap's
// layout, as Eclipse MAT reads it (plugins/org.eclipse.mat.hprof,
// Pass1Parser: readObjectArrayDump and calculateAlignment). HotSpot's object
// IDs are addresses: MAT takes the object alignment from them, and decides
// that references are compressed (4 bytes in 8-byte-ID dumps) when an
// object array starts before the previous one would end with 8-byte
// references. Crunch records both in the metadata so that decrunch, which
// makes up new IDs, can space them to give MAT the same answers.
type addressLayout struct {
	first, gcd uint64 // the first object ID; the GCD of the others' distances to it
	seen       bool   // an object array was met
	overlap    bool
	start, end uint64 // the previous object array, as MAT sees it
}

// object records an object's ID. The greatest common divisor of the
// differences between sorted IDs, MAT's alignment, is that of the
// distances from any one of them; once it is 8 or less it is MAT's minimum
// and nothing more is computed.
func (l *addressLayout) object(id uint64) {
	if id == 0 || l.aligned() {
		return
	}
	if l.first == 0 {
		l.first = id
		return
	}
	d := id - l.first
	if id < l.first {
		d = l.first - id
	}
	l.gcd = gcd(l.gcd, d)
}

// aligned reports whether the alignment is known to be MAT's minimum, 8
// or less, so that object need not be called any more.
func (l *addressLayout) aligned() bool { return l.gcd != 0 && l.gcd <= 8 }

// gcd returns the greatest common divisor of a and b (the other one if
// one is 0).
func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// objectArray records an object array in file order, as MAT's pass 1 does:
// it overlaps the previous one if it starts after it and before its end
// with 16 bytes of header and 8-byte references.
func (l *addressLayout) objectArray(id uint64, length uint32) {
	if id > l.start && id < l.end {
		l.overlap = true
	}
	l.start, l.end, l.seen = id, id+16+uint64(length)*8, true
}

// append adds what o recorded of the objects after l's, o's first object
// array being first: the same as recording them in l.
func (l *addressLayout) append(o *addressLayout, first objectArrayAt) {
	if o.first != 0 {
		l.object(o.first)
		if l.gcd == 0 || l.gcd > 8 {
			l.gcd = gcd(l.gcd, o.gcd)
		}
	}
	if first.ok {
		l.objectArray(first.id, first.length)
		l.overlap = l.overlap || o.overlap
		l.start, l.end = o.start, o.end
	}
}

// alignment returns MAT's object alignment, clamped as MAT clamps it to 8
// to 256, as the power of two it is in every real dump (the largest one
// dividing it); 0 stands for 8.
func (l *addressLayout) alignment() uint32 {
	if l.gcd == 0 { // one object or none
		return 0
	}
	a := uint32(1) << min(bits.TrailingZeros64(l.gcd), 8)
	if a <= 8 { // a GCD of 24 or 248, say: objects 8 bytes aligned
		return 0
	}
	return a
}
