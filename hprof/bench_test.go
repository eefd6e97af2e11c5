package hprof_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// BenchmarkNextSub reads every record and sub-record of a dump as crunch's
// first pass does (object array elements skipped), with Next and NextSub.
func BenchmarkNextSub(b *testing.B) {
	data := testutil.BenchDump(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		r.SkipElements = true
		var s hprof.SubRecord
		var n int
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if !rec.Tag.IsHeapDump() {
				continue
			}
			for {
				err := r.NextSub(&s)
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n += int(s.Tag)
			}
		}
		if n == 0 {
			b.Fatal("no sub-records")
		}
	}
}

// BenchmarkRecords is BenchmarkNextSub with the iterators.
func BenchmarkRecords(b *testing.B) {
	data := testutil.BenchDump(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		r.SkipElements = true
		var n int
		for rec, err := range r.Records() {
			if err != nil {
				b.Fatal(err)
			}
			if !rec.Tag.IsHeapDump() {
				continue
			}
			for s, err := range r.SubRecords() {
				if err != nil {
					b.Fatal(err)
				}
				n += int(s.Tag)
			}
		}
		if n == 0 {
			b.Fatal("no sub-records")
		}
	}
}
