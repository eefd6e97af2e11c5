package bmd_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// BenchmarkReader reads every record of the sample dump's default BMD
// (held in memory); bytes/s is BMD bytes read.
func BenchmarkReader(b *testing.B) {
	src := testutil.ReadAll(b, testutil.Fixture("sample.hprof.gz"))
	var file bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &file, crunch.Options{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(file.Len()))
	b.ReportAllocs()
	for b.Loop() {
		r, err := bmd.NewReader(bytes.NewReader(file.Bytes()))
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
