package crunch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
)

// piecesDump writes a dump with IDs of idSize bytes: 100 instances, then
// in the zygote heap an object array of 3*arrayPiece+17 elements (the
// instances, nulls, IDs of no object, itself) of class arrayClass, and in
// the app heap the same again with another ID, a short array, and more
// instances; with redump, the first array is dumped again at the end.
func piecesDump(t *testing.T, idSize int, arrayClass uint64, redump bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: idSize})
	if err != nil {
		t.Fatal(err)
	}
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("zygote")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 2, []byte("app")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 3, []byte("Node")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 4, []byte("[Ljava/lang/Object;")))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x1000, Name: 3}))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: 0x2000, Name: 4}))
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x1000, Class: hprof.ClassDump{ID: 0x1000}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x2000, Class: hprof.ClassDump{ID: 0x2000}})
	node := func(i int) uint64 { return uint64(0x10000 + 16*i) }
	array := func(id uint64) *hprof.SubRecord {
		elems := make([]uint64, 3*arrayPiece+17)
		for i := range elems {
			switch i % 7 {
			case 0: // null
			case 3:
				elems[i] = 0x7770000 + uint64(i%5)*16 // no object
			case 5:
				elems[i] = id
			default:
				elems[i] = node(i % 100)
			}
		}
		return &hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: id, ClassID: arrayClass, StackTrace: 7, Elements: elems}
	}
	for i := range 50 {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: node(i), ClassID: 0x1000})
	}
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'Z', HeapName: 1})
	w.WriteSub(array(0x200000))
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'A', HeapName: 2})
	w.WriteSub(array(0x300000))
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x400000, ClassID: 0x2000, Elements: []uint64{node(1), 0x7770010, 0x300000}})
	for i := 50; i < 100; i++ {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: node(i), ClassID: 0x1000})
	}
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: 0x300000})
	if redump {
		w.WriteSub(array(0x200000))
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// crunchWhole crunches data with object arrays held whole, as before
// arrayPiece (or, whole false, in pieces).
func crunchWhole(t *testing.T, data []byte, opt Options, whole bool) []byte {
	t.Helper()
	if whole {
		was := maxArrayWhole
		maxArrayWhole = 0
		defer func() { maxArrayWhole = was }()
	}
	var out bytes.Buffer
	if _, err := Crunch(bytes.NewReader(data), &out, opt); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestObjectArrayInPieces: an object array of more than arrayPiece
// elements, read and written in pieces, comes out of the BMD file as
// when it was held whole (the same ID, class and dense elements, unknown
// IDs numbered alike), on one goroutine or two, with 4- and 8-byte IDs,
// its heap dropped or kept, dumped twice, and its class a class of the
// dump or an ID of no object; and the file decrunches.
func TestObjectArrayInPieces(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		for _, c := range []struct {
			name   string
			class  uint64
			redump bool
			opt    Options
		}{
			{"class of the dump", 0x2000, false, Options{}},
			{"zygote dropped", 0x2000, false, Options{DropHeaps: []string{"zygote"}}},
			{"dumped twice", 0x2000, true, Options{}},
			{"unknown class", 0x7778000, false, Options{}},
		} {
			data := piecesDump(t, idSize, c.class, c.redump)
			samePass2Ways(t, data, c.opt)
			for _, one := range []bool{false, true} {
				restore := onOneGoroutine(one)
				pieces, whole := crunchWhole(t, data, c.opt, false), crunchWhole(t, data, c.opt, true)
				restore()
				got, want := arrayRecords(t, pieces), arrayRecords(t, whole)
				if len(got) != len(want) || len(got) < 2 {
					t.Fatalf("%s, ID size %d: %d object arrays, %d held whole", c.name, idSize, len(got), len(want))
				}
				same := func(g, w uint64) bool { return g == w }
				if c.class == 0x7778000 {
					// The class, an unknown ID, is numbered before the
					// elements when they come in pieces, after them when
					// held whole: the unknown IDs take other numbers, one
					// for one.
					m := map[uint64]uint64{}
					same = func(g, w uint64) bool {
						if v, ok := m[g]; ok {
							return v == w
						}
						m[g] = w
						return true
					}
				}
				for i := range got {
					g, w := got[i], want[i]
					ok := g.ID == w.ID && same(g.Class, w.Class) && g.Length == w.Length && len(g.Elements) == len(w.Elements)
					for j := 0; ok && j < len(g.Elements); j++ {
						ok = same(g.Elements[j], w.Elements[j])
					}
					if !ok {
						t.Fatalf("%s, ID size %d, one goroutine %v: array %d: ID %d class %d, %d elements; held whole ID %d class %d, %d elements",
							c.name, idSize, one, i, g.ID, g.Class, len(g.Elements), w.ID, w.Class, len(w.Elements))
					}
				}
				if c.class == 0x7778000 { // §6.2: the class is numbered first
					a := got[0]
					for j, e := range a.Elements {
						if e != 0 && (j%7 == 3) != (e > a.Class) {
							t.Fatalf("%s: element %d is %d, the array's class %d: the class is not numbered before the unknown elements", c.name, j, e, a.Class)
						}
					}
				}
				if _, err := decrunch.Decrunch(bytes.NewReader(pieces), io.Discard, decrunch.Options{}); err != nil {
					t.Fatalf("%s, ID size %d: decrunch: %v", c.name, idSize, err)
				}
			}
		}
	}
}

// arrayRecords reads the OBJECT ARRAY records of a BMD file.
func arrayRecords(t *testing.T, file []byte) []bmd.Record {
	t.Helper()
	var recs []bmd.Record
	bmdtest.Records(t, file, false, func(rec *bmd.Record) {
		if rec.Kind == bmd.KindObjectArray {
			c := *rec
			c.Elements = slices.Clone(rec.Elements)
			recs = append(recs, c)
		}
	})
	return recs
}

// TestObjectArrayInPiecesTruncated: a dump cut within an array read in
// pieces fails, on one goroutine or two, saying it is truncated.
func TestObjectArrayInPiecesTruncated(t *testing.T) {
	data := piecesDump(t, 4, 0x2000, false)
	bothPass2Ways(t, func(t *testing.T) {
		for _, cut := range []int{len(data) / 3, len(data) / 2} {
			_, err := Crunch(bytes.NewReader(data[:cut]), io.Discard, Options{})
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("cut at %d of %d bytes: %v, want truncated", cut, len(data), err)
			}
		}
	})
}

