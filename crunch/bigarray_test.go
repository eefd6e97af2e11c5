package crunch

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// bigArrayDump writes to a file a dump with 8-byte IDs whose heap is 1,000
// small instances and one object array of n elements that refer to them,
// as a large HashMap's table or ArrayList's array is in a server's heap.
func bigArrayDump(t *testing.T, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bigarray.hprof")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := hprof.NewWriter(f, hprof.Header{Version: hprof.Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("Node")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 2, []byte("[Ljava/lang/Object;")))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x1000, Name: 1}))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: 0x2000, Name: 2}))
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x1000, Class: hprof.ClassDump{ID: 0x1000}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x2000, Class: hprof.ClassDump{ID: 0x2000}})
	const nodes = 1000
	for i := range nodes {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: uint64(0x10000 + 16*i), ClassID: 0x1000})
	}
	elems := make([]uint64, n)
	for i := range elems {
		if i%3 != 0 {
			elems[i] = uint64(0x10000 + 16*(i%nodes))
		}
	}
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x100000, ClassID: 0x2000, Elements: elems})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: 0x100000})
	w.EndHeapDump()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBigObjectArrayMemory: crunching a dump whose one object array has
// 2²¹ elements (16 MiB of IDs) allocates about what its IDs take, once in
// the reader and, with two goroutines, once more with their places in the
// batch: not the copy upon copy of slices grown an append at a time (a
// JDK dump of 322 MB whose one Object[] has 40 million elements took 1.9
// GB of peak RSS with one goroutine and 2.7 GB with two).
func TestBigObjectArrayMemory(t *testing.T) {
	const n = 1 << 21
	p := bigArrayDump(t, n)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	bothPass2Ways(t, func(t *testing.T) {
		for _, mapped := range []bool{true, false} {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var src io.ReadSeeker = f // mapped where the system can
			if !mapped {
				src = bytes.NewReader(data) // read a buffer at a time
			} else {
				in := openInput(f)
				mapped = in.mapped != nil
				in.unmap()
			}
			checkArrayAlloc(t, src, n, mapped)
		}
	})
}

// checkArrayAlloc crunches src, a bigArrayDump of n elements, mapped or
// read a buffer at a time, and checks the bytes allocated.
func checkArrayAlloc(t *testing.T, src io.ReadSeeker, n int, mapped bool) {
	t.Helper()
	ids := uint64(8 * n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Crunch(src, io.Discard, Options{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	// The IDs once (8 bytes each), with two goroutines their copy in
	// a batch and their places there (8 + 4 bytes), the array's BMD
	// record (3 bytes each here, in a buffer grown by append: about
	// 12) and 16 MiB for the rest. Before, one goroutine took 124 MB
	// and two 266 MB.
	limit := 4*ids + 16<<20
	if !mapped {
		// Read a buffer at a time, the IDs' slice doubles as they come
		// (their length is a claim of the file): twice their size.
		limit += 2 * ids
	}
	if testutil.RaceEnabled {
		limit += limit / 2 // two goroutines allocated 110 and 130 MB under -race
	}
	t.Logf("mapped %v: allocated %d bytes for %d elements (limit %d)", mapped, got, n, limit)
	if got > limit {
		t.Errorf("allocated %d bytes for an object array of %d elements, limit %d", got, n, limit)
	}
}
