package bmd_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// arrayElems returns n elements for an object array written as object
// self-ish: nulls, references back and forward.
func arrayElems(n int) []uint64 {
	e := make([]uint64, n)
	for i := range e {
		if i%5 != 0 {
			e[i] = uint64(2 + i%3000)
		}
	}
	return e
}

// writeArrays writes a primitive array, an object array of elems whose
// class is object 2, and another primitive array; in pieces of piece
// elements by BeginObjectArray and ObjectArrayElements, or whole by
// ObjectArray when piece is 0.
func writeArrays(t *testing.T, elems []uint64, piece int, noRuns bool) ([]byte, *bmd.Writer) {
	t.Helper()
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4, Classes: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.NoObjectRuns = noRuns
	if _, err := w.PrimitiveArray(bmd.Int, 300, false); err != nil {
		t.Fatal(err)
	}
	if piece == 0 {
		if _, err := w.ObjectArray(2, elems); err != nil {
			t.Fatal(err)
		}
	} else {
		id, err := w.BeginObjectArray(2, uint64(len(elems)))
		if err != nil || id != 3 {
			t.Fatalf("BeginObjectArray: %d, %v; want ID 3", id, err)
		}
		for rest := elems; ; rest = rest[min(piece, len(rest)):] {
			if err := w.ObjectArrayElements(rest[:min(piece, len(rest))]); err != nil {
				t.Fatal(err)
			}
			if len(rest) == 0 {
				break // a last, empty piece: allowed
			}
		}
	}
	if _, err := w.PrimitiveArray(bmd.Byte, 7, false); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), w
}

// objectRecords reads the object records of a file.
func objectRecords(t *testing.T, file []byte) []bmd.Record {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var recs []bmd.Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case bmd.KindObjectArray, bmd.KindPrimitiveArray:
			rec.Elements = slices.Clone(rec.Elements)
			recs = append(recs, *rec)
		}
	}
}

// TestObjectArrayPieces: an object array written in pieces is the record
// ObjectArray writes: byte for byte without runs of objects, the same
// records read back with them, and the same counts and bytes per kind.
func TestObjectArrayPieces(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 100_000} {
		elems := arrayElems(n)
		for _, piece := range []int{1, 7, 4096, n + 1} {
			whole, ww := writeArrays(t, elems, 0, true)
			pieces, wp := writeArrays(t, elems, piece, true)
			if !bytes.Equal(whole, pieces) {
				t.Errorf("%d elements in pieces of %d, without runs: %d bytes, whole %d bytes", n, piece, len(pieces), len(whole))
			}
			if ww.Count != wp.Count || ww.Bytes != wp.Bytes {
				t.Errorf("%d elements in pieces of %d: counts %v and bytes %v, whole %v and %v", n, piece, wp.Count, wp.Bytes, ww.Count, ww.Bytes)
			}
			whole, _ = writeArrays(t, elems, 0, false)
			pieces, _ = writeArrays(t, elems, piece, false)
			a, b := objectRecords(t, whole), objectRecords(t, pieces)
			if len(a) != 3 || len(b) != 3 {
				t.Fatalf("%d and %d object records, want 3", len(a), len(b))
			}
			for i := range a {
				if a[i].ID != b[i].ID || a[i].Class != b[i].Class || a[i].Length != b[i].Length || !slices.Equal(a[i].Elements, b[i].Elements) {
					t.Fatalf("%d elements in pieces of %d: record %d read %+v, whole %+v", n, piece, i, b[i], a[i])
				}
			}
			if b[1].Class != 2 || !slices.Equal(b[1].Elements, elems) && n > 0 {
				t.Fatalf("the array read back as class %d with %d elements", b[1].Class, len(b[1].Elements))
			}
		}
	}
}

