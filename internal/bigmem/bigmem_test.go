package bigmem

import (
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
		Free(b[:0]) // a slice of it from its start, as its owner may hold it
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
