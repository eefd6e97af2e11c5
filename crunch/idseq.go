package crunch

import (
	"encoding/binary"
	"math/bits"

	"google.golang.org/protobuf/encoding/protowire"
)

// idSeq collects object IDs in order, compactly: each ID is stored as the
// zigzag varint of its difference from the previous one. A heap is dumped
// mostly in address order, so consecutive IDs differ by an object's size:
// one or two bytes per object where a []uint64 takes eight. It also keeps
// the facts the index needs about the whole set (smallest, largest, common
// alignment), so that building the index reads the sequence only to place
// the IDs. Chunks of fixed size mean growing never copies.
type idSeq struct {
	chunks []idChunkData
	n      int
	last   uint64
	lo, hi uint64
	or     uint64 // OR of (id XOR first id): its trailing zeros are the alignment
	first  uint64
}

// idChunkData is a run of deltas, the first from base.
type idChunkData struct {
	base  uint64
	delta []byte
}

const idSeqChunk = 1 << 20

func (s *idSeq) add(id uint64) {
	if s.n == 0 {
		s.lo, s.hi, s.first = id, id, id
	}
	s.lo, s.hi = min(s.lo, id), max(s.hi, id)
	s.or |= id ^ s.first
	c := s.room(binary.MaxVarintLen64)
	c.delta = appendDelta(c.delta, s.last, id)
	s.last = id
	s.n++
}

// appendDelta appends the encoding of id after last: the zigzag varint of
// their difference.
func appendDelta(b []byte, last, id uint64) []byte {
	return protowire.AppendVarint(b, protowire.EncodeZigZag(int64(id-last)))
}

// room returns the chunk to append n more bytes of deltas to: the last
// one, or a new one, from s.last, if it has no room for them.
func (s *idSeq) room(n int) *idChunkData {
	if len(s.chunks) == 0 || len(s.chunks[len(s.chunks)-1].delta)+n > idSeqChunk {
		s.chunks = append(s.chunks, idChunkData{base: s.last, delta: make([]byte, 0, max(idSeqChunk, n))})
	}
	return &s.chunks[len(s.chunks)-1]
}

// idRun collects the IDs of a segment (a part of the dump read apart),
// encoded as idSeq encodes them, for idSeq.appendRun; its memory is
// reused from one segment to the next.
type idRun struct {
	delta       []byte // the deltas, the first from 0
	n           int
	first, last uint64
	lo, hi, or  uint64 // as idSeq's, or relative to first
	firstLen    int    // the bytes of the first delta
}

func (r *idRun) reset() { *r = idRun{delta: r.delta[:0]} }

func (r *idRun) add(id uint64) {
	if r.n == 0 {
		r.lo, r.hi, r.first = id, id, id
		r.delta = appendDelta(r.delta, 0, id)
		r.firstLen = len(r.delta)
	} else {
		r.lo, r.hi = min(r.lo, id), max(r.hi, id)
		r.or |= id ^ r.first
		r.delta = appendDelta(r.delta, r.last, id)
	}
	r.last = id
	r.n++
}

// appendRun appends the IDs of r to s, as many adds would.
func (s *idSeq) appendRun(r *idRun) {
	if r.n == 0 {
		return
	}
	s.add(r.first)
	rest := r.delta[r.firstLen:]
	c := s.room(len(rest))
	c.delta = append(c.delta, rest...)
	s.lo, s.hi = min(s.lo, r.lo), max(s.hi, r.hi)
	s.or |= r.or
	s.last = r.last
	s.n += r.n - 1
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
		id, c := c.base, c.delta
		for len(c) > 0 {
			v, n := protowire.ConsumeVarint(c)
			c = c[n:]
			id += uint64(protowire.DecodeZigZag(v))
			f(id)
		}
	}
}

// release drops the IDs.
func (s *idSeq) release() { s.chunks = nil }
