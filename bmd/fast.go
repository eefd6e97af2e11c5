package bmd

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// The fast path of Next: most records of a file are instances and arrays,
// and most of them lie whole in the read buffer. fastObject decodes such a
// record from the buffered bytes with a local cursor, without the
// decoder's checks on every field; on anything unusual (the record runs
// past the buffered bytes, a malformed varint, an undefined class, a
// limit reached) it gives up without consuming anything, and Next decodes
// the record the careful way, which reports the error where it is. Both
// ways give the same records (TestFastPath).

// fastUvarint decodes a varint at b[*pos], advancing *pos; ok is false if
// b ends first or the varint is malformed. Those of one and two bytes,
// nearly all (class indexes, lengths), are decoded in place, small enough
// for the compiler to inline; the others in longUvarint.
func fastUvarint(b []byte, pos *int) (v uint64, ok bool) {
	if i := *pos; i+1 < len(b) {
		if c := b[i]; c < 0x80 {
			*pos = i + 1
			return uint64(c), true
		}
		if c := b[i+1]; c < 0x80 {
			*pos = i + 2
			return uint64(b[i]&0x7F) | uint64(c)<<7, true
		}
	}
	return longUvarint(b, pos)
}

// longUvarint is fastUvarint for the others: varints of three bytes or
// more, or at the end of b.
func longUvarint(b []byte, pos *int) (v uint64, ok bool) {
	i := *pos
	for shift := uint(0); i < len(b); shift += 7 {
		c := b[i]
		i++
		if shift == 63 && c > 1 {
			return 0, false
		}
		v |= uint64(c&0x7F) << shift
		if c < 0x80 {
			*pos = i
			return v, true
		}
		if shift == 63 {
			return 0, false
		}
	}
	return 0, false
}

// skipVarints skips n varints from b[pos:], accepting what fastUvarint
// accepts, or gives up (ok false) on a varint of 9 bytes or more, which
// the careful path decodes (values of 2⁵⁶ and up, or malformed). It
// restates fastUvarint's rule rather than calling it: the call per value
// cost 8 % in BenchmarkReaderSkipValues; TestSkipValues and
// TestSkipVarintsWords hold the two rules together. Eight bytes at a
// time, it runs about as many instructions as byte by byte on a BMD,
// whose varints are mostly one byte, but branches less: 7 % faster in
// BenchmarkReaderSkipValues (134 MB dump's BMD, 59.2 against 63.6 ms).
func skipVarints(b []byte, pos, n int) (int, bool) {
	// Eight bytes at a time: the bytes below 0x80 end the varints.
	run := 0 // bytes of the current varint before pos
	for n > 0 && pos+8 <= len(b) {
		ends := ^binary.LittleEndian.Uint64(b[pos:]) & 0x8080808080808080
		if run+bits.TrailingZeros64(ends)>>3 >= 8 {
			return 0, false
		}
		if k := bits.OnesCount64(ends); k < n {
			n -= k
			pos += 8
			run = bits.LeadingZeros64(ends) >> 3
			continue
		}
		for ; n > 1; n-- {
			ends &= ends - 1 // the n-th end is the lowest left
		}
		return pos + bits.TrailingZeros64(ends)>>3 + 1, true
	}
	// The last bytes of b, one at a time.
	for ; n > 0; n-- {
		start := pos - run
		run = 0
		for {
			if pos >= len(b) || pos-start >= 8 {
				return 0, false
			}
			c := b[pos]
			pos++
			if c < 0x80 {
				break
			}
		}
	}
	return pos, true
}

// fastRef decodes a reference relative to self. The hot loops, over an
// instance's fields and an array's elements, decode the common case, one
// byte, themselves (refFrom) and call slowRef for the others: a call per
// reference was a tenth of decrunch's work, and fastRef is too large for
// the compiler to inline.
func fastRef(b []byte, pos *int, self uint64) (uint64, bool) {
	if i := *pos; i < len(b) && b[i] < 0x80 {
		*pos = i + 1
		return refFrom(self, uint64(b[i])), true
	}
	return slowRef(b, pos, self)
}

