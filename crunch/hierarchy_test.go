package crunch_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// dumpWithClasses writes a small HPROF: class i (ID 0x100+i*8) has super
// supers[i] (an index, or -1), fieldsOf(i) int fields, and one instance.
func dumpWithClasses(t *testing.T, supers []int, fieldsOf func(int) int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	enc := w.Encoder()
	if err := w.WriteRecord(hprof.TagString, 0, enc.String(nil, 1, []byte("f"))); err != nil {
		t.Fatal(err)
	}
	if err := w.BeginHeapDump(hprof.TagHeapDumpSegment, 0); err != nil {
		t.Fatal(err)
	}
	id := func(i int) uint64 { return 0x100 + uint64(i)*8 }
	size := map[int]int{} // supers point to lower indexes or loop; loops get any size
	sizeOf := func(i int) int {
		if sup := supers[i]; sup >= 0 && sup < i {
			return 4*fieldsOf(i) + size[sup]
		}
		return 4 * fieldsOf(i)
	}
	for i, sup := range supers {
		var s hprof.SubRecord
		s.Tag = hprof.SubClassDump
		s.Class.ID = id(i)
		if sup >= 0 {
			s.Class.Super = id(sup)
		}
		for range fieldsOf(i) {
			s.Class.Fields = append(s.Class.Fields, hprof.Field{Name: 1, Type: hprof.Int})
		}
		size[i] = sizeOf(i)
		s.Class.InstanceSize = uint32(size[i])
		if err := w.WriteSub(&s); err != nil {
			t.Fatal(err)
		}
	}
	for i := range supers {
		s := hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x100000 + uint64(i)*8, ClassID: id(i), Data: make([]byte, size[i])}
		if err := w.WriteSub(&s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.EndHeapDump(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSuperclassLoopIsAnError: a superclass loop (no VM writes one) is a
// clear error naming the class, not an endless or ever-growing layout.
func TestSuperclassLoopIsAnError(t *testing.T) {
	src := dumpWithClasses(t, []int{1, 2, 0}, func(int) int { return 1 })
	_, err := crunch.Crunch(bytes.NewReader(src), io.Discard, crunch.Options{})
	if err == nil || !strings.Contains(err.Error(), "superclass chain loops") {
		t.Fatalf("err = %v, want a superclass loop error", err)
	}
}

// TestDeepHierarchy: a 5,000-class linear hierarchy where only every
// 1000th class has a field crunches quickly (layouts visit only classes
// with fields) and round-trips the instance sizes.
func TestDeepHierarchy(t *testing.T) {
	const n = 5000
	supers := make([]int, n)
	for i := range supers {
		supers[i] = i - 1
	}
	src := dumpWithClasses(t, supers, func(i int) int {
		if i%1000 == 0 {
			return 1
		}
		return 0
	})
	start := time.Now()
	var out bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &out, crunch.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d classes: %d bytes -> %d BMD bytes in %v", n, len(src), out.Len(), time.Since(start))
}
