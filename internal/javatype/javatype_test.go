package javatype

import "testing"

func TestSize(t *testing.T) {
	want := map[uint8]int{Boolean: 1, Byte: 1, Char: 2, Short: 2, Float: 4, Int: 4, Double: 8, Long: 8}
	for c := 0; c < 256; c++ {
		for _, id := range []int{0, 4, 8} {
			w := want[uint8(c)]
			if c == Object {
				w = id
			}
			if got := Size(uint8(c), id); got != w {
				t.Errorf("Size(%d, %d) = %d, want %d", c, id, got, w)
			}
		}
	}
}
