package bmd

import (
	"math/rand/v2"
	"testing"
)

// refSkip skips n varints byte by byte, with fastUvarint: the position
// after them, ok false if b ends first or one is malformed, and whether
// one of them took 9 bytes or more.
func refSkip(b []byte, pos, n int) (end int, ok, long bool) {
	for range n {
		start := pos
		if _, ok := fastUvarint(b, &pos); !ok {
			return 0, false, long
		}
		long = long || pos-start >= 9
	}
	return pos, true, long
}

// TestSkipVarintsWords: skipVarints, eight bytes at a time, ends where
// decoding the varints one by one does, on random runs of varints of 1
// to 11 bytes, from every start and for every count; it gives up only
// where a varint of 9 bytes or more (or the end of the bytes) is among
// them, and never accepts what decoding refuses.
func TestSkipVarintsWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		var b []byte
		for range rng.IntN(40) {
			// Mostly short varints, as a BMD has; sometimes long ones.
			n := 1 + rng.IntN(3)
			if rng.IntN(8) == 0 {
				n = 1 + rng.IntN(11)
			}
			for i := range n {
				c := byte(rng.IntN(256))
				if i < n-1 {
					c |= 0x80
				} else {
					c &= 0x7F
				}
				b = append(b, c)
			}
		}
		if round%3 == 0 && len(b) > 0 {
			b = b[:rng.IntN(len(b))] // ends within a varint
		}
		for pos := 0; pos <= len(b); pos++ {
			for n := 0; n <= 12; n++ {
				want, wantOK, long := refSkip(b, pos, n)
				got, ok := skipVarints(b, pos, n)
				switch {
				case ok && (!wantOK || got != want):
					t.Fatalf("% x from %d, %d varints: %d, want %d (ok %v)", b, pos, n, got, want, wantOK)
				case !ok && wantOK && !long:
					t.Fatalf("% x from %d, %d varints: gave up, want %d", b, pos, n, want)
				}
			}
		}
	}
}

// TestSlowRef: slowRef, which decodes references of two to four bytes in
// place, gives what fastUvarint and refFrom give, and ends where
// fastUvarint does, for varints of 1 to 11 bytes (minimal or not,
// malformed, cut short by the end of the bytes) at every distance from
// the end, relative to selves near 0, in the middle and near 2⁶⁴.
func TestSlowRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := randomVarint(rng, 1+rng.IntN(11))
		for _, self := range []uint64{1, 1 << 40, 1<<64 - 2} {
			wantPos := 0
			want, wantOK := fastUvarint(b, &wantPos)
			want = refFrom(self, want)
			pos := 0
			got, ok := slowRef(b, &pos, self)
			if ok != wantOK || ok && (got != want || pos != wantPos) {
				t.Fatalf("slowRef(% x, self %d) = %d, %v at %d; want %d, %v at %d", b, self, got, ok, pos, want, wantOK, wantPos)
			}
		}
	}
}

// TestFastUvarint: fastUvarint, which decodes varints of one and two bytes
// in place, gives what the loop of longUvarint gives, for varints of 1 to
// 11 bytes (minimal or not, malformed, cut short by the end of the bytes).
func TestFastUvarint(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		n := 1 + rng.IntN(11)
		if rng.IntN(2) == 0 {
			n = 1 + rng.IntN(3)
		}
		b := randomVarint(rng, n)
		wantPos, pos := 0, 0
		want, wantOK := longUvarint(b, &wantPos)
		got, ok := fastUvarint(b, &pos)
		if ok != wantOK || ok && (got != want || pos != wantPos) {
			t.Fatalf("fastUvarint(% x) = %d, %v at %d; want %d, %v at %d", b, got, ok, pos, want, wantOK, wantPos)
		}
	}
}

// randomVarint returns n random bytes, all but the last with the
// continuation bit, the last without it three times in four (a varint of
// n bytes) and random the fourth (a varint that may run on, or be cut
// short), then zero to two bytes after them.
func randomVarint(rng *rand.Rand, n int) []byte {
	var b []byte
	for i := range n {
		c := byte(rng.IntN(256))
		if i < n-1 {
			c |= 0x80
		} else if rng.IntN(4) > 0 {
			c &= 0x7F
		}
		b = append(b, c)
	}
	return append(b, make([]byte, rng.IntN(3))...)
}