// TestArrayPieceInSpec: spec/bmd.md §6.2 gives arrayPiece as the length
// beyond which an object array is written in pieces, and as the piece.
func TestArrayPieceInSpec(t *testing.T) {
	spec, err := os.ReadFile("../spec/bmd.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(spec)), " ")
	n := fmt.Sprintf("%d,%03d", arrayPiece/1000, arrayPiece%1000)
	for _, want := range []string{"An OBJECT ARRAY of more than " + n + " elements", "writes its elements " + n + " at a time"} {
		if !strings.Contains(text, want) {
			t.Errorf("spec/bmd.md §6.2 does not say %q", want)
		}
	}
}

// TestObjectArrayInPiecesReadOn: while an object array is read in pieces,
// pass 2 reports its progress within the array and gives back the pages
// of the mapped file read (the two go together, reader.readTo), on one
// goroutine or two, its objects written directly or through items (a
// heap to drop): else a JDK dump of one Object[20_000_000] crunched with
// --drop-heap on one goroutine kept the array's 160 MB of mapped pages
// (181 MB of peak RSS, against 30 MB without --drop-heap).
func TestObjectArrayInPiecesReadOn(t *testing.T) {
	const n = 3 << 20 // 24 MiB of IDs: progress is reported every 16 MiB
	p := bigArrayDump(t, n)
	start, end := arrayElementBytes(t, p)
	bothPass2Ways(t, func(t *testing.T) {
		for _, opt := range []Options{{}, {DropHeaps: []string{"zygote"}}} {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			var within []int64
			before, rss := rssFile()
			var grown int64 // the file pages resident at a report within the array, more than before
			opt.Progress = func(pass int, off int64) {
				if pass == 2 && off > start && off < end {
					within = append(within, off)
					if now, ok := rssFile(); ok && rss {
						grown = max(grown, now-before)
					}
				}
			}
			_, err = Crunch(f, io.Discard, opt)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(within) == 0 {
				t.Errorf("%v: pass 2 reported no progress within the array (bytes %d to %d)", opt.DropHeaps, start, end)
			}
			if grown > 2*releaseStep {
				t.Errorf("%v: the process's file pages grew by %d MiB within the array", opt.DropHeaps, grown>>20)
			}
		}
	})
}

// skippingReader returns a Reader of the dump in file p, read whole into
// memory, that skips object arrays' elements (SkipElements).
func skippingReader(t *testing.T, p string) *hprof.Reader {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := hprof.NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	r.SkipElements = true
	return r
}

// arrayElementBytes returns where the elements of the one object array
// of the dump in file p start and end.
func arrayElementBytes(t *testing.T, p string) (start, end int64) {
	t.Helper()
	r := skippingReader(t, p)
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for s, err := range r.SubRecords() {
			if err != nil {
				t.Fatal(err)
			}
			if s.Tag == hprof.SubObjectArrayDump {
				end = r.Offset()
				return end - int64(s.Length)*int64(r.IDSize()), end
			}
		}
	}
	t.Fatal("no object array")
	return 0, 0
}

