package crunch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// testMinRun is minRunRecords for crunchFile: runs of any length, so
// that all go through pass2.fits and Writer.AddObjects.
var testMinRun = 1

// spanRecords is, after crunchFile with the split, the most records a
// span held; spanCount, how many spans there were; spansUnused, how many
// were written ahead and never taken up by pass 2's goroutine (some where
// an error ends pass 2 early; else none).
var spanRecords, spanCount, spansUnused int

// spanBytes is, after crunchFile with the split, the most bytes a span
// held.
var spanBytes int64

// spansStolen is, after crunchFile with the split, how many spans pass 2's
// goroutine took over from the goroutine writing them ahead (take).
var spansStolen int

// spanOutputs is, after crunchFile with the split, how many outputs of
// spans the goroutines shared (spanOuts).
var spanOutputs int

// spanRoots is, after crunchFile with the split, the roots written from
// parts of roots read ahead (addRoots).
var spanRoots int

// spansUnread is, after crunchFile with the split, how many spans pass
// 2's goroutine wrote without reading them (writeSpanRecords); spanInfos,
// the heap infos it wrote from parts read ahead (addInfo).
var spansUnread, spanInfos int

// spanOutsAway is, after crunchFile with the split, how many outputs of
// spans are not back among the free outputs they came from (spanOut.home),
// the goroutines' shared ones and pass 2's goroutine's own (helperOuts),
// or were last written on the other side: a shared one by pass 2's
// goroutine (its spanWorker, splitter.helper), or one of its own by
// another. Those written ahead and not used (spansUnused) are away.
var spanOutsAway int

// outsAway returns how many of the n outputs whose home is channel free
// are not in it, or are in it with another home or last written by the
// wrong side (by helper, unless mine says that they are helper's), and
// puts back those there.
func outsAway(free chan *spanOut, n int, helper *spanWorker, mine bool) int {
	var back []*spanOut
	for len(free) > 0 {
		back = append(back, <-free)
	}
	away := n - len(back)
	for _, o := range back {
		if o.home != free || o.filler != nil && (o.filler == helper) != mine {
			away++
		}
		free <- o
	}
	return away
}

// testSpansHere is spansHere for crunchFile: false, every span through a
// run, the runs' way tested whatever the timing.
var testSpansHere = false

// crunchFile crunches the file at path, mapped, with pass 2 split by
// spans (every heap dump record of minSpan bytes or more) or on one
// goroutine, and returns the splitter's counts of runs added and refused.
func crunchFile(t *testing.T, path string, opt Options, split bool, minSpan int64) (st *Stats, out []byte, added, refused int, err error) {
	t.Helper()
	defer func(f func(uint64) bool, m int64) { pass2Split, minSpanBytes = f, m }(pass2Split, minSpanBytes)
	defer onOneGoroutine(true)()
	pass2Split = func(uint64) bool { return split }
	minSpanBytes = minSpan
	defer func(m int) { minRunRecords = m }(minRunRecords)
	minRunRecords = testMinRun
	defer func(h bool) { spansHere = h }(spansHere)
	spansHere = testSpansHere
	defer func(f func(*splitter)) { splitStopped = f }(splitStopped)
	splitStopped = func(sp *splitter) {
		added, refused, spanRoots, spansStolen, spansUnread, spanInfos = sp.added, sp.refused, sp.rootsAdded, sp.stolen, sp.unread, sp.infosAdded
		spanRecords, spanCount, spansUnused, spanBytes, spanOutputs = 0, len(sp.spans), 0, 0, cap(sp.free)
		spanOutsAway = outsAway(sp.free, cap(sp.free), sp.helper, false) + outsAway(sp.helperFree, helperOuts, sp.helper, true)
		for _, o := range sp.outs {
			if o != nil {
				spansUnused++
			}
		}
		for _, s := range sp.spans {
			spanRecords = max(spanRecords, s.records)
			spanBytes = max(spanBytes, s.end-s.start())
		}
	}
	var buf bytes.Buffer
	st, err = Crunch(openMapped(t, path), &buf, opt)
	return st, buf.Bytes(), added, refused, err
}

// sameSplit checks that the file at path crunched with pass 2 split by
// spans is the file crunched on one goroutine, byte for byte, with the
// same Stats, or fails with the same error; it returns the runs added and
// refused.
func sameSplit(t *testing.T, path string, opt Options, minSpan int64) (added, refused int) {
	t.Helper()
	wantSt, want, _, _, wantErr := crunchFile(t, path, opt, false, minSpan)
	st, got, added, refused, err := crunchFile(t, path, opt, true, minSpan)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%s %+v: split: error %v; one goroutine: %v", filepath.Base(path), opt, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s %+v: split wrote %d bytes of BMD, which differ from the %d of one goroutine", filepath.Base(path), opt, len(got), len(want))
	}
	if err == nil && !reflect.DeepEqual(st, wantSt) {
		t.Fatalf("%s %+v: split's Stats\n%+v\ndiffer from one goroutine's\n%+v", filepath.Base(path), opt, st, wantSt)
	}
	return added, refused
}

