package bigmem

import (
	"math"
	"runtime"
	"testing"
)

// TestBytes: a table of any size is zeroed, of the length and capacity
// asked, and writable to its end; a large one is mapped on Linux (at a
// huge page boundary) until Free, a small one is not.
func TestBytes(t *testing.T) {
	before := Mapped()
	for _, n := range []int{0, 1, 4096, MinHuge - 1, MinHuge, MinHuge + 12345, 3 * MinHuge} {
		b := Bytes(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Bytes(%d): len %d, cap %d", n, len(b), cap(b))
		}
		for i := 0; i < n; i += 4096 {
			if b[i] != 0 {
				t.Fatalf("Bytes(%d): byte %d is %d", n, i, b[i])
			}
			b[i] = 1
		}
		if n > 0 {
			b[n-1] = 1
		}
		mapped := runtime.GOOS == "linux" && n >= MinHuge
		if got := Mapped() - before; got != map[bool]int{true: 1}[mapped] {
			t.Errorf("Bytes(%d): %d tables mapped, want mapped %v", n, got, mapped)
		}
		if IsMapped(b[:0]) != mapped {
			t.Errorf("Bytes(%d): IsMapped %v, want %v", n, !mapped, mapped)
		}
		Free(b[:0]) // a slice of it from its start, as its owner may hold it
		if IsMapped(b[:0]) {
			t.Errorf("Bytes(%d): IsMapped after Free", n)
		}
		if got := Mapped(); got != before {
			t.Errorf("Bytes(%d), Free: %d tables still mapped, want %d", n, got, before)
		}
	}
	Free(nil)
	Free(make([]byte, 10)) // from the heap: nothing to do
}

// TestFreeTwice: freeing a table twice, or a slice that does not start at
// its first byte, unmaps nothing else.
func TestFreeTwice(t *testing.T) {
	a, b := Bytes(MinHuge), Bytes(MinHuge)
	Free(a)
	Free(a)
	Free(b[1:])
	b[len(b)-1] = 2 // still mapped
	Free(b)
	if runtime.GOOS == "linux" && Mapped() != 0 {
		t.Errorf("%d tables mapped after all were freed", Mapped())
	}
}

// TestTable: a table of values is zeroed and of the length asked, mapped
// from MinHuge bytes on (on Linux) and given back by FreeTable; a length
// whose bytes do not fit in an int gives nil.
func TestTable(t *testing.T) {
	type word struct {
		bits        uint64
		before, end uint32
	}
	before := Mapped()
	for _, n := range []int{0, 1, MinHuge/16 - 1, MinHuge / 16, MinHuge/16 + 3} {
		w := Table[word](n)
		if len(w) != n {
			t.Fatalf("Table(%d): %d values", n, len(w))
		}
		for i := range w {
			if w[i] != (word{}) {
				t.Fatalf("Table(%d): value %d is %+v", n, i, w[i])
			}
			w[i] = word{bits: uint64(i), before: uint32(i) + 1, end: uint32(i) + 2}
		}
		for i := range w { // no value overlaps another
			if w[i] != (word{bits: uint64(i), before: uint32(i) + 1, end: uint32(i) + 2}) {
				t.Fatalf("Table(%d): value %d is %+v after all were written", n, i, w[i])
			}
		}
		mapped := runtime.GOOS == "linux" && n*16 >= MinHuge
		if got := Mapped() - before; got != map[bool]int{true: 1}[mapped] {
			t.Errorf("Table(%d): %d tables mapped, want mapped %v", n, got, mapped)
		}
		FreeTable(w)
		if got := Mapped(); got != before {
			t.Errorf("Table(%d), FreeTable: %d tables still mapped, want %d", n, got, before)
		}
	}
	if w := Table[word](math.MaxInt/16 + 1); w != nil {
		t.Errorf("Table of %d 16-byte values: %d values, want nil", math.MaxInt/16+1, len(w))
	}
	if w := Table[uint64](-1); w != nil {
		t.Errorf("Table(-1): %d values, want nil", len(w))
	}
}
