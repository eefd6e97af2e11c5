package crunch

import "testing"

// TestAlignment: MAT's alignment, from the GCD of the distances between
// object IDs, is the largest power of two dividing it, from 8 (0 in the
// metadata, which takes 16 to 256 or nothing) to 256; a GCD whose power
// of two is 8 or less, such as 24 or 248 (objects of one size), is 8.
func TestAlignment(t *testing.T) {
	for _, c := range []struct {
		ids  []uint64
		want uint32
	}{
		{nil, 0},
		{[]uint64{0x1000}, 0},
		{[]uint64{0x1000, 0x1008, 0x1010}, 0},
		{[]uint64{0x1000, 0x1004}, 0},
		{[]uint64{0x1000, 0x1010, 0x1030}, 16},
		{[]uint64{0x1000, 0x1018, 0x1030}, 0}, // GCD 24
		{[]uint64{0x1000, 0x10f8, 0x11f0}, 0}, // GCD 248
		{[]uint64{0x1000, 0x100c}, 0},         // GCD 12
		{[]uint64{0x1000, 0x1030}, 16},        // GCD 48
		{[]uint64{0x1000, 0x1100, 0x1300}, 256},
		{[]uint64{0x1000, 0x2000}, 256},         // clamped
		{[]uint64{0x3000, 0x1000, 0x2000}, 256}, // below the first
	} {
		var l addressLayout
		for _, id := range c.ids {
			l.object(id)
		}
		if got := l.alignment(); got != c.want {
			t.Errorf("IDs %#x: alignment %d, want %d", c.ids, got, c.want)
		}
	}
}