// TestObjectArrayInPiecesCutInPass2: a dump cut within an array read in
// pieces after pass 1 read it whole fails pass 2 saying it is truncated,
// on one goroutine or two, objects written directly or through items.
func TestObjectArrayInPiecesCutInPass2(t *testing.T) {
	data := piecesDump(t, 4, 0x2000, false)
	// The first array's elements: after 50 instances, its fixed part.
	at := bytes.Index(data, []byte{byte(hprof.SubObjectArrayDump), 0, 0x20, 0, 0})
	if at < 0 {
		t.Fatal("no array at ID 0x200000")
	}
	bothPass2Ways(t, func(t *testing.T) {
		for _, opt := range []Options{{}, {DropHeaps: []string{"app"}}} {
			for _, cut := range []int{at + 1 + 16 + 4*arrayPiece, at + 1 + 16 + 4*arrayPiece + 4*arrayPiece/2 + 1, at + 1 + 16 + 4*(3*arrayPiece+17) - 1} {
				src := &changedInPass2{Reader: bytes.NewReader(data), changed: data[:cut]} // cut between the passes
				_, err := Crunch(src, io.Discard, opt)
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("%v, cut at %d in pass 2: %v, want truncated", opt.DropHeaps, cut, err)
				}
			}
		}
	})
}

// rssFile returns the process's resident pages of mapped files, if /proc
// says (fileRSS, which skips the test where it does not, for a call on
// any goroutine).
func rssFile() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb << 10, true
		}
	}
	return 0, false
}

// TestObjectArrayInPiecesV1: crunch --format v1 converts an object array
// read in pieces to the version 1 file it wrote when the array was held
// whole, byte for byte, with the same warnings (its stack trace serial
// counted), on one goroutine or two.
func TestObjectArrayInPiecesV1(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		data := piecesDump(t, idSize, 0x2000, false)
		v1 := func(whole bool) ([]byte, string) {
			if whole {
				defer func(was int) { maxArrayWhole = was }(maxArrayWhole)
				maxArrayWhole = 0
			}
			var out, warn bytes.Buffer
			if _, err := CrunchV1(bytes.NewReader(data), &out, Options{}, &warn); err != nil {
				t.Fatal(err)
			}
			return out.Bytes(), warn.String()
		}
		bothPass2Ways(t, func(t *testing.T) {
			pieces, warnPieces := v1(false)
			whole, warnWhole := v1(true)
			if !bytes.Equal(pieces, whole) {
				t.Errorf("ID size %d: %d bytes of version 1 in pieces, %d held whole", idSize, len(pieces), len(whole))
			}
			// The arrays' stack trace serials, which version 1 cannot
			// carry, are counted in its warnings either way.
			if warnPieces != warnWhole || !strings.Contains(warnPieces, "stack trace") {
				t.Errorf("ID size %d: warnings in pieces\n%s\nheld whole\n%s", idSize, warnPieces, warnWhole)
			}
		})
	}
}
