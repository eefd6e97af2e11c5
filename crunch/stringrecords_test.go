package crunch

import (
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"
)

// TestStringRecords: records added across blocks come back in order,
// every field of each, the blocks made only as the one before fills, and
// bytes counts whole blocks of 20 bytes a record.
func TestStringRecords(t *testing.T) {
	var r stringRecords
	const n = 2*stringBlock + 3
	for i := range n {
		r.add(pendingString{id: uint64(i) + 1, place: uint64(i) << 33, length: uint32(i) ^ 0xabcd})
		if want := i/stringBlock + 1; len(r.blocks) != want {
			t.Fatalf("after %d records: %d blocks, want %d", i+1, len(r.blocks), want)
		}
	}
	if r.len() != n {
		t.Fatalf("len %d, want %d", r.len(), n)
	}
	for i := range n {
		want := pendingString{id: uint64(i) + 1, place: uint64(i) << 33, length: uint32(i) ^ 0xabcd}
		if p := r.at(i); p != want || r.id(i) != want.id {
			t.Fatalf("record %d: %+v (id %d), want %+v", i, p, r.id(i), want)
		}
	}
	if got, want := r.bytes(), int64(3*stringBlock*20); got != want {
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

// TestCollectPass1: pass 1's end collects what it dropped once that
// reaches collectAbove, and counts anew from there; below it, it leaves
// the collector alone.
func TestCollectPass1(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection but those asked for
	st := &state{pass1Dropped: collectAbove - 1}
	before := collections()
	st.collectPass1()
	if n := collections(); n != before || st.pass1Dropped != collectAbove-1 {
		t.Errorf("below collectAbove: %d collections, %d bytes left counted; want none, %d", n-before, st.pass1Dropped, collectAbove-1)
	}
	st.pass1Dropped++
	before = collections()
	st.collectPass1()
	if n := collections(); n == before || st.pass1Dropped != 0 {
		t.Errorf("at collectAbove: %d collections, %d bytes left counted; want one, 0", n-before, st.pass1Dropped)
	}
}

// TestKeepReferencedCollects: as keepReferenced drops pass 1's STRING
// records it collects them where they reach collectAbove (a symbol
// table's records, before the strings' tables and pass 2 add to the
// heap), and leaves fewer to the collection after pass 1.
func TestKeepReferencedCollects(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection but those asked for
	perBlock := int64(unsafe.Sizeof(stringBlockOf{}))
	for _, blocks := range []int64{1, (collectAbove + perBlock - 1) / perBlock} {
		st := &state{}
		for i := range blocks * stringBlock {
			st.pending.add(pendingString{id: uint64(i) + 1})
		}
		before := collections()
		if err := st.keepReferenced(); err != nil {
			t.Fatal(err)
		}
		n := collections() - before
		switch dropped := blocks * perBlock; {
		case dropped >= collectAbove && (n != 1 || st.pass1Dropped != 0):
			t.Errorf("%d bytes of records dropped: %d collections, %d bytes left counted; want one, 0", dropped, n, st.pass1Dropped)
		case dropped < collectAbove && (n != 0 || st.pass1Dropped != dropped):
			t.Errorf("%d bytes of records dropped: %d collections, %d bytes left counted; want none, %d", dropped, n, st.pass1Dropped, dropped)
		}
		if st.pending.len() != 0 {
			t.Errorf("%d records kept after keepReferenced", st.pending.len())
		}
	}
}

// collections returns how many collections the process has made.
func collections() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}