// TestObjectArrayPiecesMisuse: another record before the array's last
// element, or more elements than it has, fail the Writer.
func TestObjectArrayPiecesMisuse(t *testing.T) {
	for name, misuse := range map[string]func(w *bmd.Writer) error{
		"record before the end": func(w *bmd.Writer) error {
			_, err := w.PrimitiveArray(bmd.Int, 1, false)
			return err
		},
		"non-object record before the end": func(w *bmd.Writer) error { return w.HeapDumpEnd() },
		"another array before the end": func(w *bmd.Writer) error {
			_, err := w.BeginObjectArray(0, 1)
			return err
		},
		"root before the end": func(w *bmd.Writer) error { return w.Root(0x05, 2, 0, 0, 0, 0) }, // 0x05: sticky class
		"hashed string before the end": func(w *bmd.Writer) error {
			_, err := w.HashedString(3, 0x1234)
			return err
		},
		"too many elements":    func(w *bmd.Writer) error { return w.ObjectArrayElements(make([]uint64, 10)) },
		"close before the end": func(w *bmd.Writer) error { return w.Close() },
	} {
		w, err := bmd.NewWriter(io.Discard, &bmd.Metadata{IDSize: 4, Classes: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.BeginObjectArray(0, 5); err != nil {
			t.Fatal(err)
		}
		if err := w.ObjectArrayElements(make([]uint64, 2)); err != nil {
			t.Fatal(err)
		}
		if err := misuse(w); err == nil || !strings.Contains(err.Error(), "object array") {
			t.Errorf("%s: %v, want an error about the object array", name, err)
		}
	}
}

// TestObjectArrayPiecesMemory: an array of 2²¹ elements (about 6 MB of
// BMD here) written in pieces of 4,096 allocates a small bound, not
// the size of its record, as ObjectArray does.
func TestObjectArrayPiecesMemory(t *testing.T) {
	const n = 1 << 21
	elems := arrayElems(n)
	alloc := func(piece int) uint64 {
		w, err := bmd.NewWriter(io.Discard, &bmd.Metadata{IDSize: 8, Classes: 1})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if piece == 0 {
			_, err = w.ObjectArray(0, elems)
		} else {
			_, err = w.BeginObjectArray(0, n)
			for i := 0; i < n && err == nil; i += piece {
				err = w.ObjectArrayElements(elems[i:min(i+piece, n)])
			}
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	whole, pieces := alloc(0), alloc(4096)
	t.Logf("allocated %d bytes whole, %d in pieces", whole, pieces)
	if limit := uint64(2 << 20); pieces > limit {
		t.Errorf("allocated %d bytes writing an array of %d elements in pieces, limit %d (whole: %d)", pieces, n, limit, whole)
	}
}

// arraysFile writes a file of object arrays of the given lengths (element
// i of array j: (i+j)%4000, 0 for null), each followed by a primitive
// array of j elements; whole, or in pieces of 1,000 by BeginObjectArray.
func arraysFile(t *testing.T, lens []int, pieces bool) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 8, Classes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for j, n := range lens {
		elems := make([]uint64, n)
		for i := range elems {
			elems[i] = uint64((i + j) % 4000)
		}
		if !pieces {
			_, err = w.ObjectArray(0, elems)
		} else if _, err = w.BeginObjectArray(0, uint64(n)); err == nil {
			for i := 0; i < n && err == nil; i += 1000 {
				err = w.ObjectArrayElements(elems[i:min(i+1000, n)])
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.PrimitiveArray(bmd.Int, uint32(j), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestReaderNextElements: with MaxElements, an OBJECT ARRAY longer than
// it comes with no elements and all pending, NextElements decodes them in
// pieces of at most the size asked, and Next skips those not decoded,
// whether none, some or all were, in a file written whole (in runs of
// objects) or in pieces; shorter arrays come whole.
func TestReaderNextElements(t *testing.T) {
	lens := []int{5, 1000, 1001, 70_000, 0, 200_000, 3}
	for _, pieces := range []bool{false, true} {
		file := arraysFile(t, lens, pieces)
		for _, read := range []func(n int) int{
			func(n int) int { return n },
			func(n int) int { return 0 },
			func(n int) int { return n/2 + 1 },
		} {
			r, err := bmd.NewReader(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			r.MaxElements = 1000
			for j, n := range lens {
				var rec *bmd.Record
				for rec == nil || rec.Kind != bmd.KindObjectArray {
					if rec, err = r.Next(); err != nil {
						t.Fatalf("before array %d: %v", j, err)
					}
				}
				want := make([]uint64, n)
				for i := range want {
					want[i] = uint64((i + j) % 4000)
				}
				if int(rec.Count) != n {
					t.Fatalf("array %d: count %d, want %d", j, rec.Count, n)
				}
				if n <= 1000 {
					if rec.Pending != 0 || !slices.Equal(rec.Elements, want) {
						t.Fatalf("array %d of %d elements: pending %d, %d elements", j, n, rec.Pending, len(rec.Elements))
					}
				} else {
					if rec.Pending != uint32(n) || len(rec.Elements) != 0 {
						t.Fatalf("array %d of %d elements: pending %d, %d elements, want all pending", j, n, rec.Pending, len(rec.Elements))
					}
					var got []uint64
					for k := read(n); len(got) < k; {
						if err := r.NextElements(rec, min(777, k-len(got))); err != nil {
							t.Fatal(err)
						}
						got = append(got, rec.Elements...)
						if len(rec.Elements) == 0 || int(rec.Pending) != n-len(got) {
							t.Fatalf("array %d: a piece of %d, pending %d after %d of %d", j, len(rec.Elements), rec.Pending, len(got), n)
						}
					}
					if !slices.Equal(got, want[:len(got)]) {
						t.Fatalf("array %d: elements differ", j)
					}
				}
				rec, err := r.Next()
				if err != nil || rec.Kind != bmd.KindPrimitiveArray || rec.Count != uint32(j) {
					t.Fatalf("after array %d: %v, %+v", j, err, rec)
				}
			}
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil || rec.Kind != bmd.KindEnd && rec.Kind != bmd.KindObjects {
					t.Fatalf("after the arrays: %v, %+v", err, rec)
				}
			}
		}
	}
}

// TestReaderNextElementsDamaged: a file cut, or damaged, within an array
// whose elements come in pieces gives NextElements, or the Next that
// skips them, a *FormatError.
func TestReaderNextElementsDamaged(t *testing.T) {
	file := arraysFile(t, []int{200_000}, true)
	cut := file[:len(file)/2]
	damaged := slices.Clone(file)
	damaged[len(damaged)/2] ^= 0x55
	for name, data := range map[string][]byte{"cut": cut, "damaged": damaged} {
		for _, readAll := range []bool{true, false} {
			r, err := bmd.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			r.MaxElements = 1000
			rec, err := r.Next()
			for err == nil && rec.Kind != bmd.KindObjectArray {
				rec, err = r.Next()
			}
			if err != nil {
				t.Fatal(err)
			}
			for readAll && err == nil && rec.Pending > 0 {
				err = r.NextElements(rec, 5000)
			}
			if err == nil {
				_, err = r.Next()
			}
			var fe *bmd.FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%s, reading all %v: %v, want a FormatError", name, readAll, err)
			}
		}
	}
}

// writeV1Arrays writes a version 1 file of a primitive array, an OBJECT
// ARRAY of elems and another primitive array; the object array in pieces
// of piece elements by BeginObjectArray, or whole when piece is 0.
func writeV1Arrays(t *testing.T, elems []uint32, piece int) ([]byte, *bmd.V1Writer) {
	t.Helper()
	var out bytes.Buffer
	w, err := bmd.NewV1Writer(&out, []byte("JAVA PROFILE 1.0.3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.PrimitiveArray(10, bmd.Int, 300); err != nil {
		t.Fatal(err)
	}
	if piece == 0 {
		err = w.ObjectArray(11, 5, elems)
	} else if err = w.BeginObjectArray(11, 5, len(elems)); err == nil {
		for i := 0; i < len(elems) && err == nil; i += piece {
			err = w.ObjectArrayElements(elems[i:min(i+piece, len(elems))])
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.PrimitiveArray(12, bmd.Byte, 7); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), w
}

// TestV1ObjectArrayPieces: a version 1 OBJECT ARRAY written in pieces is
// the record ObjectArray writes, byte for byte, with the same counts and
// bytes; another record before its last element, or more elements than
// it has, fail the writer.
func TestV1ObjectArrayPieces(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 100_000} {
		elems := make([]uint32, n)
		for i := range elems {
			elems[i] = uint32(i % 777)
		}
		whole, ww := writeV1Arrays(t, elems, 0)
		for _, piece := range []int{1, 7, 4096} {
			pieces, wp := writeV1Arrays(t, elems, piece)
			if !bytes.Equal(whole, pieces) || ww.Count != wp.Count || ww.Bytes != wp.Bytes {
				t.Errorf("%d elements in pieces of %d: %d bytes, counts %v, bytes %v; whole %d bytes, %v, %v",
					n, piece, len(pieces), wp.Count, wp.Bytes, len(whole), ww.Count, ww.Bytes)
			}
		}
	}
	for name, misuse := range map[string]func(w *bmd.V1Writer) error{
		"record before the end": func(w *bmd.V1Writer) error { return w.PrimitiveArray(3, bmd.Int, 1) },
		"array before the end":  func(w *bmd.V1Writer) error { return w.BeginObjectArray(4, 5, 1) },
		"too many elements":     func(w *bmd.V1Writer) error { return w.ObjectArrayElements(make([]uint32, 10)) },
	} {
		w, err := bmd.NewV1Writer(io.Discard, []byte("JAVA PROFILE 1.0.3"))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.BeginObjectArray(1, 2, 5); err != nil {
			t.Fatal(err)
		}
		if err := w.ObjectArrayElements(make([]uint32, 2)); err != nil {
			t.Fatal(err)
		}
		if err := misuse(w); err == nil || !strings.Contains(err.Error(), "OBJECT ARRAY") {
			t.Errorf("%s: %v, want an error about the OBJECT ARRAY", name, err)
		}
	}
}

// TestReaderSkipPendingBadVarint: Next, called with an array's elements
// still pending, skips them, and an element that is not a varint (eleven
// bytes of continuation, in a block whose checksum matches) is reported
// there, as the array's, not taken for the start of the next record.
func TestReaderSkipPendingBadVarint(t *testing.T) {
	whole := arraysFile(t, []int{200_000}, true)
	f, err := rtUnframe(whole)
	if err != nil {
		t.Fatal(err)
	}
	stream := slices.Clone(f.stream)
	mid := len(stream) / 2
	for i := range 11 {
		stream[mid+i] = 0xFF
	}
	file := rtFrame(whole[:f.header], stream, bmd.BlockSize)
	for _, readSome := range []bool{false, true} {
		r, err := bmd.NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		r.MaxElements = 1000
		rec, err := r.Next()
		for err == nil && rec.Kind != bmd.KindObjectArray {
			rec, err = r.Next()
		}
		if err != nil || rec.Pending != 200_000 {
			t.Fatalf("the array: %v, %+v", err, rec)
		}
		if readSome {
			if err := r.NextElements(rec, 1000); err != nil {
				t.Fatal(err)
			}
		}
		at := rec.Offset
		_, err = r.Next()
		rtCheckErr(t, err, "varint", "OBJECT ARRAY", at, nil)
	}
}
