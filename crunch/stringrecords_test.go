package crunch

import "testing"

// TestStringRecords: records added across blocks come back in order, each
// block made once and never grown, and bytes counts whole blocks.
func TestStringRecords(t *testing.T) {
	var r stringRecords
	const n = 2*stringBlock + 3
	for i := range n {
		r.add(pendingString{id: uint64(i) + 1, place: uint64(i)})
	}
	if r.len() != n {
		t.Fatalf("len %d, want %d", r.len(), n)
	}
	for i := range n {
		if p := r.at(i); p.id != uint64(i)+1 || p.place != uint64(i) {
			t.Fatalf("record %d: %+v", i, p)
		}
	}
	if len(r.blocks) != 3 {
		t.Errorf("%d blocks, want 3", len(r.blocks))
	}
	for k, b := range r.blocks {
		if cap(b) != stringBlock {
			t.Errorf("block %d: capacity %d, want %d", k, cap(b), stringBlock)
		}
	}
	if got, want := r.bytes(), int64(3*stringBlock*24); got != want {
		t.Errorf("bytes %d, want %d", got, want)
	}
}

// TestIDFilter: every ID added is found, and of IDs not added, laid out
// as HotSpot's symbol addresses are (8-byte aligned, close together),
// at most one in eight is taken for one (the filter keeps at least 8 bits
// an ID); a hash of the low bits alone would take most of them.
func TestIDFilter(t *testing.T) {
	for _, n := range []int{0, 1, 100, 10_000, 75_637} {
		f := newIDFilter(n)
		const base = 0x7f3a_1c00_0000
		for k := range n {
			f.add(base + uint64(k)*48)
		}
		for k := range n {
			if id := base + uint64(k)*48; !f.mayHave(id) {
				t.Fatalf("n=%d: ID %#x added, not found", n, id)
			}
		}
		const others = 200_000
		taken := 0
		for k := range others {
			if f.mayHave(base + uint64(n)*48 + 8 + uint64(k)*24) {
				taken++
			}
		}
		if n == 0 && taken > 0 || taken > others/8 {
			t.Errorf("n=%d: %d of %d IDs not added taken for added ones (at most %d)", n, taken, others, others/8)
		}
	}
}