// slowRef is fastRef for a reference of more than one byte. Those of two
// to four bytes, nearly all (objects fewer than 2²⁷ apart), are decoded
// in place: through fastUvarint's loop, whose checks are for the longest
// varints, such a reference took 67 instructions, and they were a twelfth
// of decrunch's (cachegrind, the 134 MB dump's BMD).
func slowRef(b []byte, pos *int, self uint64) (uint64, bool) {
	if i := *pos; i+3 < len(b) {
		b := b[i : i+4]
		v := uint64(b[0]&0x7F) | uint64(b[1]&0x7F)<<7
		switch {
		case b[1] < 0x80:
			*pos = i + 2
			return refFrom(self, v), true
		case b[2] < 0x80:
			*pos = i + 3
			return refFrom(self, v|uint64(b[2])<<14), true
		case b[3] < 0x80:
			*pos = i + 4
			return refFrom(self, v|uint64(b[2]&0x7F)<<14|uint64(b[3])<<21), true
		}
	}
	v, ok := fastUvarint(b, pos)
	if !ok {
		return 0, false
	}
	return refFrom(self, v), true
}

// refFrom returns the object a reference's varint v designates, relative
// to self: 0 for null, else self plus the zigzag difference v-1.
func refFrom(self, v uint64) uint64 {
	if v == 0 {
		return 0
	}
	v--
	return self + uint64(int64(v>>1)^-int64(v&1))
}

// fastObject decodes the INSTANCE, OBJECT ARRAY or PRIMITIVE ARRAY record
// at the start of the buffered bytes into rec, if it can; see above.
// fastInstance, fastObjectArray and fastPrimitiveArray are calls of their
// own (go:noinline): inlined here, they made fastObject so large that the
// compiler no longer inlined their varint decoding, a call per varint
// (decrunch of the 134 MB dump's BMD: 2,181.4 M instructions with them
// inlined, 2,127.2 M without). They set rec.Kind: set here after the
// call, from b, it cost 1.5 % of decrunch's instructions (1,936.3 M
// against 1,907.0 M), b's registers having been saved for the call.
func (r *Reader) fastObject(rec *Record) bool {
	b := r.input.buf.Buffered()
	if len(b) < 2 {
		return false
	}
	var n int
	switch k := Kind(b[0]); k {
	case KindInstance:
		n = r.fastInstance(rec, b)
	case KindObjectArray:
		n = r.fastObjectArray(rec, b)
	case KindPrimitiveArray, KindPrimitiveNoData:
		n = r.fastPrimitiveArray(rec, b)
	}
	if n == 0 {
		return false
	}
	r.input.buf.Discard(n) // rec.Kind is set: b, kept for the call, need not be loaded again
	return true
}