// writeTemp writes data to a file of the test's and returns its path.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// spansDump writes a dump whose heap dump records of about segSize bytes
// hold what pass 2's split must leave to its goroutine or check: class
// dumps among the objects, instances of a class before its dump, object
// arrays of a class before and after its dump, references to IDs not in
// the dump and to classes, roots and heap infos in the middle, stack
// trace serials that change, an object array read in pieces, primitive
// arrays with and without data, an int field (kept with KeepPrimitives),
// and chunks that end inside records and between them.
func spansDump(idSize int, segSize int) []byte {
	var buf bytes.Buffer
	w, _ := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: idSize})
	w.SegmentSize = segSize
	enc := w.Encoder()
	for i, s := range []string{"Node", "next", "prev", "Leaf", "count", "[LNode;", "app", "image", "java.lang.Object"} {
		w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, uint64(i+1), []byte(s)))
	}
	const object, node, leaf, array = 0x10, 0x20, 0x30, 0x40
	for i, c := range []struct{ id, name uint64 }{{object, 9}, {node, 1}, {leaf, 4}, {array, 6}} {
		w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(i + 1), ClassID: c.id, Name: c.name}))
	}
	ref := func(id uint64) []byte {
		if idSize == 4 {
			return binary.BigEndian.AppendUint32(nil, uint32(id))
		}
		return binary.BigEndian.AppendUint64(nil, id)
	}
	classDump := func(id, super uint64, fields []hprof.Field) {
		size := uint32(0)
		for _, f := range fields {
			size += uint32(f.Type.Size(idSize))
		}
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: id, Class: hprof.ClassDump{ID: id, Super: super, InstanceSize: size, Fields: fields}})
	}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: object})
	classDump(object, 0, nil)
	classDump(node, object, []hprof.Field{{Name: 2, Type: hprof.Object}, {Name: 3, Type: hprof.Object}})
	const n = 12000
	nodeID := func(i int) uint64 { return 0x100000 + 16*uint64(i) }
	for i := range n {
		switch {
		case i == 3000:
			classDump(leaf, node, []hprof.Field{{Name: 5, Type: hprof.Int}})
		case i == 5000:
			classDump(array, object, nil)
		case i%997 == 0:
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootJNIGlobal, ID: nodeID(i), JNIRef: 7})
		case i%1499 == 0:
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: uint32('A' + i%2*('I'-'A')), HeapName: uint64(7 + i%2)})
		}
		next, prev := nodeID(i+1), nodeID(i-1)
		switch {
		case i%211 == 0:
			next = 0xdead0000 + uint64(i%5) // not in the dump
		case i%307 == 0:
			prev = node // a class
		case i == n-1:
			next = 0
		}
		trace := uint32(1)
		if i/2500%2 == 1 {
			trace = 2
		}
		id := nodeID(i)
		switch {
		case i%10 == 9: // an array of nodes
			elems := []uint64{prev, 0, next}
			if i == 7009 {
				elems = make([]uint64, arrayPiece+5) // read in pieces
				elems[arrayPiece] = prev
			}
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: id, StackTrace: trace, ClassID: array, Elements: elems})
		case i%10 == 8:
			tag := hprof.SubPrimitiveArrayDump
			if i%20 == 8 {
				tag = hprof.SubPrimitiveArrayNoData
			}
			w.WriteSub(&hprof.SubRecord{Tag: tag, ID: id, StackTrace: trace, ElemType: hprof.Char, Length: uint32(i % 300), Data: make([]byte, 2*(i%300))})
		case i%10 == 7 || i == 2500: // leaves, some before their class dump
			data := append(binary.BigEndian.AppendUint32(nil, uint32(i)), ref(next)...)
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id, StackTrace: trace, ClassID: leaf, Data: append(data, ref(prev)...)})
		default:
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id, StackTrace: trace, ClassID: node, Data: append(ref(next), ref(prev)...)})
		}
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	w.Flush()
	return buf.Bytes()
}

// TestSplitSameFile: pass 2 split by spans writes the file pass 2 writes
// on one goroutine, byte for byte, with the same Stats, or fails with the
// same error: on spansDump's records of 4 KiB to 1 MiB, with 4- and
// 8-byte IDs and the options that keep more, whole, cut short and with
// bytes changed, each record a span, or spans of two or three records
// (as an Android dump's records of 4 KiB go in spans of 64 KiB); on the
// fixtures and the corpus's dumps. Most objects go in runs; some runs
// are refused.
func TestSplitSameFile(t *testing.T) { bothSplitReads(t, testSplitSameFile) }

func testSplitSameFile(t *testing.T) {
	options := []Options{{}, {KeepPrimitives: true, KeepStrings: true}, {Profile: "leak"}}
	for _, idSize := range []int{4, 8} {
		for _, seg := range []int{4 << 10, 64 << 10, 1 << 20} {
			data := spansDump(idSize, seg)
			path := writeTemp(t, "spans.hprof", data)
			for _, minSpan := range []int64{1, 2*int64(seg) + 1000} {
				for _, opt := range options {
					added, refused := sameSplit(t, path, opt, minSpan)
					if added == 0 || refused != 0 {
						t.Errorf("%d-byte IDs, segments of %d, spans of %d bytes or more, %+v: %d runs added, %d refused, want some and none", idSize, seg, minSpan, opt, added, refused)
					}
					if want := 1 + int(minSpan)/seg; spanRecords != want && len(data) > 4*int(minSpan) {
						t.Errorf("%d-byte IDs, segments of %d, spans of %d bytes or more: spans of %d records at most, want %d", idSize, seg, minSpan, spanRecords, want)
					}
				}
				for _, at := range []int{len(data) / 3, len(data) / 2, len(data) - 100} {
					bad := bytes.Clone(data)
					bad[at] ^= 0x5a
					sameSplit(t, writeTemp(t, "bad.hprof", bad), Options{}, minSpan)
					sameSplit(t, writeTemp(t, "cut.hprof", data[:at]), Options{}, minSpan)
				}
			}
		}
	}
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "sample-align16.hprof.gz", "sample-nocoops.hprof.gz", "secrets.hprof.gz", "sample-zgc.hprof.gz", "sample-jdk25.hprof.gz")
	for _, p := range testutil.CorpusHPROFs(t) {
		dumps[filepath.Base(p)] = testutil.ReadAll(t, p)
	}
	for name, data := range dumps {
		path := writeTemp(t, "dump.hprof", data)
		added, _ := sameSplit(t, path, Options{}, 1)
		grouped, _ := sameSplit(t, path, Options{}, 64<<10)
		sameSplit(t, path, Options{Profile: "leak", DropHeaps: []string{"zygote"}}, 1)
		t.Logf("%s: %d runs added, %d with spans of 64 KiB", name, added, grouped)
	}
}

// TestSplitPieces: a heap dump record larger than maxSpanBytes is cut
// into pieces at the sub-record boundaries pass 1 marks about pieceBytes
// apart (pass1.pieces), each a span. Pass 2 split writes the file that
// one goroutine writes, byte for byte, with the same Stats or error:
// records of 256 KiB and 1 MiB with 4- and 8-byte IDs (whole, a byte
// changed, cut), the fixtures and the corpus dumps (HotSpot's one HEAP
// DUMP record of JAVA PROFILE 1.0.1 among them); pass 1 reading the
// records on its pool or inline; pass 2's goroutine writing the spans it
// takes as any record (spansHere) or through runs. On the generated
// dumps, runs are added, none refused, pieces made, and every piece
// written ahead is taken up (when pass 2 passed the start of a piece that
// followed one, the other goroutine's outputs ran out and it stopped).
func TestSplitPieces(t *testing.T) { bothSplitReads(t, testSplitPieces) }

