package crunch

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
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
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBigObjectArrayMemory: crunching a dump whose one object array has
// 2²² elements (32 MiB of IDs) allocates no more than crunching one whose
// array has 2²¹, but for 2 MiB: the elements are read, resolved and
// written arrayPiece at a time, never held whole, mapped or read a buffer
// at a time, with one goroutine or two (whose batches, up to queued+3 of
// them, fill up with arrays of 2²¹ elements already: about 18 MB in all,
// against 11 MB for an array of 2¹⁹), to BMD version 2 or 1 (whose
// transcoder reads the version 2 records in pieces too). Held whole, a JDK dump of 322 MB
// whose one Object[] has 40 million elements took 1.09 GB of peak RSS
// with one goroutine and 1.25 GB with two (1.9 and 2.7 GB when the
// elements were grown an append at a time).
func TestBigObjectArrayMemory(t *testing.T) {
	const small, large = 1 << 21, 1 << 22
	files := map[int]string{small: bigArrayDump(t, small), large: bigArrayDump(t, large)}
	bothPass2Ways(t, func(t *testing.T) {
		for _, mapped := range []bool{true, false} {
			for _, v1 := range []bool{false, true} {
				var got [2]uint64
				for i, n := range []int{small, large} {
					got[i] = arrayAlloc(t, files[n], mapped, v1)
				}
				t.Logf("mapped %v, version 1 %v: allocated %d bytes for %d elements, %d for %d", mapped, v1, got[0], small, got[1], large)
				if got[1] > got[0]+2<<20 {
					t.Errorf("mapped %v, version 1 %v: allocated %d bytes for an object array of %d elements, %d for %d: more than 2 MiB more", mapped, v1, got[1], large, got[0], small)
				}
			}
		}
	})
}

// arrayAlloc crunches the dump in file p, mapped or read a buffer at a
// time, to BMD version 2 or 1, and returns the bytes allocated.
func arrayAlloc(t *testing.T, p string, mapped, v1 bool) uint64 {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var src io.ReadSeeker = f // mapped where the system can
	if !mapped {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		src = bytes.NewReader(data) // read a buffer at a time
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	crunch := Crunch
	if v1 {
		crunch = func(src io.ReadSeeker, out io.Writer, opt Options) (*Stats, error) {
			return CrunchV1(src, out, opt, nil)
		}
	}
	if _, err := crunch(src, io.Discard, Options{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
