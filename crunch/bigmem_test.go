package crunch

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bigmem"
)

// bigTablesDump writes a dump of n empty primitive arrays 248 bytes apart
// (4-byte IDs), in records of 1 MiB: its IDs take two bytes each in pass
// 1 (more than the first chunk of an idSeq), and its bitmap 16 bytes per
// 64 × 8 bytes of the heap, 7.75 bytes an object (less than a sorted table
// of IDs: the index is a bitmap), over 8 MiB for 1.1 million
// (minBigBitmap).
func bigTablesDump(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4})
	mustDo(t, err)
	mustDo(t, w.BeginHeapDump(hprof.TagHeapDumpSegment, 0))
	for i := range n {
		mustDo(t, w.WriteSub(&hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: uint64(0x1000000 + 248*i), ElemType: hprof.Int}))
	}
	mustDo(t, w.EndHeapDump())
	mustDo(t, w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil))
	mustDo(t, w.Flush())
	return buf.Bytes()
}

// TestBigTablesGivenBack: crunch makes its largest tables, the IDs of pass
// 1 and the index's bitmap, apart from the Go heap (bigmem, on Linux), and
// gives them back when it returns: after a whole crunch, and after one
// stopped by a dump cut in pass 1, when it has collected IDs but built no
// index, or in pass 2, when it has built it.
func TestBigTablesGivenBack(t *testing.T) {
	const n = 1_200_000
	data := bigTablesDump(t, n)
	base := bigmem.Mapped()
	for _, cutIn := range []int{0, 1, 2} {
		path := writeTemp(t, "big.hprof", data)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		most, cut := 0, false
		progress := func(pass int, off int64) {
			most = max(most, bigmem.Mapped()-base)
			if pass == cutIn && !cut && off > int64(len(data))*3/4 || pass == 2 && cutIn == 2 && !cut {
				cut = true
				if err := os.Truncate(path, int64(len(data))*9/10); err != nil {
					t.Error(err)
				}
			}
		}
		st, err := Crunch(f, io.Discard, Options{Progress: progress})
		f.Close()
		if (err == nil) != (cutIn == 0) {
			t.Fatalf("cut in pass %d: error %v", cutIn, err)
		}
		if cutIn == 0 && (st.IndexBytes < minBigBitmap || st.Objects != n) {
			t.Fatalf("index of %d bytes for %d objects, want a bitmap of %d or more for %d", st.IndexBytes, st.Objects, minBigBitmap, n)
		}
		if runtime.GOOS == "linux" && most == 0 {
			t.Errorf("cut in pass %d: no table mapped while crunching", cutIn)
		}
		if got := bigmem.Mapped() - base; got != 0 {
			t.Errorf("cut in pass %d: %d tables mapped after Crunch returned", cutIn, got)
		}
	}
}

// mustDo fails t on a non-nil err.
func mustDo(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