func testSplitPieces(t *testing.T) {
	defer func(m, p int64, r, mm uint32, h bool) {
		maxSpanBytes, pieceBytes, maxSplitRecord, maxSplitMapped, testSpansHere = m, p, r, mm, h
	}(maxSpanBytes, pieceBytes, maxSplitRecord, maxSplitMapped, testSpansHere)
	maxSpanBytes = 64 << 10
	type dump struct {
		data      []byte
		generated bool
	}
	dumps := map[string]dump{}
	for _, idSize := range []int{4, 8} {
		for _, seg := range []int{256 << 10, 1 << 20} {
			data := spansDump(idSize, seg)
			dumps[fmt.Sprintf("spans-%d-%d", idSize, seg)] = dump{data, true}
			bad := bytes.Clone(data)
			bad[len(bad)/2] ^= 0x5a
			dumps[fmt.Sprintf("spans-%d-%d-bad", idSize, seg)] = dump{bad, false}
			dumps[fmt.Sprintf("spans-%d-%d-cut", idSize, seg)] = dump{data[:len(data)*2/3], false}
		}
	}
	for name, data := range testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "secrets.hprof.gz") {
		dumps[name] = dump{data, false}
	}
	for _, p := range testutil.CorpusHPROFs(t) {
		dumps[filepath.Base(p)] = dump{testutil.ReadAll(t, p), false}
	}
	for name, d := range dumps {
		path := writeTemp(t, "pieces.hprof", d.data)
		for _, pb := range []int64{4 << 10, 64 << 10} {
			for _, inline := range []bool{false, true} {
				maxSplitRecord, maxSplitMapped = 4<<20, 64<<20
				if inline {
					maxSplitRecord, maxSplitMapped = 0, 0
				}
				for _, here := range []bool{false, true} {
					pieceBytes, testSpansHere = pb, here
					added, refused := sameSplit(t, path, Options{}, 1)
					if !d.generated {
						continue
					}
					if refused != 0 || !here && added == 0 || spanCount < len(d.data)/int(4*pb) || spansUnused != 0 || spanOutsAway != 0 {
						t.Errorf("%s, pieces of %d bytes, inline %v, spans here %v: %d runs added, %d refused, %d spans, %d written ahead and not used, %d outputs not back where they came from; want some, none, %d or more, none, none",
							name, pb, inline, here, added, refused, spanCount, spansUnused, spanOutsAway, len(d.data)/int(4*pb))
					}
				}
			}
		}
	}
}

// sameSkim checks that the file at path crunched with pass 2 reading
// its objects a batch at a time (SkimObjectsData) is the file crunched
// with each object read by NextSub, as before a01f8d4, byte for byte,
// with the same Stats, progress reports and error, with pass 2 split by
// spans (every heap dump record of minSpan bytes or more) or not.
func sameSkim(t *testing.T, path string, opt Options, split bool, minSpan int64) {
	t.Helper()
	run := func(skim int) (*Stats, []byte, []int64, error) {
		defer func(n int) { pass2Skim = n }(pass2Skim)
		pass2Skim = skim
		var progress []int64
		opt := opt
		opt.Progress = func(pass int, done int64) { progress = append(progress, int64(pass)<<56|done) }
		st, out, _, _, err := crunchFile(t, path, opt, split, minSpan)
		return st, out, progress, err
	}
	wantSt, want, wantProgress, wantErr := run(0)
	st, got, progress, err := run(skimBatch)
	name := fmt.Sprintf("%s %+v, split %v", filepath.Base(path), opt, split)
	switch {
	case fmt.Sprint(err) != fmt.Sprint(wantErr):
		t.Fatalf("%s: skimmed: error %v; one by one: %v", name, err, wantErr)
	case !bytes.Equal(got, want):
		t.Fatalf("%s: skimmed, %d bytes of BMD, which differ from the %d read one by one", name, len(got), len(want))
	case err == nil && !reflect.DeepEqual(st, wantSt):
		t.Fatalf("%s: skimmed, Stats\n%+v\ndiffer from\n%+v", name, st, wantSt)
	case !slices.Equal(progress, wantProgress):
		t.Fatalf("%s: skimmed, progress at %v, one by one at %v", name, progress, wantProgress)
	}
}

// TestSkimSameFile: pass 2 reading its objects a batch at a time writes
// the file it writes reading them one by one, with the same Stats,
// progress and errors, on one goroutine and split, on the dumps of
// TestSplitSameFile: the generated one with records of 4 KiB to 1 MiB and
// 4- and 8-byte IDs (whole, with a byte changed, cut), the fixtures and
// the corpus dumps.
func TestSkimSameFile(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		for _, seg := range []int{4 << 10, 64 << 10, 1 << 20} {
			data := spansDump(idSize, seg)
			paths := []string{writeTemp(t, "spans.hprof", data)}
			for _, at := range []int{len(data) / 3, len(data) / 2, len(data) - 100} {
				bad := bytes.Clone(data)
				bad[at] ^= 0x5a
				paths = append(paths, writeTemp(t, "bad.hprof", bad), writeTemp(t, "cut.hprof", data[:at]))
			}
			for _, path := range paths {
				for _, split := range []bool{false, true} {
					sameSkim(t, path, Options{}, split, 1)
				}
			}
			sameSkim(t, paths[0], Options{KeepPrimitives: true, KeepStrings: true}, false, 1)
		}
	}
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "sample-align16.hprof.gz", "sample-nocoops.hprof.gz", "secrets.hprof.gz")
	for _, p := range testutil.CorpusHPROFs(t) {
		dumps[filepath.Base(p)] = testutil.ReadAll(t, p)
	}
	for _, data := range dumps {
		path := writeTemp(t, "dump.hprof", data)
		for _, split := range []bool{false, true} {
			sameSkim(t, path, Options{}, split, 1)
		}
	}
}

