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
	if p := os.Getenv("HEAPCRUNCH_BENCH_DUMP"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	return bytes.NewReader(testutil.ReadAll(b, testutil.Fixture("sample.hprof.gz")))
}

// BenchmarkCrunch measures a default crunch, with pass 2 encoding on a
// second goroutine ("pipelined") and on one ("one-goroutine"); bytes/s is
// input bytes (both passes read them).
func BenchmarkCrunch(b *testing.B) {
	src := benchDump(b)
	size, _ := src.Seek(0, io.SeekEnd)
	for _, c := range []struct {
		name    string
		workers int
	}{{"pipelined", 0}, {"one-goroutine", 1}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := src.Seek(0, io.SeekStart); err != nil {
					b.Fatal(err)
				}
				if _, err := crunch.Crunch(src, io.Discard, crunch.Options{Workers: c.workers}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
