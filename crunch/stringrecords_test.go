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
