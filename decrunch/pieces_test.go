package decrunch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// longArraysDump writes an HPROF dump with IDs of idSize bytes: 100
// instances, then object arrays of the given lengths whose elements are
// the instances, nulls and IDs of no object, each with a root.
func longArraysDump(t *testing.T, idSize int, lens []int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: idSize})
	if err != nil {
		t.Fatal(err)
	}
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("Node")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 2, []byte("[Ljava/lang/Object;")))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x1000, Name: 1}))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: 0x2000, Name: 2}))
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x1000, Class: hprof.ClassDump{ID: 0x1000}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x2000, Class: hprof.ClassDump{ID: 0x2000}})
	node := func(i int) uint64 { return uint64(0x10000 + 16*i) }
	for i := range 100 {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: node(i), ClassID: 0x1000})
	}
	for j, n := range lens {
		elems := make([]uint64, n)
		for i := range elems {
			switch i % 5 {
			case 0: // null
			case 3:
				elems[i] = 0x7770000 + uint64(i%3)*16 // no object
			default:
				elems[i] = node((i + j) % 100)
			}
		}
		id := uint64(0x200000 + 16*j)
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: id, ClassID: 0x2000, Elements: elems})
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: id})
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decrunchWhole decrunches data with the second pass run way w, with object
// arrays held whole (as before they were read in pieces) or not.
func decrunchWhole(data []byte, opt Options, w way, whole bool) (*Stats, []byte, error) {
	if whole {
		defer func(was int) { maxArrayWhole = was }(maxArrayWhole)
		maxArrayWhole = 0
	}
	return decrunchWay(data, opt, w)
}

// readsWhole checks that an HPROF file reads to its end, every sub-record
// of its heap dumps included, and returns its object arrays' lengths.
func readsWhole(t *testing.T, file []byte) []uint32 {
	t.Helper()
	var lens []uint32
	err := heapstat.Walk(file, func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		if s != nil && s.Tag == hprof.SubObjectArrayDump {
			lens = append(lens, s.Length)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the HPROF does not read: %v", err)
	}
	return lens
}

// TestObjectArrayInPieces: an object array of more than arrayPiece
// elements, read and written in pieces, gives the HPROF file, byte for
// byte, and the Stats it gave held whole, on one goroutine or two, with
// 4- and 8-byte IDs, in a BMD file that has it in a run of objects
// (NoObjectRuns false in an older writer: here, crunched with its own
// arrays in pieces, it has none) and one that has it outside.
func TestObjectArrayInPieces(t *testing.T) {
	lens := []int{10, arrayPiece, arrayPiece + 1, 3*arrayPiece + 17, 0, 200_000}
	for _, idSize := range []int{4, 8} {
		file := crunchBytes(t, longArraysDump(t, idSize, lens), crunch.Options{})
		for _, pass := range allWays {
			wantSt, want, err := decrunchWhole(file, Options{}, pass, true)
			if err != nil {
				t.Fatal(err)
			}
			st, got, err := decrunchWhole(file, Options{}, pass, false)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("ID size %d, way %v: %d bytes of HPROF in pieces, %d held whole", idSize, pass, len(got), len(want))
			}
			if st.Objects != wantSt.Objects || st.OutBytes != wantSt.OutBytes {
				t.Fatalf("ID size %d: Stats %d objects, %d bytes; held whole %d, %d", idSize, st.Objects, st.OutBytes, wantSt.Objects, wantSt.OutBytes)
			}
			n := readsWhole(t, got)
			if len(n) != len(lens) || n[3] != uint32(lens[3]) {
				t.Fatalf("ID size %d: arrays of %v read back", idSize, n)
			}
		}
		sameSecondPassWays(t, file, Options{})
	}
}

// TestObjectArrayInPiecesDamaged: a BMD file cut, or damaged, within an
// array whose elements come in pieces is an error; with Salvage, its
// HPROF reads to the end, the array's missing elements written as nulls,
// on one goroutine as on two.
func TestObjectArrayInPiecesDamaged(t *testing.T) {
	file := crunchBytes(t, longArraysDump(t, 4, []int{10, 500_000, 7}), crunch.Options{})
	cut := file[:len(file)/2]
	damaged := bytes.Clone(file)
	damaged[len(damaged)/2] ^= 0x5a
	for name, data := range map[string][]byte{"cut": cut, "damaged": damaged} {
		for _, pass := range allWays {
			if _, _, err := decrunchWay(data, Options{}, pass); err == nil {
				t.Errorf("%s: no error", name)
			}
			st, out, err := decrunchWay(data, Options{Salvage: true}, pass)
			if err != nil || st.Salvaged == nil {
				t.Fatalf("%s, salvaged: %v, %v", name, err, st.Salvaged)
			}
			if n := readsWhole(t, out); len(n) != 2 || n[1] != 500_000 {
				t.Fatalf("%s, salvaged: arrays of %v read back, want 10 and 500,000", name, n)
			}
		}
		sameSecondPassWays(t, data, Options{Salvage: true})
	}
}

