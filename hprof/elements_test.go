package hprof

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// arraysDump writes a dump with IDs of idSize bytes whose heap dump holds,
// in order, an object array of each length in lens (element i of array j
// is 1000*j+i+1), each followed by a ROOT STICKY CLASS of ID 7, then a
// STRING record.
func arraysDump(t *testing.T, idSize int, lens []int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version102, IDSize: idSize})
	if err != nil {
		t.Fatal(err)
	}
	w.BeginHeapDump(TagHeapDumpSegment, 0)
	for j, n := range lens {
		elems := make([]uint64, n)
		for i := range elems {
			elems[i] = uint64(1000*j + i + 1)
		}
		w.WriteSub(&SubRecord{Tag: SubObjectArrayDump, ID: uint64(0x100 + j), ClassID: 0x50, StackTrace: 3, Elements: elems})
		w.WriteSub(&SubRecord{Tag: SubRootStickyClass, ID: 7})
	}
	w.EndHeapDump()
	w.WriteRecord(TagString, 0, w.Encoder().AppendString(nil, 9, []byte("after")))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readers returns a Reader of data read in place and one reading it a
// buffer at a time.
func readers(t *testing.T, data []byte) map[string]*Reader {
	t.Helper()
	inPlace, err := NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Reader{"in place": inPlace, "streamed": streamed}
}

// TestNextElements: with MaxElements, an object array longer than it
// comes with no elements and all of them pending, NextElements returns
// them in pieces of at most the size asked, and the next NextSub or Next
// skips those not read, whether none, some or all were; shorter arrays
// come whole, as without MaxElements.
func TestNextElements(t *testing.T) {
	lens := []int{5, 100, 101, 1000, 300_000, 0, 7}
	for _, idSize := range []int{4, 8} {
		data := arraysDump(t, idSize, lens)
		// read: how many elements of array j to read, in pieces of piece.
		for _, read := range []func(j, n int) int{
			func(j, n int) int { return n },     // all
			func(j, n int) int { return 0 },     // none
			func(j, n int) int { return n / 3 }, // some
		} {
			for name, r := range readers(t, data) {
				r.MaxElements = 100
				rec, err := r.Next()
				if err != nil || !rec.Tag.IsHeapDump() {
					t.Fatalf("%s: first record %v, %v", name, rec.Tag, err)
				}
				var s SubRecord
				for j, n := range lens {
					if err := r.NextSub(&s); err != nil {
						t.Fatalf("%s, ID size %d: array %d: %v", name, idSize, j, err)
					}
					if s.Tag != SubObjectArrayDump || s.ID != uint64(0x100+j) || s.ClassID != 0x50 || s.StackTrace != 3 || s.Length != uint32(n) {
						t.Fatalf("%s: array %d read as %+v", name, j, s)
					}
					want := make([]uint64, n)
					for i := range want {
						want[i] = uint64(1000*j + i + 1)
					}
					if n <= 100 {
						if s.Pending != 0 || !slices.Equal(s.Elements, want) {
							t.Fatalf("%s: array %d of %d elements: pending %d, %d elements", name, j, n, s.Pending, len(s.Elements))
						}
					} else {
						if s.Pending != uint32(n) || len(s.Elements) != 0 {
							t.Fatalf("%s: array %d of %d elements: pending %d, %d elements, want all pending", name, j, n, s.Pending, len(s.Elements))
						}
						var got []uint64
						for want := read(j, n); len(got) < want; {
							if err := r.NextElements(&s, min(64, want-len(got))); err != nil {
								t.Fatal(err)
							}
							if len(s.Elements) == 0 || len(s.Elements) > 64 {
								t.Fatalf("%s: a piece of %d elements, asked at most 64", name, len(s.Elements))
							}
							got = append(got, s.Elements...)
							if s.Pending != uint32(n-len(got)) {
								t.Fatalf("%s: pending %d after %d of %d", name, s.Pending, len(got), n)
							}
						}
						if !slices.Equal(got, want[:len(got)]) {
							t.Fatalf("%s: array %d: elements differ", name, j)
						}
					}
					if err := r.NextSub(&s); err != nil || s.Tag != SubRootStickyClass || s.ID != 7 {
						t.Fatalf("%s: after array %d: %v, %+v", name, j, err, s)
					}
				}
				if err := r.NextSub(&s); err != io.EOF {
					t.Fatalf("%s: end of the heap dump: %v", name, err)
				}
				if rec, err := r.Next(); err != nil || rec.Tag != TagString {
					t.Fatalf("%s: after the heap dump: %v, %v", name, rec.Tag, err)
				}
			}
		}
	}
}

// TestNextElementsSkippedByNext: Next skips the heap dump's rest, pending
// elements included.
func TestNextElementsSkippedByNext(t *testing.T) {
	data := arraysDump(t, 8, []int{1000})
	for name, r := range readers(t, data) {
		r.MaxElements = 10
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		var s SubRecord
		if err := r.NextSub(&s); err != nil || s.Pending != 1000 {
			t.Fatalf("%s: %v, pending %d", name, err, s.Pending)
		}
		if err := r.NextElements(&s, 10); err != nil {
			t.Fatal(err)
		}
		if rec, err := r.Next(); err != nil || rec.Tag != TagString {
			t.Fatalf("%s: after the heap dump: %v, %v", name, rec.Tag, err)
		}
	}
}

// TestNextElementsTruncated: an array cut short gives NextElements, or
// the NextSub that skips its elements, a *FormatError at the array saying
// it is truncated.
func TestNextElementsTruncated(t *testing.T) {
	data := arraysDump(t, 4, []int{1000})
	// The array's record: heap dump header (9) after the file header, sub
	// tag, 16 bytes of fixed part, then the elements; cut in the middle.
	cut := data[:len(data)-2000]
	for _, readAll := range []bool{true, false} {
		for name, r := range readers(t, cut) {
			r.MaxElements = 10
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
			var s SubRecord
			if err := r.NextSub(&s); err != nil || s.Pending != 1000 {
				t.Fatalf("%s: %v, pending %d", name, err, s.Pending)
			}
			var err error
			for readAll && err == nil && s.Pending > 0 {
				err = r.NextElements(&s, 64)
			}
			if err == nil {
				err = r.NextSub(&s)
			}
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%s, reading all %v: %v, want a FormatError saying truncated", name, readAll, err)
			}
		}
	}
}
