package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/onerecord"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestScaleCopiesTheGraph: three copies of a real dump hold three times
// each class's instances, their references, array elements and payload,
// once its classes and their statics, and every root of an object that is
// not a class three times; each copy's references stay in the copy (the
// references counted are to objects of the dump, as in the original). On
// the corpus's Android dump and on JDK fixtures of 4- and 8-byte IDs.
func TestScaleCopiesTheGraph(t *testing.T) {
	eachScaled(t, []string{"sample32.hprof.gz", "sample.hprof.gz", dialer}, func(t *testing.T, in, out []byte) {
		a, err := heapstat.Summarize(in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := heapstat.Summarize(out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("objects %d -> %d, roots %v -> %v", a.Objects, b.Objects, a.Roots, b.Roots)
		for c, x := range a.Classes {
			y := b.Classes[c]
			if y == nil {
				t.Errorf("class %s: not in the copies", c)
				continue
			}
			want := heapstat.ClassStat{Instances: n * x.Instances, Refs: n * x.Refs, Elements: n * x.Elements, PayloadBytes: n * x.PayloadBytes,
				InstanceSize: x.InstanceSize, Fields: x.Fields, Statics: x.Statics, StaticRefs: x.StaticRefs}
			if *y != want {
				t.Errorf("class %s: %+v, want %+v", c, *y, want)
			}
		}
	})
}

// TestScaleCopiesStayApart: in three copies of the corpus's Android dump
// and of a JDK fixture, each reference of an instance or array of a copy
// is null, a class, or an object of the same copy (the new IDs say which:
// 8 apart, copy after copy); each copy has a root for each root of the
// dump that is not a class; and each copy has the dump's objects of each
// Android heap in that heap.
func TestScaleCopiesStayApart(t *testing.T) {
	eachScaled(t, []string{"sample32.hprof.gz", dialer}, func(t *testing.T, in, out []byte) {
		d, err := survey(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		e, err := survey(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		copyOf := func(id uint64) int { return int((id - d.base) / 8 / d.per) }
		isObject := func(id uint64) bool {
			_, ok := slices.BinarySearch(e.ids, id)
			return ok && !e.isClass(id)
		}
		rootsIn, rootsOut := map[hprof.SubTag]int{}, map[hprof.SubTag]int{}
		var refs, apart int
		check := func(owner, ref uint64) {
			if isObject(ref) {
				refs++
				if copyOf(ref) != copyOf(owner) {
					apart++
				}
			}
		}
		// The objects of each Android heap (HEAP DUMP INFO; 0 for a dump
		// without them), in the dump and in each copy.
		type heapCopy struct {
			heap uint32
			copy int
		}
		heapsIn, heapsOut := map[uint32]int{}, map[heapCopy]int{}
		var heap uint32
		isObjectTag := func(t hprof.SubTag) bool {
			return t == hprof.SubInstanceDump || t == hprof.SubObjectArrayDump || t == hprof.SubPrimitiveArrayDump || t == hprof.SubPrimitiveArrayNoData
		}
		walk(t, in, func(s *hprof.SubRecord) {
			switch {
			case s.Tag == hprof.SubHeapDumpInfo:
				heap = s.HeapType
			case isObjectTag(s.Tag):
				heapsIn[heap]++
			case s.Tag.IsRoot() && !d.isClass(s.ID):
				rootsIn[s.Tag]++
			}
		})
		heap = 0
		walk(t, out, func(s *hprof.SubRecord) {
			if s.Tag == hprof.SubHeapDumpInfo {
				heap = s.HeapType
			}
			if isObjectTag(s.Tag) {
				heapsOut[heapCopy{heap, copyOf(s.ID)}]++
			}
			switch {
			case s.Tag.IsRoot():
				if isObject(s.ID) {
					rootsOut[s.Tag]++
				}
			case s.Tag == hprof.SubInstanceDump:
				for _, off := range e.refs[s.ClassID] {
					check(s.ID, e.getID(s.Data[off:]))
				}
			case s.Tag == hprof.SubObjectArrayDump:
				for _, x := range s.Elements {
					check(s.ID, x)
				}
			}
		})
		if refs == 0 || apart > 0 {
			t.Errorf("%d of %d references to objects go to another copy", apart, refs)
		}
		for tag, k := range rootsIn {
			if rootsOut[tag] != n*k {
				t.Errorf("%v: %d roots of objects, want %d", tag, rootsOut[tag], n*k)
			}
		}
		for h, k := range heapsIn {
			for c := range n {
				if got := heapsOut[heapCopy{h, c}]; got != k {
					t.Errorf("heap %d, copy %d: %d objects, want %d", h, c, got, k)
				}
			}
		}
		t.Logf("%d references to objects, roots %v, objects by heap %v", refs, rootsOut, heapsIn)
	})
}

// TestScaleOneRecord: a dump of one HEAP DUMP record, as JDK 8 writes
// it, followed by a record of another kind, is copied as a segmented one
// is: three times each class's instances (the JDK fixture of 4-byte IDs,
// made one record by internal/onerecord with a STACK TRACE after it).
func TestScaleOneRecord(t *testing.T) {
	dumps := testutil.SmallDumps(t, "sample32.hprof.gz")
	var one bytes.Buffer
	if err := onerecord.Rewrite(bytes.NewReader(dumps["sample32.hprof.gz"]), &one, nil); err != nil {
		t.Fatal(err)
	}
	// A STACK TRACE: serial 9, thread 1, no frames.
	one.Write([]byte{0x05, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0})
	var out bytes.Buffer
	if err := scale(bytes.NewReader(one.Bytes()), &out, n, 0); err != nil {
		t.Fatal(err)
	}
	a, err := heapstat.Summarize(one.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	b, err := heapstat.Summarize(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for c, x := range a.Classes {
		if y := b.Classes[c]; y == nil || y.Instances != n*x.Instances || y.Refs != n*x.Refs {
			t.Errorf("class %s: %+v, want %d instances, %d references", c, y, n*x.Instances, n*x.Refs)
		}
	}
}

// n is the copies the tests make.
const n = 3

// dialer is the corpus's Android dump.
const dialer = "android-dalvik-kitkat-dialer.android-hprof"

// eachScaled calls f in a subtest for each named dump (a fixture or a
// corpus dump) with the dump and its objects n times over.
func eachScaled(t *testing.T, names []string, f func(t *testing.T, in, out []byte)) {
	dumps := testutil.SmallDumps(t, "sample32.hprof.gz", "sample.hprof.gz")
	for _, name := range names {
		in, ok := dumps[name]
		if !ok {
			testutil.Skip(t, "%s: not at hand", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := scale(bytes.NewReader(in), &out, n, 0); err != nil {
				t.Fatal(err)
			}
			f(t, in, out.Bytes())
		})
	}
}

// walk calls f with each heap sub-record of the dump data
// (heapstat.Walk).
func walk(t *testing.T, data []byte, f func(*hprof.SubRecord)) {
	t.Helper()
	err := heapstat.Walk(data, func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		if s != nil {
			f(s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
