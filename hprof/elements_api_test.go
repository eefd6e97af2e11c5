package hprof

import (
	"bytes"
	"encoding/binary"
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

// TestNextElementsTruncatedNeeds: an array cut short, read in pieces,
// says it needs the bytes it would say read whole (the rest of the array,
// not of the piece).
func TestNextElementsTruncatedNeeds(t *testing.T) {
	data := arraysDump(t, 4, []int{1000})
	cut := data[:len(data)-3000] // 250 elements of 1000 left, less 30 bytes after
	for name := range readers(t, cut) {
		var msgs [2]string
		for i, max := range []int{0, 10} {
			r := readers(t, cut)[name]
			r.MaxElements = max
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
			var s SubRecord
			err := r.NextSub(&s)
			for err == nil && s.Pending > 0 {
				err = r.NextElements(&s, 64)
			}
			if err == nil {
				t.Fatalf("%s, MaxElements %d: no error", name, max)
			}
			msgs[i] = err.Error()
		}
		if msgs[0] != msgs[1] {
			t.Errorf("%s: read in pieces %q, whole %q", name, msgs[1], msgs[0])
		}
	}
}

// TestPendingElementsSplitAndSkim: SplitHeapDump skips the elements left
// pending, and SkimObjects skims none while they are (here their bytes
// read as INSTANCE DUMPs).
func TestPendingElementsSplitAndSkim(t *testing.T) {
	var elems []byte
	for len(elems) < 4000-17 {
		elems = append(elems, byte(SubInstanceDump), 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0x50, 0, 0, 0, 0)
	}
	elems = append(elems, make([]byte, 4000-len(elems))...)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version102, IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, 1000)
	for i := range ids {
		ids[i] = uint64(binary.BigEndian.Uint32(elems[4*i:]))
	}
	w.BeginHeapDump(TagHeapDumpSegment, 0)
	w.WriteSub(&SubRecord{Tag: SubObjectArrayDump, ID: 0x100, ClassID: 0x50, Elements: ids})
	w.WriteSub(&SubRecord{Tag: SubRootStickyClass, ID: 7})
	w.WriteSub(&SubRecord{Tag: SubObjectArrayDump, ID: 0x101, ClassID: 0x50, Elements: []uint64{1, 2, 3}})
	w.EndHeapDump()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for name, r := range readers(t, buf.Bytes()) {
		r.MaxElements = 10
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		var s SubRecord
		if err := r.NextSub(&s); err != nil || s.Pending != 1000 {
			t.Fatalf("%s: %v, pending %d", name, err, s.Pending)
		}
		heads := make([]ObjectHead, 8)
		if k := r.SkimObjects(heads, 1<<40); k != 0 {
			t.Fatalf("%s: SkimObjects skimmed %d records with elements pending", name, k)
		}
		var sub Reader
		if err := r.SplitHeapDump(&sub); err != nil {
			t.Fatal(err)
		}
		if err := sub.NextSub(&s); err != nil || s.Tag != SubRootStickyClass || s.ID != 7 {
			t.Fatalf("%s: after the split: %v, %+v", name, err, s)
		}
		if err := sub.NextSub(&s); err != nil || s.Tag != SubObjectArrayDump || s.Length != 3 {
			t.Fatalf("%s: after the split: %v, %+v", name, err, s)
		}
	}
}
