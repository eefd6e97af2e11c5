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
	if len(s.chunks) == 0 || len(s.chunks[len(s.chunks)-1].delta) > idSeqChunk-binary.MaxVarintLen64 {
		s.chunks = append(s.chunks, idChunkData{base: s.last, delta: make([]byte, 0, idSeqChunk)})
	}
	c := &s.chunks[len(s.chunks)-1]
	c.delta = protowire.AppendVarint(c.delta, protowire.EncodeZigZag(int64(id-s.last)))
	s.last = id
	s.n++
}

// appendSeq appends the IDs of o to s, taking over o's memory.
func (s *idSeq) appendSeq(o *idSeq) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = *o
		*o = idSeq{}
		return
	}
	s.lo, s.hi = min(s.lo, o.lo), max(s.hi, o.hi)
	s.or |= o.or | (o.first ^ s.first)
	s.chunks = append(s.chunks, o.chunks...)
	s.last = o.last
	s.n += o.n
	*o = idSeq{}
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