// TestSplitRefused: a run whose records were written on what the plan
// tells but which does not hold when pass 2 comes to it (here every class
// taken as defined from the start, or never) is refused, and its objects
// written one by one: the same file.
func TestSplitRefused(t *testing.T) { bothSplitReads(t, testSplitRefused) }

func testSplitRefused(t *testing.T) {
	path := writeTemp(t, "spans.hprof", spansDump(4, 64<<10))
	for _, chunk := range []uint32{0, noChunk} {
		defer func(f func(*spanWorker)) { newSpanWorker = f }(newSpanWorker)
		newSpanWorker = func(wk *spanWorker) {
			wk.plan = slices.Repeat([]uint32{chunk}, len(wk.plan))
		}
		added, refused := sameSplit(t, path, Options{}, 1)
		if refused == 0 || added == 0 {
			t.Errorf("classes taken as defined from chunk %d: %d runs added, %d refused", chunk, added, refused)
		}
	}
}

// TestSpanRecordsUnread: a span of several whole records (HEAP DUMP
// SEGMENTs of 4 KiB, as Android's) is written from what was written of
// it ahead, its gaps from their bytes kept, without reading it from the
// file, also where some of its runs are refused (every class taken as
// defined from the start, or never, as in TestSplitRefused), where the
// file's reader is moved to them: the same file as one goroutine's.
func TestSpanRecordsUnread(t *testing.T) { bothSplitReads(t, testSpanRecordsUnread) }

func testSpanRecordsUnread(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		path := writeTemp(t, "spans.hprof", spansDump(idSize, 4<<10))
		for _, opt := range []Options{{}, {KeepPrimitives: true}} {
			added, refused := sameSplit(t, path, opt, 64<<10)
			if spansUnread == 0 || spanRecords < 2 || added == 0 || refused != 0 {
				t.Errorf("%d-byte IDs, %+v: %d spans unread, at most %d records a span, %d runs added, %d refused; want some, 2 or more, some, none", idSize, opt, spansUnread, spanRecords, added, refused)
			}
		}
		for _, chunk := range []uint32{0, noChunk} {
			func() {
				defer func(f func(*spanWorker)) { newSpanWorker = f }(newSpanWorker)
				newSpanWorker = func(wk *spanWorker) {
					wk.plan = slices.Repeat([]uint32{chunk}, len(wk.plan))
				}
				added, refused := sameSplit(t, path, Options{}, 64<<10)
				if spansUnread == 0 || refused == 0 || added == 0 {
					t.Errorf("%d-byte IDs, classes taken as defined from chunk %d: %d spans unread, %d runs added, %d refused; want some of each", idSize, chunk, spansUnread, added, refused)
				}
			}()
		}
	}
}

// TestSpanInfosAndArrays: in an Android dump's way, each HEAP DUMP
// SEGMENT of about 4 KiB starting with a HEAP DUMP INFO and holding a
// large primitive array or two, the goroutine writing a span ahead reads
// each heap's info (addInfo), and keeps a run of fewer than minRunRecords
// records as a run where it holds minRunBytes or more (with minRunBytes
// larger than the arrays, pass 2's goroutine writes them, in gaps): the
// same file as one goroutine's.
func TestSpanInfosAndArrays(t *testing.T) { bothSplitReads(t, testSpanInfosAndArrays) }

func testSpanInfosAndArrays(t *testing.T) {
	var buf bytes.Buffer
	w, _ := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version103, IDSize: 4})
	w.SegmentSize = 4 << 10
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("app")))
	const records = 200
	for i := range records {
		w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'A', HeapName: 1})
		for j := range 1 + i%2 {
			id := 0x100000 + 0x10000*uint64(2*i+j)
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: id, ElemType: hprof.Byte, Length: 1500, Data: make([]byte, 1500)})
		}
		w.EndHeapDump()
	}
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "infos.hprof", buf.Bytes())
	defer func(r int, b int64, m int) { minRunRecords, minRunBytes, testMinRun = r, b, m }(minRunRecords, minRunBytes, testMinRun)
	testMinRun = 16
	for _, c := range []struct {
		minBytes   int64
		arraysRuns bool
	}{{1 << 10, true}, {4 << 10, false}} {
		minRunBytes = c.minBytes
		added, refused := sameSplit(t, path, Options{}, 64<<10)
		if spanInfos != records || (added >= records) != c.arraysRuns || refused != 0 || spansUnread == 0 {
			t.Errorf("runs of %d bytes or more: %d heap infos from parts, %d runs added, %d refused, %d spans unread; want %d, %d or more: %v, none, some",
				c.minBytes, spanInfos, added, refused, spansUnread, records, records, c.arraysRuns)
		}
	}
}

// TestSpanRecordsSkipped: read at offsets, pass 2's goroutine seeks past
// the spans of small records that another goroutine read and wrote
// (writeSpanRecords, hprof.Reader.SkipRecords): it reads half the file at
// most (here 40 %: its buffer's first fill of 256 KiB, then 4 KiB after
// each seek), where it read all of it, and the BMD is that of one
// goroutine.
func TestSpanRecordsSkipped(t *testing.T) {
	defer func(w readWay, f func(uint64) bool, h bool) { testWay, pass2Split, spansHere = w, f, h }(testWay, pass2Split, spansHere)
	defer onOneGoroutine(true)()
	data, _ := rootsDump(4 << 10)
	path := writeTemp(t, "dump.hprof", data)
	testWay, spansHere = readAt, false
	pass2Split = func(uint64) bool { return false }
	_, want, _, _, err := crunchFile(t, path, Options{}, false, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	pass2Split = func(uint64) bool { return true }
	src := readsAtOffsets(t, path, want)
	if !src.rewind || src.after > int64(len(data))/2 {
		t.Errorf("pass 2's goroutine read %d bytes of the %d of the file (rewound: %v), want half at most", src.after, len(data), src.rewind)
	}
}

// manyRunsDump writes a dump of classes classes, each with one object
// field, and objects instances in one heap dump record, perTrace of each
// stack trace serial: runs of perTrace records.
func manyRunsDump(classes, objects, perTrace, segSize int) []byte {
	var buf bytes.Buffer
	w, _ := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 8})
	w.SegmentSize = segSize
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("f")))
	classID := func(i int) uint64 { return 0x100000 + 16*uint64(i) }
	for i := range classes {
		w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, uint64(100+i), fmt.Appendf(nil, "C%d", i)))
		w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(i + 1), ClassID: classID(i), Name: uint64(100 + i)}))
	}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	for i := range classes {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: classID(i), Class: hprof.ClassDump{ID: classID(i), InstanceSize: 8, Fields: []hprof.Field{{Name: 1, Type: hprof.Object}}}})
	}
	w.EndHeapDump()
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	objID := func(i int) uint64 { return 0x10000000 + 16*uint64(i) }
	for i := range objects {
		next := objID(i + 1)
		if i == objects-1 {
			next = 0
		}
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: objID(i), StackTrace: uint32(i/perTrace + 1), ClassID: classID(i % classes), Data: binary.BigEndian.AppendUint64(nil, next)})
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	w.Flush()
	return buf.Bytes()
}

