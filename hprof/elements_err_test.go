package hprof

import "testing"

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
