package crunch

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
)

// TestAheadSize: the items pass 2's goroutines exchange, and the roots
// a span's output holds, stay as small as their comments say.
func TestAheadSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && unsafe.Sizeof(ahead{}) != 32 {
		t.Errorf("ahead is %d bytes, want 32", unsafe.Sizeof(ahead{}))
	}
	// maxSpanRoots of them a span's output: 256 KiB (spanOut.root).
	if n := unsafe.Sizeof(spanRoot{}); n != 16 {
		t.Errorf("spanRoot is %d bytes, want 16", n)
	}
}

// TestUnknownIDsInOrder: IDs that are not in the dump are numbered in the
// order the written records use them, across batches, and references from
// objects of a dropped heap number none: the reading goroutine resolves
// them all, the writing one numbers only what it writes.
// Both ways of pass 2 (pass2OneGoroutine), with heap Z dropped (objects
// through items) and not (objects written directly on one goroutine).
func TestUnknownIDsInOrder(t *testing.T) {
	n := 3 * batchItems
	data := unknownIDsDump(n)
	for _, one := range []bool{false, true} {
		// Classes 1, objects 2..n+2, the dropped object n+3; then
		// 0x8880000, 0x9990000, 0x6660000, the array's elements first,
		// its class last.
		st, out, err := crunchPass2(data, Options{DropHeaps: []string{"zygote"}}, one)
		if err != nil {
			t.Fatal(err)
		}
		if st.Dangling != 4 || st.Dropped != 1 {
			t.Fatalf("%d unknown IDs, %d dropped objects; want 4 (0x8880000, 0x9990000, 0x6660000, 0x7770000) and 1", st.Dangling, st.Dropped)
		}
		m := uint64(n)
		checkUnknownIDs(t, out, m+4, m+5, m+6, m+7)
		// The class 1, the objects 2..n+3; then 0x9990000, first
		// referred to by heap Z's instance, 0x8880000, 0x6660000,
		// 0x7770000.
		st, out, err = crunchPass2(data, Options{}, one)
		if err != nil {
			t.Fatal(err)
		}
		if st.Dangling != 4 || st.Dropped != 0 {
			t.Fatalf("%d unknown IDs, %d dropped objects; want 4 and 0", st.Dangling, st.Dropped)
		}
		checkUnknownIDs(t, out, m+5, m+4, m+6, m+7)
	}
}

// unknownIDsDump writes a dump that refers to IDs it does not have: an
// instance of heap Z refers to 0x9990000, then n instances of heap A refer
// each to the next, the last to 0x8880000, and an object array of the
// unknown class 0x7770000 holds 0x9990000, 0x8880000, 0x6660000 and the
// first of them.
func unknownIDsDump(n int) []byte {
	var buf bytes.Buffer
	w, _ := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4})
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("zygote")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 2, []byte("app")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 3, []byte("ref")))
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x100, Class: hprof.ClassDump{ID: 0x100, InstanceSize: 4,
		Fields: []hprof.Field{{Name: 3, Type: hprof.Object}}}})
	ref := func(id uint32) []byte { return []byte{byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)} }
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'Z', HeapName: 1})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x200, ClassID: 0x100, Data: ref(0x9990000)})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'A', HeapName: 2})
	for i := range n {
		target := uint32(0x300 + 8*(i+1)) // the next instance
		if i == n-1 {
			target = 0x8880000
		}
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: uint64(0x300 + 8*i), ClassID: 0x100, Data: ref(target)})
	}
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x100000, ClassID: 0x7770000, Elements: []uint64{0x9990000, 0x8880000, 0x6660000, 0x300}})
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	w.Flush()
	return buf.Bytes()
}

// checkUnknownIDs checks the numbers of the unknown IDs in out, the BMD
// file of an unknownIDsDump: those of 0x8880000, 0x9990000, 0x6660000 and
// 0x7770000.
func checkUnknownIDs(t *testing.T, out []byte, want888, want999, want666, want777 uint64) {
	t.Helper()
	var last, arr []uint64
	var arrClass uint64
	bmdtest.Records(t, out, false, func(rec *bmd.Record) {
		switch rec.Kind {
		case bmd.KindInstance:
			last = append(last[:0], rec.Values...)
		case bmd.KindObjectArray:
			arr, arrClass = append(arr[:0], rec.Elements...), rec.Class
		}
	})
	if len(last) != 1 || last[0] != want888 {
		t.Errorf("the last instance refers to %v, want [%d] (0x8880000)", last, want888)
	}
	if len(arr) != 4 || arr[0] != want999 || arr[1] != want888 || arr[2] != want666 || arrClass != want777 {
		t.Errorf("the array: elements %v, class %d; want [%d %d %d ...], %d", arr, arrClass, want999, want888, want666, want777)
	}
}

// TestWriterStopsFirst: with pass 2 on two goroutines, when the writer
// fails on an early object (an instance of a class with no CLASS DUMP)
// while the reader has many batches still to send, crunch reports the
// writer's error; the reader, finding the writer stopped, ends without
// a batch to hand over (it crashed on one before).
func TestWriterStopsFirst(t *testing.T) {
	defer onOneGoroutine(false)()
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x100, Class: hprof.ClassDump{ID: 0x100, InstanceSize: 4,
		Fields: []hprof.Field{{Name: 1, Type: hprof.Int}}}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x200, ClassID: 0x999, Data: make([]byte, 4)})
	n := 12 * batchItems // a dozen batches after it, more than the pipe holds
	for i := range n {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: uint64(0x1000 + 8*i), ClassID: 0x100, Data: make([]byte, 4)})
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := Crunch(bytes.NewReader(buf.Bytes()), io.Discard, Options{})
		if err == nil || !strings.Contains(err.Error(), "instance of class 0x999, which has no CLASS DUMP") {
			t.Fatalf("error %v, want the instance of class 0x999 with no CLASS DUMP", err)
		}
	}
}