// rootsDump writes an Android dump (JAVA PROFILE 1.0.3) whose heap dump
// records of segSize bytes start with roots, as ART writes them: roots
// of every kind that has an object, among them roots of classes, of IDs
// not in the dump (some of one ID twice, numbered where first met) and
// of 0, a heap info among them, and more than a chunk of them in a row
// (chunkSubRecords), so that chunks start among them; then the objects.
func rootsDump(segSize int) (dump []byte, roots int) {
	var buf bytes.Buffer
	w, _ := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version103, IDSize: 4})
	w.SegmentSize = segSize
	enc := w.Encoder()
	for i, s := range []string{"Node", "next", "app", "java.lang.Object"} {
		w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, uint64(i+1), []byte(s)))
	}
	const object, node = 0x10, 0x20
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: object, Name: 4}))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: node, Name: 1}))
	const n = 30000
	nodeID := func(i int) uint64 { return 0x100000 + 8*uint64(i) }
	kinds := []hprof.SubTag{hprof.SubRootInternedString, hprof.SubRootJNIGlobal, hprof.SubRootJNILocal, hprof.SubRootJavaFrame,
		hprof.SubRootNativeStack, hprof.SubRootStickyClass, hprof.SubRootThreadBlock, hprof.SubRootMonitorUsed,
		hprof.SubRootThreadObject, hprof.SubRootFinalizing, hprof.SubRootDebugger, hprof.SubRootReferenceCleanup,
		hprof.SubRootVMInternal, hprof.SubRootJNIMonitor, hprof.SubRootUnknown}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	for i := range 3 * chunkSubRecords {
		id := nodeID(i * 7 % n)
		switch {
		case i%101 == 0:
			id = 0xdead0000 + uint64(i%3) // not in the dump
		case i%103 == 0:
			id = node // a class
		case i%1009 == 0:
			id = 0
		}
		if i == 5000 {
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'A', HeapName: 3})
		}
		w.WriteSub(&hprof.SubRecord{Tag: kinds[i%len(kinds)], ID: id, Thread: uint32(i % 5), Frame: uint32(i % 11), JNIRef: uint64(i), StackTrace: 0})
		roots++
	}
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: object, Class: hprof.ClassDump{ID: object}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: node, Class: hprof.ClassDump{ID: node, Super: object, InstanceSize: 4, Fields: []hprof.Field{{Name: 2, Type: hprof.Object}}}})
	for i := range n {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: nodeID(i), ClassID: node, Data: binary.BigEndian.AppendUint32(nil, uint32(nodeID((i+1)%n)))})
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	w.Flush()
	return buf.Bytes(), roots
}

// TestSplitRoots: the roots of a span are read, and their objects
// resolved, on the goroutine that writes the span ahead (spanOut.root),
// and pass 2's goroutine writes them from there (addRoots): the file is
// the one goroutine's, byte for byte, the roots of IDs not in the dump
// numbered in the same order, chunks that start among the roots defining
// the same classes there, with records of 4 KiB in spans of 64 KiB (an
// Android dump's) and each record a span; whole, a byte changed and cut
// short. Most roots go through parts of roots; with fewer allowed a span
// (maxSpanRoots), the others through gaps.
func TestSplitRoots(t *testing.T) { bothSplitReads(t, testSplitRoots) }

func testSplitRoots(t *testing.T) {
	data, roots := rootsDump(4 << 10)
	path := writeTemp(t, "roots.hprof", data)
	for _, minSpan := range []int64{1, 64 << 10} {
		for _, opt := range []Options{{}, {Profile: "leak"}} {
			added, refused := sameSplit(t, path, opt, minSpan)
			if added == 0 || refused != 0 || spanRoots < roots*9/10 {
				t.Errorf("spans of %d bytes or more, %+v: %d runs added, %d refused, %d of %d roots from parts of roots; want some, none, and 90 %% of them", minSpan, opt, added, refused, spanRoots, roots)
			}
		}
		for _, at := range []int{len(data) / 5, len(data) / 3, len(data) - 100} {
			bad := bytes.Clone(data)
			bad[at] ^= 0x5a
			sameSplit(t, writeTemp(t, "bad.hprof", bad), Options{}, minSpan)
			sameSplit(t, writeTemp(t, "cut.hprof", data[:at]), Options{}, minSpan)
		}
	}
	// A span's roots beyond maxSpanRoots are its gaps'.
	defer func(n int) { maxSpanRoots = n }(maxSpanRoots)
	maxSpanRoots = 100
	sameSplit(t, path, Options{}, 64<<10)
	if spanRoots == 0 || spanRoots > 100*spanCount {
		t.Errorf("at most 100 roots a span, %d spans: %d roots from parts of roots, want some and at most %d", spanCount, spanRoots, 100*spanCount)
	}
}

