package hprof

import (
	"bytes"
	"testing"
)

// twoHeapDumps writes a dump of two heap dump records, the first holding
// an object array of n elements, the second a ROOT STICKY CLASS of ID 7.
func twoHeapDumps(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version102, IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	w.BeginHeapDump(TagHeapDumpSegment, 0)
	w.WriteSub(&SubRecord{Tag: SubObjectArrayDump, ID: 0x100, ClassID: 0x50, Elements: make([]uint64, n)})
	w.BeginHeapDump(TagHeapDumpSegment, 0)
	w.WriteSub(&SubRecord{Tag: SubRootStickyClass, ID: 7})
	w.EndHeapDump()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBodyAfterPendingElements: Body, called after NextSub left an
// array's elements pending, returns the rest of the record, those
// elements included, and the next heap dump record reads from its start
// (the elements pending are no longer the Reader's to skip).
func TestBodyAfterPendingElements(t *testing.T) {
	data := twoHeapDumps(t, 1000)
	for name, r := range readers(t, data) {
		r.MaxElements = 10
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		var s SubRecord
		if err := r.NextSub(&s); err != nil || s.Pending != 1000 {
			t.Fatalf("%s: %v, pending %d", name, err, s.Pending)
		}
		body, err := r.Body()
		if err != nil || len(body) != 4000 {
			t.Fatalf("%s: Body: %d bytes, %v; want the 4000 bytes of the elements", name, len(body), err)
		}
		if rec, err := r.Next(); err != nil || !rec.Tag.IsHeapDump() {
			t.Fatalf("%s: second record: %v, %v", name, rec.Tag, err)
		}
		if err := r.NextSub(&s); err != nil || s.Tag != SubRootStickyClass || s.ID != 7 {
			t.Fatalf("%s: second heap dump's sub-record: %v, %+v", name, err, s)
		}
	}
}

// TestNextElementsNonePending: NextElements for an array whose elements
// are no longer pending (Next went on to the next record) returns none
// and sets s.Pending to 0, so that a loop while s.Pending > 0 ends.
func TestNextElementsNonePending(t *testing.T) {
	data := twoHeapDumps(t, 1000)
	for name, r := range readers(t, data) {
		r.MaxElements = 10
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		var s SubRecord
		if err := r.NextSub(&s); err != nil || s.Pending != 1000 {
			t.Fatalf("%s: %v, pending %d", name, err, s.Pending)
		}
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		err := r.NextElements(&s, 64)
		if len(s.Elements) != 0 || s.Pending != 0 {
			t.Fatalf("%s: NextElements after Next: %d elements, %d pending, %v; want none and none pending", name, len(s.Elements), s.Pending, err)
		}
	}
}
