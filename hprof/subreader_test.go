package hprof

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// describeSubs reads the sub-records of r's current heap dump record to
// its end and describes each (tag, offset, IDs, lengths), and the error
// that ends them if it is not io.EOF.
func describeSubs(r *Reader) []string {
	var out []string
	var s SubRecord
	for {
		err := r.NextSub(&s)
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, fmt.Sprintf("%s@%d id %x class %x len %d elems %v data %d", s.Tag, s.Offset, s.ID, s.ClassID, s.Length, s.Elements, len(s.Data)))
	}
}

// TestSubRecordReader checks that a Reader of NewSubRecordReader, started
// at a sub-record of a real dump's heap dump record, reads what a Reader
// of the whole file reads from there, and that SkipSubs there makes the
// latter go on from it; and, cut short, the same error.
func TestSubRecordReader(t *testing.T) {
	for _, name := range []string{"sample.hprof.gz", "sample32.hprof.gz"} {
		data := testutil.ReadAll(t, testutil.Fixture(name))
		whole, err := NewReaderBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		for {
			if rec, err = whole.Next(); err != nil {
				t.Fatalf("%s: no heap dump record: %v", name, err)
			}
			if rec.Tag.IsHeapDump() {
				break
			}
		}
		var offsets []int64
		var s SubRecord
		for whole.NextSub(&s) == nil {
			offsets = append(offsets, s.Offset)
		}
		if len(offsets) < 100 {
			t.Fatalf("%s: %d sub-records", name, len(offsets))
		}
		end := rec.Offset + 9 + int64(rec.Length)
		for _, i := range []int{0, 1, len(offsets) / 3, len(offsets) - 1} {
			off := offsets[i]
			all, err := NewReaderBytes(data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := all.Next(); err != nil {
				t.Fatal(err)
			}
			for all.Offset() < rec.Offset+9 {
				all.Next()
			}
			if err := all.SkipSubs(off); err != nil {
				t.Fatal(err)
			}
			want := describeSubs(all)
			if len(want) != len(offsets)-i {
				t.Fatalf("%s: after SkipSubs to %d: %d sub-records, want %d", name, off, len(want), len(offsets)-i)
			}
			sub, err := NewSubRecordReader(whole.Header(), rec, data[off:], off)
			if err != nil {
				t.Fatal(err)
			}
			got := describeSubs(sub)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: from %d: read\n%s\nwant\n%s", name, off, strings.Join(got[:min(3, len(got))], "\n"), strings.Join(want[:min(3, len(want))], "\n"))
			}
			// Cut short, in the middle of the sub-record at off.
			cut, err := NewSubRecordReader(whole.Header(), rec, data[off:off+3], off)
			if err != nil {
				t.Fatal(err)
			}
			got = describeSubs(cut)
			if len(got) != 1 || !strings.Contains(got[0], "truncated") {
				t.Fatalf("%s: cut at %d: %q, want a truncation", name, off+3, got)
			}
		}
		if _, err := NewSubRecordReader(whole.Header(), rec, data[end:], end); err != nil {
			t.Fatalf("at the record's end: %v", err)
		}
		for _, off := range []int64{rec.Offset, end + 1} {
			if _, err := NewSubRecordReader(whole.Header(), rec, data[off:], off); err == nil {
				t.Errorf("%s: a sub-record reader from %d, outside the body %d to %d", name, off, rec.Offset+9, end)
			}
		}
		if err := whole.SkipSubs(end); err == nil {
			t.Errorf("%s: SkipSubs outside a record", name)
		}
	}
}

// TestResetSubRecords: one Reader reset with ResetSubRecords, again and
// again, at sub-records of a real dump's heap dump record, reads what a
// new Reader of NewSubRecordReader reads there, its options back to
// their defaults (set between the resets); a reset that fails leaves it
// reading on as before.
func TestResetSubRecords(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample32.hprof.gz"))
	whole, err := NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	for !rec.Tag.IsHeapDump() {
		if rec, err = whole.Next(); err != nil {
			t.Fatalf("no heap dump record: %v", err)
		}
	}
	var offsets []int64
	var s SubRecord
	for whole.NextSub(&s) == nil {
		offsets = append(offsets, s.Offset)
	}
	var r Reader
	for k, i := range []int{len(offsets) / 2, 0, len(offsets) - 1, 1, len(offsets) / 3} {
		off := offsets[i]
		fresh, err := NewSubRecordReader(whole.Header(), rec, data[off:], off)
		if err != nil {
			t.Fatal(err)
		}
		want := describeSubs(fresh)
		if err := r.ResetSubRecords(whole.Header(), rec, data[off:], off); err != nil {
			t.Fatal(err)
		}
		if k == 2 {
			if err := r.ResetSubRecords(whole.Header(), rec, data[rec.Offset:], rec.Offset); err == nil {
				t.Fatal("a reset outside the record's body succeeded")
			}
		}
		got := describeSubs(&r)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("reset %d, from %d: read %d sub-records, a new Reader %d, first\n%s\nwant\n%s", k, off, len(got), len(want), strings.Join(got[:min(2, len(got))], "\n"), strings.Join(want[:min(2, len(want))], "\n"))
		}
		r.SkipElements, r.MaxElements = true, 1 // gone at the next reset
	}
}

// TestRecordHeader: DecodeRecordHeader decodes each record of a real dump
// as the Reader does, whose next record starts at End, its body at Body.
func TestRecordHeader(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	r, err := NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	next, n := r.Offset(), 0
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Offset != next {
			t.Fatalf("record %d at %d, the one before ends at %d", n, rec.Offset, next)
		}
		if got := DecodeRecordHeader(data[rec.Offset:], rec.Offset); got != rec {
			t.Fatalf("record %d: decoded %+v, read %+v", n, got, rec)
		}
		if rec.Body() != rec.Offset+RecordHeaderSize {
			t.Fatalf("record %d: body at %d", n, rec.Body())
		}
		next, n = rec.End(), n+1
	}
	if n < 100 || next != int64(len(data)) {
		t.Fatalf("%d records, the last ending at %d of %d bytes", n, next, len(data))
	}
}