// TestSplitManyRuns: a span cut into many runs gives the same file, in a
// memory that does not grow with their number times the classes, nor
// much with their number. A run of fewer than minRunRecords records (here
// each object of its own stack trace serial) is left to pass 2's
// goroutine: with an ObjectRun each, 100,000 runs of a 3 MB span
// allocated 60 MB more than one goroutine (1,000,000 runs of a 32 MiB span
// took 500 MB). Longer runs share a table of the classes
// (4 bytes per class of the dump): with one each, 1,000 runs of a dump of
// 20,000 classes allocated 80 MB more.
func TestSplitManyRuns(t *testing.T) { bothSplitReads(t, testSplitManyRuns) }

func testSplitManyRuns(t *testing.T) {
	defer func(m int) { testMinRun = m }(testMinRun)
	testMinRun = 16
	for _, c := range []struct{ classes, objects, perTrace, minAdded int }{
		{100, 100000, 1, 0},
		{20000, 16000, 16, 1000},
	} {
		path := writeTemp(t, "runs.hprof", manyRunsDump(c.classes, c.objects, c.perTrace, 4<<20))
		allocated := func(split bool) uint64 {
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			crunchFile(t, path, Options{}, split, 1)
			runtime.ReadMemStats(&ms1)
			return ms1.TotalAlloc - ms0.TotalAlloc
		}
		added, refused := sameSplit(t, path, Options{}, 1)
		if added < c.minAdded || refused != 0 {
			t.Errorf("%+v: %d runs added, %d refused; want %d or more, and none", c, added, refused, c.minAdded)
		}
		one, split := allocated(false), allocated(true)
		if split > one+16<<20 {
			t.Errorf("%+v: split by spans, crunch allocated %d bytes, %d more than on one goroutine", c, split, split-one)
		}
	}
}

// TestSplitSmallRecords: a dump of 4 KiB records, as Android writes
// them, goes in spans of several records, and crunch split by spans
// allocates about what it does on one goroutine, not more for each
// record. A first version made a Reader for each record of a span and
// kept 64 bytes for each: 180 MB more on a 454 MB dump, which the
// collector let pile up (104 MB of peak RSS against 39); here, 1,011
// bytes a record more (checked to fail so). The outputs of spans are
// allocated once each: 1.4 to 2.4 MB more than on one goroutine with 4,
// 2.4 to 3.4 MB with 8.
func TestSplitSmallRecords(t *testing.T) { bothSplitReads(t, testSplitSmallRecords) }

func testSplitSmallRecords(t *testing.T) {
	const objects = 400000 // of 33 bytes: 3,300 records of 4 KiB
	path := writeTemp(t, "small.hprof", manyRunsDump(100, objects, objects, 4<<10))
	allocated := func(split bool) uint64 {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		crunchFile(t, path, Options{}, split, 64<<10)
		runtime.ReadMemStats(&ms1)
		return ms1.TotalAlloc - ms0.TotalAlloc
	}
	added, refused := sameSplit(t, path, Options{}, 64<<10)
	if added < 3000 || refused != 0 || spanRecords < 10 {
		t.Errorf("%d runs added, %d refused, spans of %d records at most; want 3,000 or more, none, and 10 or more", added, refused, spanRecords)
	}
	if spanOutputs != maxOuts {
		t.Errorf("spans of 64 KiB shared %d outputs, want %d", spanOutputs, maxOuts)
	}
	one, split := allocated(false), allocated(true)
	const records = objects * 33 / 4096
	if split > one+uint64(spanOutputs)<<19+256*records { // 512 KiB an output of spans
		t.Errorf("split by spans, crunch allocated %d bytes, %d more than on one goroutine, %d a record", split, split-one, (split-one)/records)
	}
	t.Logf("split by spans, %d bytes allocated, %d on one goroutine", split, one)
}

// TestSpanOuts: the outputs of spans cover about 4 MiB of the dump, 4 to
// 8 of them: 4 for a JDK's spans of 1 MB, as before spanOuts, 8 for an
// Android dump's of 64 KiB.
func TestSpanOuts(t *testing.T) {
	spans := func(sizes ...int64) []span {
		var ss []span
		var at int64
		for _, n := range sizes {
			rec := hprof.Record{Tag: hprof.TagHeapDumpSegment, Offset: at, Length: uint32(n)}
			ss = append(ss, span{rec: rec, end: rec.End(), records: 1})
			at = rec.End()
		}
		return ss
	}
	for _, c := range []struct {
		name  string
		spans []span
		want  int
	}{
		{"none", nil, 4},
		{"a JDK's segment", spans(1 << 20), 4},
		{"three of them", spans(1<<20, 1<<20, 1<<20), 4},
		{"the largest span", spans(4 << 20), 4},
		{"spans of 800 KiB", spans(800<<10, 800<<10), 5},
		{"spans read at offsets", spans(256 << 10), 8},
		{"an Android dump's spans", spans(64<<10, 64<<10), 8},
		{"tiny spans", spans(4<<10, 1), 8},
		{"an empty span", spans(0), 8},
	} {
		if got := spanOuts(c.spans); got != c.want {
			t.Errorf("%s: %d outputs, want %d", c.name, got, c.want)
		}
	}
}

// TestSplitMaxSpan: a heap dump record larger than maxSpanBytes is not a
// span (the runs written ahead of such records held too much memory):
// it is cut into pieces of about pieceBytes (more where a sub-record is
// larger), runs are added from them, and the file is the same.
func TestSplitMaxSpan(t *testing.T) { bothSplitReads(t, testSplitMaxSpan) }

func testSplitMaxSpan(t *testing.T) {
	defer func(m, p int64) { maxSpanBytes, pieceBytes = m, p }(maxSpanBytes, pieceBytes)
	maxSpanBytes, pieceBytes = 512<<10, 64<<10
	for _, seg := range []int{1 << 20, 64 << 10} {
		path := writeTemp(t, "spans.hprof", spansDump(4, seg))
		added, _ := sameSplit(t, path, Options{}, 1)
		if added == 0 || spanBytes > maxSpanBytes {
			t.Errorf("records of %d bytes, spans of %d at most, pieces of %d: %d runs added, spans of %d bytes at most", seg, maxSpanBytes, pieceBytes, added, spanBytes)
		}
	}
}

