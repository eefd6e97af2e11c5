package decrunch

import (
	"bytes"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// BenchmarkDecrunch measures decrunch of a default BMD (held in memory) to
// io.Discard; bytes/s is HPROF bytes written. The dump is
// $HEAPCRUNCH_BENCH_DUMP (an uncompressed HPROF, e.g. from
// scripts/genbig.sh) when set, else the sample fixture.
func BenchmarkDecrunch(b *testing.B) {
	src := testutil.BenchDump(b)
	var bm bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &bm, crunch.Options{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decrunch(bytes.NewReader(bm.Bytes()), io.Discard, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
