package crunch_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
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

// BenchmarkSymbolTable crunches a generated dump that is mostly a
// HotSpot symbol table, as testdata/gen/ManyClasses.java's is (made with
// a JDK by scripts/gendump.sh): 500,000 STRING records, in no order, of
// which the dump refers to 50,000 (20,000 class names and 30,000 field
// names), 20,000 classes and 100,000 instances, 8-byte IDs. It measures
// what such a dump costs beyond its objects: pass 1's records and the
// strings' work at its end (indexStrings, keepReferenced,
// classifyStrings), with no JDK.
func BenchmarkSymbolTable(b *testing.B) {
	dump := symbolTableDump(b)
	b.SetBytes(int64(len(dump)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := crunch.Crunch(bytes.NewReader(dump), io.Discard, crunch.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if st.Unreferenced != symUnreferenced {
			b.Fatalf("%d STRING records unreferenced, want %d", st.Unreferenced, symUnreferenced)
		}
	}
}

// The shape of symbolTableDump's dump.
const (
	symClasses      = 20_000
	symFieldNames   = 30_000
	symUnreferenced = 450_000
	symPerClass     = 5 // instances of each class
)

// symbolTableDump returns BenchmarkSymbolTable's dump.
func symbolTableDump(tb testing.TB) []byte {
	var buf bytes.Buffer
	w := newDumpWriter(tb, &buf, 8)
	enc := w.Encoder()
	const (
		className = 1_000_000 // string IDs: class i's name
		fieldName = 2_000_000 // field name j
		unused    = 3_000_000 // unreferenced symbol k
		classID   = 0x7f00_0000_0000
		objectID  = 0x7e00_0000_0000
	)
	// The STRING records in an order that mixes the three kinds, as a
	// symbol table's hash order does: k*p mod n for a prime p.
	n := symClasses + symFieldNames + symUnreferenced
	for k := range n {
		i := k * 7919 % n
		var id uint64
		var text string
		switch {
		case i < symClasses:
			id, text = uint64(className+i), fmt.Sprintf("com/example/app%d/Class%d", i%97, i)
		case i < symClasses+symFieldNames:
			j := i - symClasses
			id, text = uint64(fieldName+j), fmt.Sprintf("field%dOf%d", j, j%13)
		default:
			k := i - symClasses - symFieldNames
			id, text = uint64(unused+k), fmt.Sprintf("(Ljava/lang/Object;I)Lcom/example/Sym%d;", k)
		}
		w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, id, []byte(text)))
	}
	for i := range symClasses {
		w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(i + 1), ClassID: uint64(classID + 16*i), Name: uint64(className + i)}))
	}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	for i := range symClasses {
		c := hprof.ClassDump{ID: uint64(classID + 16*i), InstanceSize: 20, Fields: []hprof.Field{
			{Name: uint64(fieldName + (3*i)%symFieldNames), Type: hprof.Object},
			{Name: uint64(fieldName + (3*i+1)%symFieldNames), Type: hprof.Int},
			{Name: uint64(fieldName + (3*i+2)%symFieldNames), Type: hprof.Long},
		}}
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: c.ID, Class: c})
	}
	data := make([]byte, 20)
	for m := range symClasses * symPerClass {
		binary.BigEndian.PutUint64(data, 0)
		if m > 0 {
			binary.BigEndian.PutUint64(data, uint64(objectID+24*(m-1)))
		}
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: uint64(objectID + 24*m), ClassID: uint64(classID + 16*(m%symClasses)), Data: data})
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	must(tb, w.Flush())
	return buf.Bytes()
}
