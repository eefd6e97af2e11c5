package bmd

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSort: radixSort sorts as slices.Sort does, for keys of every
// width (a byte all keys share skipped, the top bit set), lengths 0 to
// 8,192, many keys equal, and buffers reused from call to call.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var keys, tmp []uint64
	for _, n := range []int{0, 1, 2, 7, 255, 256, 1000, 8192} {
		for _, bits := range []uint{1, 8, 13, 20, 35, 51, 63, 64} {
			for _, shared := range []uint64{0, 0xAB << 24} {
				in := make([]uint64, n)
				for i := range in {
					v := rng.Uint64()
					if bits < 64 {
						v &= 1<<bits - 1
					}
					in[i] = v | shared
				}
				want := slices.Clone(in)
				slices.Sort(want)
				keys = append(keys[:0], in...)
				var got []uint64
				got, tmp = radixSort(keys, tmp)
				if !slices.Equal(got, want) {
					t.Fatalf("%d keys of %d bits (shared %#x): not sorted as slices.Sort sorts them", n, bits, shared)
				}
				keys = got
			}
		}
	}
}