// FuzzSplitPieces: whatever the input, pass 2 split, with every heap dump
// record of more than 256 bytes cut into pieces of about 64 bytes, writes
// the file one goroutine writes, or fails with the same error, and ends.
func FuzzSplitPieces(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, here bool) {
		defer func(m, p int64, h bool) { maxSpanBytes, pieceBytes, testSpansHere = m, p, h }(maxSpanBytes, pieceBytes, testSpansHere)
		maxSpanBytes, pieceBytes, testSpansHere = 256, 64, here
		sameSplit(t, writeTemp(t, "fuzz.hprof", data), Options{}, 1)
	})
}

// TestSplitTakesOver: where the goroutine writing spans ahead stops (its
// core taken by another program), pass 2's goroutine takes over the span
// it needs next once it has no outputs of its own left to write ahead
// into and that goroutine has made no step through a wait (stallWait),
// and writes it itself; the file is the same byte for byte, and the
// output the stopped goroutine fills after goes back unread. Where that
// goroutine steps on, however slowly, nothing is taken over. Mapped and
// read at offsets, pass 2's goroutine writing its spans as any other
// record or ahead into its own output (spansHere).
func TestSplitTakesOver(t *testing.T) {
	for _, here := range []bool{true, false} {
		t.Run(fmt.Sprintf("spansHere=%v", here), func(t *testing.T) {
			defer func(h bool) { testSpansHere = h }(testSpansHere)
			testSpansHere = here
			bothSplitReads(t, testSplitTakesOver)
		})
	}
}

func testSplitTakesOver(t *testing.T) {
	defer func(n func(*spanWorker), w func(*spanWorker), g func(int), c func(), s func(int), f func(*splitter)) {
		newSpanWorker, writingAhead, takingSpan, stallCheck, spanTaken, splitStopped = n, w, g, c, s, f
	}(newSpanWorker, writingAhead, takingSpan, stallCheck, spanTaken, splitStopped)
	// Pass 2's goroutine comes to its first span only once the other
	// goroutine has begun one (the first free: that span), else it could
	// write every span itself before the other runs at all.
	var begun chan struct{}
	takingSpan = func(int) {
		if begun != nil {
			select {
			case <-begun:
			case <-time.After(time.Minute):
			}
		}
	}
	path := writeTemp(t, "runs.hprof", manyRunsDump(100, 100000, 400000, 64<<10)) // 52 records
	_, want, _, _, err := crunchFile(t, path, Options{}, false, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	var helper *spanWorker
	newSpanWorker = func(wk *spanWorker) {
		if helper == nil {
			helper = wk // made first (startSplit)
		}
	}
	taken, stopped := make(chan struct{}), false
	var takenSpan int
	spanTaken = func(i int) {
		if !stopped {
			stopped, takenSpan = true, i
			close(taken)
		}
	}
	stalls := 0
	begun = make(chan struct{})
	writingAhead = func(wk *spanWorker) {
		if wk != helper && stalls == 0 { // the other goroutine's first span
			stalls++
			close(begun)
			select {
			case <-taken:
			case <-time.After(time.Minute):
			}
		}
	}
	_, got, _, _, err := crunchFile(t, path, Options{}, true, 64<<10)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("split, one span stalled: %d bytes of BMD, %v; want the %d of one goroutine", len(got), err, len(want))
	}
	if !stopped {
		t.Fatalf("no span taken over from the stalled goroutine (%d stalled)", stalls)
	}
	if spansStolen < 1 || spanOutsAway != 0 || spansUnused != 0 {
		t.Errorf("span %d taken over: %d spans taken over, %d outputs away, %d written ahead and unused; want 1 or more, 0, 0", takenSpan, spansStolen, spanOutsAway, spansUnused)
	}

	// Slow but stepping: the other goroutine's first span waits until
	// pass 2's goroutine has looked at it three times, each time a step
	// further (the step made here, before the look).
	helper, stalls, begun = nil, 0, make(chan struct{})
	looks, stepped := 0, make(chan struct{})
	var slow atomic.Pointer[spanWorker]
	writingAhead = func(wk *spanWorker) {
		if wk != helper && stalls == 0 {
			stalls++
			slow.Store(wk)
			close(begun)
			select {
			case <-stepped:
			case <-time.After(time.Minute):
			}
		}
	}
	stallCheck = func() {
		wk := slow.Load()
		if wk == nil {
			return
		}
		wk.beat.Add(1)
		if looks++; looks == 3 {
			close(stepped)
		}
	}
	spanTaken = func(int) {}
	_, got, _, _, err = crunchFile(t, path, Options{}, true, 64<<10)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("split, one span slow: %d bytes of BMD, %v; want the %d of one goroutine", len(got), err, len(want))
	}
	if looks < 3 || spansStolen != 0 || spanOutsAway != 0 || spansUnused != 0 {
		t.Errorf("one span slow, stepping: %d looks, %d spans taken over, %d outputs away, %d written ahead and unused; want 3 or more, 0, 0, 0", looks, spansStolen, spanOutsAway, spansUnused)
	}
}

// TestSpanRootExtras: a root read ahead keeps only its object and tag,
// and its other fields (thread, frame, stack trace, JNI reference) apart
// where one is not zero, each root's own; the roots of a span have their
// room at once.
func TestSpanRootExtras(t *testing.T) {
	st := &state{index: &idIndex{}, classIndex: &idIndex{}, dropped: &idIndex{}}
	subs := []hprof.SubRecord{
		{Tag: hprof.SubRootInternedString, ID: 0x10},
		{Tag: hprof.SubRootJNIGlobal, ID: 0x20, JNIRef: 0x99},
		{Tag: hprof.SubRootJavaFrame, ID: 0x30, Thread: 2, Frame: 5},
		{Tag: hprof.SubRootStickyClass, ID: 0x40},
		{Tag: hprof.SubRootThreadObject, ID: 0x50, Thread: 3, StackTrace: 7},
		{Tag: hprof.SubRootUnknown, ID: 0},
	}
	o := &spanOut{}
	for i := range subs {
		o.root(int64(9*i), st, &subs[i])
	}
	if cap(o.roots) < maxSpanRoots {
		t.Errorf("room for %d roots, want maxSpanRoots (%d) at once", cap(o.roots), maxSpanRoots)
	}
	if len(o.roots) != len(subs) || len(o.extras) != 3 {
		t.Fatalf("%d roots, %d with fields beyond the object; want %d and 3", len(o.roots), len(o.extras), len(subs))
	}
	for i, r := range o.roots {
		s := &subs[i]
		var x rootExtra
		if r.extra != 0 {
			x = o.extras[r.extra-1]
		}
		want := rootExtra{jniRef: s.JNIRef, thread: s.Thread, frame: s.Frame, trace: s.StackTrace}
		if r.tag != s.Tag || r.object != s.ID || r.miss != (s.ID != 0) || x != want || (r.extra != 0) != (want != rootExtra{}) {
			t.Errorf("root %d: %+v with %+v, want tag %v, object %#x (not in the indexes), fields %+v, kept apart only if set", i, r, x, s.Tag, s.ID, want)
		}
	}
	o.reset()
	if len(o.roots) != 0 || len(o.extras) != 0 {
		t.Errorf("reset leaves %d roots and %d fields", len(o.roots), len(o.extras))
	}
}

