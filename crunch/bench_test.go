package crunch_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// benchDump returns the dump a benchmark crunches: $HEAPCRUNCH_BENCH_DUMP
// (an uncompressed HPROF, e.g. from scripts/genbig.sh) when set, else the
// uncompressed sample fixture, held in memory.
func benchDump(b *testing.B) io.ReadSeeker {
	if p := os.Getenv(testutil.BenchDumpEnv); p != "" {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	return bytes.NewReader(testutil.ReadAll(b, testutil.Fixture("sample.hprof.gz")))
}

// BenchmarkCrunch measures a default crunch; bytes/s is input bytes (both
// passes read them).
func BenchmarkCrunch(b *testing.B) {
	src := benchDump(b)
	size, _ := src.Seek(0, io.SeekEnd)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			b.Fatal(err)
		}
		if _, err := crunch.Crunch(src, io.Discard, crunch.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