// TestObjectArrayInPiecesIDOverflow: an element too large for the file's
// 4-byte IDs, in an array written in pieces, is an *IDOverflowError;
// with Salvage the HPROF still reads to the end.
func TestObjectArrayInPiecesIDOverflow(t *testing.T) {
	var b bytes.Buffer
	w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	w.HeapDump(true)
	elems := make([]uint64, 300_000)
	for i := range elems {
		elems[i] = uint64(1 + i%2)
	}
	elems[200_000] = 1 << 40
	if _, err := w.ObjectArray(0, elems); err != nil {
		t.Fatal(err)
	}
	w.HeapDumpEnd()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pass := range allWays {
		_, _, err := decrunchWay(b.Bytes(), Options{}, pass)
		var oe *IDOverflowError
		if !errors.As(err, &oe) {
			t.Errorf("way %v: %v, want an IDOverflowError", pass, err)
		}
		_, out, err := decrunchWay(b.Bytes(), Options{Salvage: true}, pass)
		if err != nil {
			t.Fatal(err)
		}
		if n := readsWhole(t, out); len(n) != 1 || n[0] != 300_000 {
			t.Fatalf("salvaged: arrays of %v read back", n)
		}
	}
	sameSecondPassWays(t, b.Bytes(), Options{Salvage: true})
}

// TestBigObjectArrayDecrunchMemory: decrunching a BMD file whose one
// object array has 2²² elements allocates no more than one whose array
// has 2²¹, but for 2 MiB, on one goroutine or two: its elements are read,
// converted and written arrayPiece at a time. Held whole, the array of
// 2²² elements took 57 MB more on one goroutine, 74 MB more on two.
func TestBigObjectArrayDecrunchMemory(t *testing.T) {
	files := map[int][]byte{}
	for _, n := range []int{1 << 21, 1 << 22} {
		files[n] = crunchBytes(t, longArraysDump(t, 8, []int{n}), crunch.Options{})
	}
	for _, pass := range allWays {
		var got [2]uint64
		for i, n := range []int{1 << 21, 1 << 22} {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			setWay(t, pass)
			if _, err := Decrunch(bytes.NewReader(files[n]), io.Discard, Options{}); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			got[i] = after.TotalAlloc - before.TotalAlloc
		}
		t.Logf("way %v: allocated %d bytes for 2²¹ elements, %d for 2²²", pass, got[0], got[1])
		if got[1] > got[0]+2<<20 {
			t.Errorf("way %v: allocated %d bytes for an array of 2²² elements, %d for 2²¹: more than 2 MiB more", pass, got[1], got[0])
		}
	}
}

// TestArrayPieceInSpec: spec/bmd.md §8.3 and §8.4 give arrayPiece as the
// length beyond which decrunch reads an object array in pieces.
func TestArrayPieceInSpec(t *testing.T) {
	spec, err := os.ReadFile("../spec/bmd.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(spec)), " ")
	n := fmt.Sprintf("%d,%03d", arrayPiece/1000, arrayPiece%1000)
	for _, want := range []string{"An array of more than " + n + " elements is read, converted and written " + n + " elements at a time",
		"(an array of " + n + " elements or fewer, read whole, is left out)"} {
		if !strings.Contains(text, want) {
			t.Errorf("spec/bmd.md §8 does not say %q", want)
		}
	}
}

// TestWideInstancesDecrunchMemory: decrunching 512 instances of a class
// of 65,535 fields, none kept (two bytes each in the file, 65,535 values
// each when read), allocates hardly more than decrunching 64, in each way
// of the second pass: the pipeline's reader hands them over a bounded
// batch at a time (bmd.MaxBatchValues). On two goroutines it decoded up
// to 2,048 records' values into one batch before: 1.4 GB allocated for
// the 512 (a file of 336 KB), 219 MB for the 64.
func TestWideInstancesDecrunchMemory(t *testing.T) {
	const fields = 65535
	files := map[int][]byte{}
	for _, n := range []int{64, 512} {
		files[n] = bmdtest.WideClass(t, fields, n, 200_000)
	}
	for _, pass := range allWays {
		var got [2]uint64
		for i, n := range []int{64, 512} {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			setWay(t, pass)
			st, err := Decrunch(bytes.NewReader(files[n]), io.Discard, Options{})
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			got[i] = after.TotalAlloc - before.TotalAlloc
			if st.Objects < uint64(n) {
				t.Fatalf("way %v: %d objects written of %d", pass, st.Objects, n)
			}
		}
		t.Logf("way %v: allocated %d bytes for 64 instances, %d for 512", pass, got[0], got[1])
		if got[1] > got[0]+16<<20 {
			t.Errorf("way %v: allocated %d bytes for 512 instances, %d for 64: more than 16 MiB more", pass, got[1], got[0])
		}
	}
}
