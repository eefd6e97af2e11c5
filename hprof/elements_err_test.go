package hprof

import (
	"bytes"
	"testing"
)

// TestWriterObjectArrayPiecesWriteError: a write that fails within an
// object array written in pieces, in a record of its own, is the error of
// every later call, Flush included, not the array's elements still to
// come (which hid it: "a record written while ... are still to come").
func TestWriterObjectArrayPiecesWriteError(t *testing.T) {
	w, err := NewWriter(&failAfter{n: 100 << 10}, Header{Version: Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.SegmentSize = 4096
	w.BeginHeapDump(TagHeapDumpSegment, 0)
	const n = 1 << 20
	if err := w.BeginObjectArray(0x100, 0, 0x200, n); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, 4096)
	for i := 0; i < n; i += len(ids) {
		if err = w.ObjectArrayElements(ids); err != nil {
			break
		}
	}
	if !isDiskFull(err) {
		t.Fatalf("ObjectArrayElements: %v, want disk full", err)
	}
	for name, call := range map[string]func() error{
		"WriteSub":    func() error { return w.WriteSub(&SubRecord{Tag: SubRootStickyClass, ID: 1}) },
		"EndHeapDump": w.EndHeapDump,
		"Flush":       w.Flush,
	} {
		if err := call(); !isDiskFull(err) {
			t.Errorf("%s: %v, want disk full", name, err)
		}
	}
}

func isDiskFull(err error) bool { return err != nil && err.Error() == "disk full" }

// TestWriterObjectArrayPiecesAloneInHeapDump pins where an array in pieces
// larger than a segment differs from ObjectArray's: alone in a HEAP DUMP,
// it is a HEAP DUMP SEGMENT and a HEAP DUMP END, not one HEAP DUMP (the
// record is begun before the Writer can know nothing follows); with any
// other sub-record before or after it, the files are the same.
func TestWriterObjectArrayPiecesAloneInHeapDump(t *testing.T) {
	const n = 2000 // 16,000 bytes, over the segments of 4,096
	for _, others := range [][]int{nil, {n, 10}, {10, n}} {
		lens := others
		if lens == nil {
			lens = []int{n}
		}
		for _, tag := range []Tag{TagHeapDump, TagHeapDumpSegment} {
			whole := writeAlone(t, tag, lens, false)
			pieces := writeAlone(t, tag, lens, true)
			want := others != nil || tag == TagHeapDumpSegment
			if bytes.Equal(whole, pieces) != want {
				t.Errorf("%s, arrays of %v: the same file %v, want %v", tag, lens, !want, want)
			}
			if !want && (Tag(whole[31]) != TagHeapDump || Tag(pieces[31]) != TagHeapDumpSegment || Tag(pieces[len(pieces)-9]) != TagHeapDumpEnd) {
				t.Errorf("%s alone: records %s, then %s ... %s", tag, Tag(whole[31]), Tag(pieces[31]), Tag(pieces[len(pieces)-9]))
			}
		}
	}
}

// writeAlone writes a heap dump of tag holding object arrays of lens, in
// pieces or whole, with segments of 4,096 bytes.
func writeAlone(t *testing.T, tag Tag, lens []int, pieces bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.SegmentSize = 4096
	w.BeginHeapDump(tag, 0)
	for j, n := range lens {
		elems := make([]uint64, n)
		if !pieces {
			err = w.WriteSub(&SubRecord{Tag: SubObjectArrayDump, ID: uint64(0x100 + j), ClassID: 3, Elements: elems})
		} else if err = w.BeginObjectArray(uint64(0x100+j), 0, 3, n); err == nil {
			err = w.ObjectArrayElements(elems)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.EndHeapDump(); err != nil {
		t.Fatal(err)
	}
	if tag == TagHeapDumpSegment {
		w.WriteRecord(TagHeapDumpEnd, 0, nil)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
