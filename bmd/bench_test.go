package bmd_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// benchBMD returns the default BMD of the dump testutil.BenchDump gives
// ($HEAPCRUNCH_BENCH_DUMP or the sample dump).
func benchBMD(b *testing.B) []byte {
	src := testutil.BenchDump(b)
	var file bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &file, crunch.Options{}); err != nil {
		b.Fatal(err)
	}
	return file.Bytes()
}

// readEvery reads every record of a BMD file.
func readEvery(b *testing.B, file []byte, skipValues bool) {
	readSkipping(b, file, skipValues, false)
}

// readSkipping reads a BMD file with SkipValues and SkipObjects as given.
func readSkipping(b *testing.B, file []byte, skipValues, skipObjects bool) {
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		b.Fatal(err)
	}
	r.SkipValues, r.SkipObjects = skipValues, skipObjects
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReader reads every record of a default BMD (benchBMD, held in
// memory); bytes/s is BMD bytes read.
func BenchmarkReader(b *testing.B) {
	file := benchBMD(b)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		readEvery(b, file, false)
	}
}

// BenchmarkReaderSkipValues is BenchmarkReader with SkipValues, as
// decrunch's first pass reads.
func BenchmarkReaderSkipValues(b *testing.B) {
	file := benchBMD(b)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		readEvery(b, file, true)
	}
}

// BenchmarkReaderSkipObjects reads with SkipValues and SkipObjects, as
// decrunch's first pass does: the OBJECTS runs are skipped, their blocks
// checked.
func BenchmarkReaderSkipObjects(b *testing.B) {
	file := benchBMD(b)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		readSkipping(b, file, true, true)
	}
}

// BenchmarkV1Reader reads every record of the original tools' version 1
// file of the dialer dump (testdata/v1); bytes/s is BMD bytes read.
func BenchmarkV1Reader(b *testing.B) {
	file := testutil.ReadAll(b, testutil.Fixture("v1/dialer-orig.bmd.gz"))
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := bmd.NewV1Reader(bytes.NewReader(file))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWriterRoots writes 409,600 roots of one kind, their objects in
// no order (an Android dump's interned strings: 400,730 roots in the
// corpus dialer dump's objects copied 55 times, internal/cmd/scaleheap);
// ns/op is for all of them.
func BenchmarkWriterRoots(b *testing.B) {
	const n = 409600
	objects := make([]uint64, n)
	x := uint64(88172645463325252)
	for i := range objects {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		objects[i] = x % (4 * n)
	}
	b.ReportAllocs()
	for b.Loop() {
		w, err := bmd.NewWriter(io.Discard, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 4, Hash: bmd.HashXX64})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.HeapDump(true); err != nil {
			b.Fatal(err)
		}
		for _, o := range objects {
			if err := w.Root(0x89, o, 0, 0, 0, 0); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
