package bmd

import (
	"runtime"
	"testing"
)

// TestObjectRunGrowth: a run's buffers grow by doubling, so that filling
// a run allocates at most about twice what it ends up holding (grown by
// append, a quarter at a time, about five times), and a run reset and
// filled again allocates nothing.
func TestObjectRunGrowth(t *testing.T) {
	r := NewObjectRun(4, 4)
	fill := func() {
		r.Reset(1)
		for i := range 100_000 {
			var ok bool
			switch i % 3 {
			case 0:
				ok = r.Instance(1, 8, []uint64{uint64(i + 1), 0})
			case 1:
				ok = r.ObjectArray(2, true, []uint64{uint64(i), uint64(i + 2), 0})
			default:
				ok = r.PrimitiveArray(Byte, uint32(i), false)
			}
			if !ok {
				t.Fatalf("record %d refused", i)
			}
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fill()
	runtime.ReadMemStats(&after)
	held := uint64(cap(r.buf) + 4*cap(r.ends) + 8*cap(r.hprof))
	if got := after.TotalAlloc - before.TotalAlloc; got > 5*held/2 {
		t.Errorf("filling a run allocated %d bytes for buffers of %d, want at most 2.5 times", got, held)
	}
	if used := uint64(len(r.buf) + 12*len(r.ends)); held > 2*used+4096 {
		t.Errorf("buffers of %d bytes for %d used, want at most twice", held, used)
	}
	if n := testing.AllocsPerRun(3, fill); n != 0 {
		t.Errorf("a run reset and filled again: %v allocations, want none", n)
	}
}