// TestSpanRecordChanged: where the file changes between pass 1 and pass
// 2, so that the heap dump record pass 2's goroutine reads at a span's
// start is not the one the span's output was written from (its header's
// time changed here, harmless to a crunch that reads the file once), the
// split stops with an error that says where (recordChanged), not with a
// BMD written from records the file no longer holds. The same file
// crunched whole after the change gives a BMD, which shows the error is
// the check's, not the change's.
func TestSpanRecordChanged(t *testing.T) { bothSplitReads(t, testSpanRecordChanged) }

func testSpanRecordChanged(t *testing.T) {
	data := spansDump(4, 4<<10)
	path := writeTemp(t, "changed.hprof", data)
	r, err := hprof.NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	var heap []hprof.Record
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag.IsHeapDump() {
			heap = append(heap, rec)
		}
	}
	// The records past what pass 2's goroutine may have read before it
	// splits: read at offsets, the first fill of its buffer
	// (atBufferBytes).
	i := slices.IndexFunc(heap, func(rec hprof.Record) bool { return rec.Offset >= atBufferBytes })
	if i < 0 || len(heap)-i < 10 {
		t.Fatalf("%d heap dump records, %d past offset %d; want 10 or more", len(heap), len(heap)-i, atBufferBytes)
	}
	changed := heap[i:]
	writes := map[int64][]byte{}
	for _, rec := range changed {
		writes[rec.Offset+1] = binary.BigEndian.AppendUint32(nil, rec.Time+1)
	}
	once := changeWhenSplit(t, path, writes)
	// Spans of several records (minSpan 64 KiB), written whole from
	// their outputs (writeSpanRecords).
	_, _, _, _, err = crunchFile(t, path, Options{}, true, 64<<10)
	at := slices.IndexFunc(changed, func(rec hprof.Record) bool {
		return err != nil && strings.HasSuffix(err.Error(), fmt.Sprintf("%s of %d bytes at offset %d where its span's goroutine read a %s of %d bytes: the file changed",
			rec.Tag, rec.Length, rec.Offset, rec.Tag, rec.Length))
	})
	if !*once || at < 0 || spansUnread == 0 {
		t.Fatalf("split, the records from offset %d changed when pass 2 began: error %v, %d spans unread before it; want one saying the file changed at one of those records, after some", changed[0].Offset, err, spansUnread)
	}
	if _, _, _, _, err := crunchFile(t, path, Options{}, false, 64<<10); err != nil {
		t.Fatalf("one goroutine, the file as changed: %v", err)
	}
}

// TestSplitArrayClasses: object arrays whose class ID is no class of the
// dump (null, an instance, an ID not in the dump), which HPROF does not
// forbid, are written by a split pass 2 as by one goroutine, byte for
// byte: the goroutine writing a span ahead numbers such a class as an
// object of the dump (spanWorker.resolve) or leaves the array to pass 2's
// goroutine.
func TestSplitArrayClasses(t *testing.T) { bothSplitReads(t, testSplitArrayClasses) }

func testSplitArrayClasses(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		var buf bytes.Buffer
		w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: idSize})
		if err != nil {
			t.Fatal(err)
		}
		w.SegmentSize = 4 << 10
		enc := w.Encoder()
		w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("java.lang.Object")))
		w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 2, []byte("[Ljava.lang.Object;")))
		const object, array = 0x10, 0x20
		w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: object, Name: 1}))
		w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: array, Name: 2}))
		w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: object, Class: hprof.ClassDump{ID: object}})
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: array, Class: hprof.ClassDump{ID: array, Super: object}})
		id := func(i int) uint64 { return 0x100000 + 16*uint64(i) }
		for i := range 20000 {
			if i%2 == 0 {
				w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id(i), StackTrace: 1, ClassID: object})
				continue
			}
			class := uint64(array)
			switch i % 14 {
			case 3:
				class = 0
			case 5:
				class = id(i - 1) // an instance
			case 7:
				class = 0xbeef0000 + uint64(i%3) // not in the dump
			case 9:
				class = object
			}
			w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: id(i), StackTrace: 1, ClassID: class, Elements: []uint64{id(i - 1), 0}})
		}
		w.EndHeapDump()
		w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		path := writeTemp(t, "arrays.hprof", buf.Bytes())
		if added, refused := sameSplit(t, path, Options{}, 64<<10); added == 0 || refused != 0 || spansUnread == 0 {
			t.Errorf("%d-byte IDs: %d runs added, %d refused, %d spans unread; want some, none, some", idSize, added, refused, spansUnread)
		}
	}
}

// changeWhenSplit writes each of writes (bytes by file offset) into the
// file at path when pass 2 starts its split (the first spanWorker made),
// and reports through the bool it returns whether it did; the test's end
// restores newSpanWorker.
func changeWhenSplit(t *testing.T, path string, writes map[int64][]byte) *bool {
	t.Helper()
	prev := newSpanWorker
	t.Cleanup(func() { newSpanWorker = prev })
	done := new(bool)
	newSpanWorker = func(*spanWorker) {
		if *done {
			return
		}
		*done = true
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for off, b := range writes {
			if _, err := f.WriteAt(b, off); err != nil {
				t.Error(err)
			}
		}
	}
	return done
}
