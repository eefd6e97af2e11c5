package decrunch

import (
	"testing"
	"unsafe"
)

// TestAheadItemSize: the second pass's items stay 48 bytes (see
// aheadItem); 72-byte items made the reader slower.
func TestAheadItemSize(t *testing.T) {
	if n := unsafe.Sizeof(aheadItem{}); n != 48 {
		t.Errorf("aheadItem is %d bytes, want 48", n)
	}
}
