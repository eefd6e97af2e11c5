package bmd_test

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestBigObjectArrayMemory: reading an object array of 2²¹ elements
// allocates about twice what its elements take (8 bytes each, the slice
// doubled as they are decoded), not the copy upon copy of a slice grown
// an append at a time (decrunch of a 40-million-element array: 1.2 GB
// allocated for its 320 MB), and reads every element back.
func TestBigObjectArrayMemory(t *testing.T) {
	const n = 1 << 21
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 8, Classes: 1})
	if err != nil {
		t.Fatal(err)
	}
	elems := make([]uint64, n)
	for i := range elems {
		if i%3 != 0 {
			elems[i] = uint64(2 + i%1000)
		}
	}
	if _, err := w.ObjectArray(0, elems); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	file := out.Bytes()
	elems = nil

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == bmd.KindObjectArray {
			got = len(rec.Elements)
			if e := rec.Elements[n-1]; e != uint64(2+(n-1)%1000) {
				t.Errorf("last element %d, want %d", e, 2+(n-1)%1000)
			}
		}
	}
	runtime.ReadMemStats(&after)
	if got != n {
		t.Fatalf("read %d elements, want %d", got, n)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	limit := uint64(2*8*n + 8<<20)
	if testutil.RaceEnabled {
		limit += limit / 2 // 48 MB under -race
	}
	t.Logf("allocated %d bytes for %d elements (limit %d)", alloc, n, limit)
	if alloc > limit {
		t.Errorf("allocated %d bytes for an object array of %d elements, limit %d", alloc, n, limit)
	}
}