// fastInstance decodes an instance from b, returning its length, or 0.
//
//go:noinline
func (r *Reader) fastInstance(rec *Record, b []byte) int {
	pos := 1
	class, ok := fastUvarint(b, &pos)
	if !ok {
		return 0
	}
	var ch []Field
	k := int32(-1) // varints of the chain, if flattened
	var size int64 // its data in the HPROF
	if c := r.lay.get(class); c != nil && c.chain != nil {
		ch, k, size = c.chain, c.varints, c.size // most instances: the chain is flattened
	} else {
		var missing uint64
		if ch, ok, missing = r.lay.chain(class, r.meta.Classes); !ok || missing != 0 {
			return 0
		}
		k, size = r.lay.varints(class), dataSize(ch, r.meta.IDSize)
	}
	if r.lay.work+int64(len(ch)) > maxLayoutWork+layoutWorkPerByte*r.off() {
		return 0
	}
	if r.inObjects && uint64(size) > r.objSize-r.objData {
		return 0
	}
	skip := r.SkipValues && r.nextID != r.ValuesOf
	if skip {
		if k >= 0 {
			if pos, ok = skipVarints(b, pos, int(k)); !ok {
				return 0
			}
			r.lay.work += int64(len(ch))
			r.objectData(uint64(size))
			rec.Values = rec.Values[:0]
			rec.Kind, rec.Class = KindInstance, class
			r.object(rec)
			return pos
		}
	}
	self := r.nextID
	values := rec.Values[:0]
	if !skip {
		values = slices.Grow(values, len(ch))[:len(ch)]
	}
	for i, f := range ch {
		var v uint64
		switch {
		case f.Type == Object:
			if pos < len(b) && b[pos] < 0x80 { // fastRef, inline
				v = refFrom(self, uint64(b[pos]))
				pos++
			} else if v, ok = slowRef(b, &pos, self); !ok {
				return 0
			}
		case !f.Kept:
		case f.Type == Float || f.Type == Double:
			n := f.Type.Size()
			if pos+n > len(b) {
				return 0
			}
			for i := n - 1; i >= 0; i-- {
				v = v<<8 | uint64(b[pos+i])
			}
			pos += n
		default:
			if v, ok = fastUvarint(b, &pos); !ok {
				return 0
			}
			v = primitive(f.Type, v)
		}
		if i < len(values) { // none with SkipValues
			values[i] = v
		}
	}
	r.lay.work += int64(len(ch))
	r.objectData(uint64(size))
	rec.Values = values
	rec.Kind, rec.Class = KindInstance, class
	r.object(rec)
	return pos
}

// fastObjectArray decodes an object array from b, returning its length,
// or 0.
//
//go:noinline
func (r *Reader) fastObjectArray(rec *Record, b []byte) int {
	pos := 1
	self := r.nextID
	class, ok := fastUvarint(b, &pos)
	if !ok {
		return 0
	}
	if class == 0 {
		if class, ok = fastRef(b, &pos, self); !ok {
			return 0
		}
	} else if !r.lay.defined(class) {
		return 0 // readObjectArray's error
	}
	n, ok := fastUvarint(b, &pos)
	if !ok || n > uint64(len(b)-pos) { // each element takes a byte at least
		return 0
	}
	if r.MaxElements > 0 && n > uint64(r.MaxElements) && !r.SkipValues {
		return 0 // its elements in pieces: readObjectArray
	}
	elems := rec.Elements[:0]
	if !r.SkipValues {
		for range n {
			var e uint64
			if pos < len(b) && b[pos] < 0x80 { // fastRef, inline
				e = refFrom(self, uint64(b[pos]))
				pos++
			} else if e, ok = slowRef(b, &pos, self); !ok {
				return 0
			}
			elems = append(elems, e)
		}
	} else if pos, ok = skipVarints(b, pos, int(n)); !ok {
		return 0
	}
	if !r.objectData(elementBytes(Object, n, r.meta.IDSize)) { // n fits 32 bits: it is under len(b)
		return 0
	}
	rec.Elements = elems
	rec.Kind, rec.Class, rec.Count, rec.Pending = KindObjectArray, class, uint32(n), 0
	r.object(rec)
	return pos
}

// fastPrimitiveArray decodes a primitive array from b, returning its
// length, or 0.
//
//go:noinline
func (r *Reader) fastPrimitiveArray(rec *Record, b []byte) int {
	pos := 1
	t, ok := fastUvarint(b, &pos)
	if !ok || t > 0xFF || !Type(t).Valid() || Type(t) == Object {
		return 0
	}
	n, ok := fastUvarint(b, &pos)
	if !ok || n > 0xFFFFFFFF || Kind(b[0]) == KindPrimitiveArray && !r.objectData(elementBytes(Type(t), n, r.meta.IDSize)) {
		return 0
	}
	rec.Kind, rec.Type, rec.Count = Kind(b[0]), Type(t), uint32(n)
	r.object(rec)
	return pos
}
