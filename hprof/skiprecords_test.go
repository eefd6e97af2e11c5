package hprof

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
)

// segmentsDump returns a dump of 4-byte IDs: a STRING, HEAP DUMP SEGMENTs
// of the given body lengths, and a HEAP DUMP END, with each record's
// offset and end. The bodies hold no sub-records, only bytes Next skips.
func segmentsDump(lengths ...int) (data []byte, recs []Record) {
	data = append([]byte(Version103), 0)
	data = binary.BigEndian.AppendUint32(data, 4)
	data = binary.BigEndian.AppendUint64(data, 0)
	add := func(tag Tag, n int) {
		recs = append(recs, Record{Tag: tag, Offset: int64(len(data)), Length: uint32(n)})
		data = append(data, byte(tag), 0, 0, 0, 0)
		data = binary.BigEndian.AppendUint32(data, uint32(n))
		data = append(data, bytes.Repeat([]byte{byte(len(recs))}, n)...)
	}
	add(TagString, 8)
	for _, n := range lengths {
		add(TagHeapDumpSegment, n)
	}
	add(TagHeapDumpEnd, 0)
	return data, recs
}

// TestSkipRecords: after SkipRecords, Next reads on from the offset given,
// and never reads the records skipped (their bytes here are garbage, whose
// headers would fail it), and SegmentsUnended answers for the last of
// them as reading them would; it fails outside a record and for an end
// before the current record's.
func TestSkipRecords(t *testing.T) {
	data, recs := segmentsDump(100, 30000, 4096, 70000, 50)
	// Records 2 to 4 (three segments) become garbage: a header of tag
	// 0xff and a length past the end of the file.
	for i := recs[2].Offset; i < recs[4].End(); i++ {
		data[i] = 0xff
	}
	for _, size := range []int{MinReadBuffer, 1 << 20} {
		r, err := NewReaderSize(bytes.NewReader(data), size)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.SkipRecords(recs[1].Offset, TagString); err == nil || !strings.Contains(err.Error(), "outside a record") {
			t.Fatalf("SkipRecords before a record: error %v", err)
		}
		for _, want := range recs[:2] {
			if rec, err := r.Next(); err != nil || rec != want {
				t.Fatalf("Next: %+v, %v, want %+v", rec, err, want)
			}
		}
		if err := r.SkipRecords(recs[1].End()-1, TagHeapDumpSegment); err == nil || !strings.Contains(err.Error(), "before the end") {
			t.Fatalf("SkipRecords into the current record: error %v", err)
		}
		if err := r.SkipRecords(recs[4].End(), TagHeapDumpSegment); err != nil {
			t.Fatal(err)
		}
		for i, want := range recs[5:] {
			rec, err := r.Next()
			if err != nil || rec != want {
				t.Fatalf("Next after SkipRecords: %+v, %v, want %+v", rec, err, want)
			}
			if unended := i == 0; r.SegmentsUnended() != unended {
				t.Fatalf("after %s: SegmentsUnended %v", rec.Tag, !unended)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("Next at the end: %v", err)
		}
	}

	// With a read ahead (a source that other readers read too), Next
	// seeks past the records skipped that it has not buffered, however
	// few their bytes (bufin.Reader.SkipPast), and reads 4 KiB after
	// them: here 639 bytes past its buffer of 64 KiB, which Skip would
	// read, with all that follows (5,716 bytes).
	data, recs = segmentsDump(100, 60000, 6000, 5000, 50)
	src := &countingReadSeeker{Reader: bytes.NewReader(data)}
	r, err := NewReaderSize(src, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadAhead(64 << 10)
	for range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if src.read != 64<<10 || recs[3].End() != 64<<10+639 {
		t.Fatalf("%d bytes read, the third segment ending at %d: the dump is not as this test reckons", src.read, recs[3].End())
	}
	if err := r.SkipRecords(recs[3].End(), TagHeapDumpSegment); err != nil {
		t.Fatal(err)
	}
	src.read = 0
	if rec, err := r.Next(); err != nil || rec != recs[4] || src.read > 4096 {
		t.Errorf("Next after SkipRecords past the buffer: %+v, %v, %d bytes read; want %+v and 4 KiB at most", rec, err, src.read, recs[4])
	}

	// The last record skipped decides SegmentsUnended: a HEAP DUMP END
	// closes the segments.
	data, recs = segmentsDump(10, 20)
	r, err = NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	r.Next()
	if _, err := r.Next(); err != nil || !r.SegmentsUnended() {
		t.Fatalf("at the first segment: %v, SegmentsUnended %v", err, r.SegmentsUnended())
	}
	if err := r.SkipRecords(recs[3].End(), TagHeapDumpEnd); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != io.EOF || r.SegmentsUnended() {
		t.Fatalf("after skipping to the end: %v, SegmentsUnended %v", err, r.SegmentsUnended())
	}
}
