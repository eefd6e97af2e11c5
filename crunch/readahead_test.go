package crunch

import (
	"bytes"
	"io"
	"testing"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// TestAheadSize: the items pass 2's goroutines exchange stay as small as
// their comment says.
func TestAheadSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && unsafe.Sizeof(ahead{}) != 32 {
		t.Errorf("ahead is %d bytes, want 32", unsafe.Sizeof(ahead{}))
	}
}

// TestUnknownIDsInOrder: IDs that are not in the dump are numbered in the
// order the written records use them, across batches, and references from
// objects of a dropped heap number none: the reading goroutine resolves
// them all, the writing one numbers only what it writes.
func TestUnknownIDsInOrder(t *testing.T) {
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
	// Enough instances for several batches, the unknown ones last.
	n := 3 * twoCoreBatches.items
	for i := range n {
		target := uint32(0x300 + 8*(i+1)) // the next instance
		if i == n-1 {
			target = 0x8880000
		}
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: uint64(0x300 + 8*i), ClassID: 0x100, Data: ref(target)})
	}
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x100000, ClassID: 0x7770000, Elements: []uint64{0x9990000, 0x8880000, 0x300}})
	w.EndHeapDump()
	w.Flush()

	var out bytes.Buffer
	st, err := Crunch(bytes.NewReader(buf.Bytes()), &out, Options{DropHeaps: []string{"zygote"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Dangling != 3 || st.Dropped != 1 {
		t.Fatalf("%d unknown IDs, %d dropped objects; want 3 (0x8880000, 0x9990000, 0x7770000) and 1", st.Dangling, st.Dropped)
	}
	// Classes 1, objects 2..n+2, the dropped object n+3; then 0x8880000,
	// 0x9990000, the array's elements first, its class last.
	objects := uint64(1 + n + 1)
	want888, want999, want777 := objects+2, objects+3, objects+4
	r, err := bmd.NewReader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var last, arr []uint64
	var arrClass uint64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case bmd.KindInstance:
			last = append(last[:0], rec.Values...)
		case bmd.KindObjectArray:
			arr, arrClass = append(arr[:0], rec.Elements...), rec.Class
		}
	}
	if len(last) != 1 || last[0] != want888 {
		t.Errorf("the last instance refers to %v, want [%d] (0x8880000)", last, want888)
	}
	if len(arr) != 3 || arr[0] != want999 || arr[1] != want888 || arrClass != want777 {
		t.Errorf("the array: elements %v, class %d; want [%d %d 2], %d", arr, arrClass, want999, want888, want777)
	}
}
