package hprof

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
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
	w.SegmentSize = 8 << 20 // all in one record, whose end NextSub would otherwise meet
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

// writeArrays writes a heap dump of tag with an instance, object arrays
// of the given lengths (element i of array j: 1000*j+i, null when i%4 is
// 0) each followed by a root, whole by WriteSub or in pieces of 100 by
// BeginObjectArray, with segments of segSize bytes.
func writeArrays(t *testing.T, tag Tag, lens []int, pieces bool, segSize int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.SegmentSize = segSize
	w.BeginHeapDump(tag, 5)
	w.WriteSub(&SubRecord{Tag: SubInstanceDump, ID: 0x10, ClassID: 0x20, Data: make([]byte, 8)})
	for j, n := range lens {
		elems := make([]uint64, n)
		for i := range elems {
			if i%4 != 0 {
				elems[i] = uint64(1000*j + i)
			}
		}
		id := uint64(0x1000 + j)
		if !pieces {
			err = w.WriteSub(&SubRecord{Tag: SubObjectArrayDump, ID: id, StackTrace: 1, ClassID: 0x30, Elements: elems})
		} else if err = w.BeginObjectArray(id, 1, 0x30, n); err == nil {
			for i := 0; i < n && err == nil; i += 100 {
				err = w.ObjectArrayElements(elems[i:min(i+100, n)])
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteSub(&SubRecord{Tag: SubRootStickyClass, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.EndHeapDump(); err != nil {
		t.Fatal(err)
	}
	if tag == TagHeapDumpSegment {
		w.WriteRecord(TagHeapDumpEnd, 5, nil)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriterObjectArrayPieces: an object array written in pieces is the
// file WriteSub writes, byte for byte, whether it fits in a segment (in
// the segment) or not (in a record of its own, written as it comes), in a
// HEAP DUMP or in HEAP DUMP SEGMENTs; and the file reads back.
func TestWriterObjectArrayPieces(t *testing.T) {
	lens := []int{0, 7, 100, 1000, 5000, 3, 20000}
	for _, tag := range []Tag{TagHeapDump, TagHeapDumpSegment} {
		for _, segSize := range []int{4096, 64 << 10, 1 << 20} {
			whole := writeArrays(t, tag, lens, false, segSize)
			pieces := writeArrays(t, tag, lens, true, segSize)
			if !bytes.Equal(whole, pieces) {
				t.Fatalf("%s, segments of %d: %d bytes in pieces, %d whole", tag, segSize, len(pieces), len(whole))
			}
			arrays := 0
			for name, r := range readers(t, pieces) {
				for rec, err := range r.Records() {
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !rec.Tag.IsHeapDump() {
						continue
					}
					for s, err := range r.SubRecords() {
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if s.Tag == SubObjectArrayDump {
							arrays++
						}
					}
				}
			}
			if arrays != 2*len(lens) {
				t.Fatalf("%d arrays read back, want %d", arrays, 2*len(lens))
			}
		}
	}
}

// TestWriterObjectArrayPiecesMisuse: any other call before the array's
// last element, and more elements than it has, are errors.
func TestWriterObjectArrayPiecesMisuse(t *testing.T) {
	for _, n := range []int{10, 10000} { // in the segment, in a record of its own
		for name, misuse := range map[string]func(w *Writer) error{
			"WriteSub": func(w *Writer) error { return w.WriteSub(&SubRecord{Tag: SubRootStickyClass, ID: 1}) },
			"Instance": func(w *Writer) error {
				_, err := w.Instance(1, 0, 2, 8)
				return err
			},
			"ObjectArray": func(w *Writer) error {
				_, err := w.ObjectArray(1, 0, 2, 8)
				return err
			},
			"ZeroArray":        func(w *Writer) error { return w.ZeroArray(1, 0, 8, Int) },
			"BeginObjectArray": func(w *Writer) error { return w.BeginObjectArray(1, 0, 2, 8) },
			"WriteRecord":      func(w *Writer) error { return w.WriteRecord(TagString, 0, make([]byte, 9)) },
			"EndHeapDump":      func(w *Writer) error { return w.EndHeapDump() },
			"Flush":            func(w *Writer) error { return w.Flush() },
			"too many":         func(w *Writer) error { return w.ObjectArrayElements(make([]uint64, n)) },
		} {
			w, err := NewWriter(io.Discard, Header{Version: Version102, IDSize: 4})
			if err != nil {
				t.Fatal(err)
			}
			w.SegmentSize = 4096
			w.BeginHeapDump(TagHeapDumpSegment, 0)
			if err := w.BeginObjectArray(0x100, 0, 0x200, n); err != nil {
				t.Fatal(err)
			}
			if err := w.ObjectArrayElements(make([]uint64, 3)); err != nil {
				t.Fatal(err)
			}
			if err := misuse(w); err == nil || !strings.Contains(err.Error(), "object array") {
				t.Errorf("array of %d, %s: %v, want an error about the object array", n, name, err)
			}
		}
	}
}

// TestWriterObjectArrayPiecesMemory: an array of 2²¹ elements, larger than
// a segment, written in pieces of 4,096 allocates a small bound, not its
// 16 MiB.
func TestWriterObjectArrayPiecesMemory(t *testing.T) {
	const n = 1 << 21
	ids := make([]uint64, 4096)
	w, err := NewWriter(io.Discard, Header{Version: Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.BeginHeapDump(TagHeapDumpSegment, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err = w.BeginObjectArray(0x100, 0, 0x200, n)
	for i := 0; i < n && err == nil; i += len(ids) {
		err = w.ObjectArrayElements(ids)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("allocated %d bytes writing an array of %d elements in pieces, limit 1 MiB", got, n)
	}
}
