package hprof

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// copyHPROF reads src with a Reader and writes every record back with a
// Writer, the identity transformation.
func copyHPROF(src []byte, segSize int) ([]byte, map[SubTag]int, error) {
	return copyHPROFWith(src, segSize, (*Writer).WriteSub)
}

// copyHPROFWith is copyHPROF with each heap sub-record written by write.
func copyHPROFWith(src []byte, segSize int, write func(*Writer, *SubRecord) error) ([]byte, map[SubTag]int, error) {
	r, err := NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, nil, err
	}
	return copyReaderWith(r, segSize, write)
}

// copyReader is copyHPROF of what r reads.
func copyReader(r *Reader, segSize int) ([]byte, map[SubTag]int, error) {
	return copyReaderWith(r, segSize, (*Writer).WriteSub)
}

// copyReaderWith is copyHPROFWith of what r reads.
func copyReaderWith(r *Reader, segSize int, write func(*Writer, *SubRecord) error) ([]byte, map[SubTag]int, error) {
	r.ArrayData = true
	var out bytes.Buffer
	w, err := NewWriter(&out, r.Header())
	if err != nil {
		return nil, nil, err
	}
	w.SegmentSize = segSize
	counts := map[SubTag]int{}
	for rec, err := range r.Records() {
		if err != nil {
			return nil, nil, err
		}
		if !rec.Tag.IsHeapDump() {
			body, err := r.Body()
			if err != nil {
				return nil, nil, err
			}
			if err := w.WriteRecord(rec.Tag, rec.Time, body); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := w.BeginHeapDump(rec.Tag, rec.Time); err != nil {
			return nil, nil, err
		}
		for s, err := range r.SubRecords() {
			if err != nil {
				return nil, nil, err
			}
			counts[s.Tag]++
			if err := write(w, s); err != nil {
				return nil, nil, err
			}
		}
		if err := w.EndHeapDump(); err != nil {
			return nil, nil, err
		}
	}
	err = w.Flush()
	return out.Bytes(), counts, err
}

// TestCorpusIdentity reads every real dump of the corpus and writes it back:
// the bytes must be identical, which checks every sub-record layout.
func TestCorpusIdentity(t *testing.T) {
	for _, p := range testutil.CorpusHPROFs(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := testutil.ReadAll(t, p)
			out, counts, err := copyHPROF(src, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, src) {
				t.Fatalf("copy differs: %d bytes in, %d out", len(src), len(out))
			}
			if counts[SubInstanceDump] == 0 || counts[SubClassDump] == 0 {
				t.Fatalf("no instances or classes read: %v", counts)
			}
			t.Logf("%v", counts)
		})
	}
}

// writeInRoom writes instances and object arrays through Instance and
// ObjectArray, filling the room they return, and the other sub-records
// with WriteSub.
func writeInRoom(w *Writer, s *SubRecord) error {
	switch s.Tag {
	case SubInstanceDump:
		data, err := w.Instance(s.ID, s.StackTrace, s.ClassID, len(s.Data))
		if err != nil {
			return err
		}
		if len(data) != len(s.Data) {
			return fmt.Errorf("Instance gave %d bytes for %d", len(data), len(s.Data))
		}
		for i, b := range data {
			if b != 0 {
				return fmt.Errorf("Instance gave byte %d = %d, not zero", i, b)
			}
		}
		copy(data, s.Data)
	case SubObjectArrayDump:
		room, err := w.ObjectArray(s.ID, s.StackTrace, s.ClassID, len(s.Elements))
		if err != nil {
			return err
		}
		if len(room) != len(s.Elements)*w.idSize {
			return fmt.Errorf("ObjectArray gave %d bytes for %d elements", len(room), len(s.Elements))
		}
		room = room[:0]
		for _, e := range s.Elements {
			room = w.enc.AppendID(room, e)
		}
	default:
		return w.WriteSub(s)
	}
	return nil
}

// TestRoom: instances and object arrays written in the room that Instance
// and ObjectArray return give the same file as WriteSub, on every real
// dump, with segments of any size (cut at the same places).
func TestRoom(t *testing.T) {
	dumps := append(testutil.CorpusHPROFs(t), testutil.Fixture("sample.hprof.gz"), testutil.Fixture("sample32.hprof.gz"))
	for _, p := range dumps {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := testutil.ReadAll(t, p)
			for _, seg := range []int{1 << 30, 4096, 1} {
				want, _, err := copyHPROF(src, seg)
				if err != nil {
					t.Fatal(err)
				}
				got, counts, err := copyHPROFWith(src, seg, writeInRoom)
				if err != nil {
					t.Fatalf("segments of %d: %v", seg, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("segments of %d: %d bytes written in room, %d with WriteSub", seg, len(got), len(want))
				}
				if counts[SubInstanceDump] == 0 || counts[SubObjectArrayDump] == 0 {
					t.Fatalf("no instances or object arrays: %v", counts)
				}
			}
		})
	}
}

// TestInstanceZeros: Instance returns zeros, without clearing them, in
// the room the segment held before: after sub-records of bytes other than
// zero cut into segments, after a zero-filled array in a record of its
// own (whose header the Writer makes in the segment's room), and in the
// next heap dump. Not clearing the segment when it is written fails it
// (not clearing that header would not: an instance's own header covers
// it).
func TestInstanceZeros(t *testing.T) {
	w, err := NewWriter(io.Discard, Header{Version: "JAVA PROFILE 1.0.2", IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	w.SegmentSize = 100
	ones := bytes.Repeat([]byte{0xFF}, 40)
	check := func(when string) {
		t.Helper()
		for size := range 60 {
			data, err := w.Instance(8, 0, 16, size)
			if err != nil {
				t.Fatal(err)
			}
			if i := slices.IndexFunc(data, func(b byte) bool { return b != 0 }); i >= 0 {
				t.Fatalf("%s: Instance of %d bytes gave byte %d = %#x", when, size, i, data[i])
			}
			for i := range data {
				data[i] = 0xEE
			}
		}
	}
	if err := w.BeginHeapDump(TagHeapDump, 0); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := w.WriteSub(&SubRecord{Tag: SubInstanceDump, ID: 8, ClassID: 16, Data: ones}); err != nil {
			t.Fatal(err)
		}
	}
	check("after segments")
	big := &SubRecord{Tag: SubPrimitiveArrayDump, ID: 0xFFFFFFFF, StackTrace: 0xFFFFFFFF, Length: 1000, ElemType: Int}
	if err := w.WriteSub(big); err != nil {
		t.Fatal(err)
	}
	check("after an array of zeros")
	if err := w.EndHeapDump(); err != nil {
		t.Fatal(err)
	}
	if err := w.BeginHeapDump(TagHeapDump, 0); err != nil {
		t.Fatal(err)
	}
	check("in the next heap dump")
	if err := w.WriteSub(big); err != nil {
		t.Fatal(err)
	}
	check("after an array of zeros, first in its heap dump")
}

// TestZeroArray: primitive arrays of zeros written with ZeroArray give
// the file WriteSub gives with nil Data, among other sub-records, with
// both ID sizes, every element type (and an invalid one), lengths from 0
// to beyond the segment (which takes a record of its own), segments of
// many sizes, and heap dumps of both tags; and it is refused outside a
// heap dump as WriteSub is.
func TestZeroArray(t *testing.T) {
	types := []BasicType{Boolean, Char, Float, Double, Byte, Short, Int, Long, 3}
	for _, idSize := range []int{4, 8} {
		for _, seg := range []int{1, 64, 1000, 1 << 20} {
			for _, tag := range []Tag{TagHeapDump, TagHeapDumpSegment} {
				rng := rand.New(rand.NewPCG(uint64(idSize), uint64(seg)))
				var subs []SubRecord
				for range 300 {
					s := SubRecord{Tag: SubPrimitiveArrayDump, ID: rng.Uint64(), StackTrace: rng.Uint32(), ElemType: types[rng.IntN(len(types))]}
					switch rng.IntN(8) {
					case 0:
						s = SubRecord{Tag: SubInstanceDump, ID: rng.Uint64(), ClassID: rng.Uint64(), Data: bytes.Repeat([]byte{0xAB}, rng.IntN(50))}
					case 1:
						s.Length = uint32(rng.IntN(3000))
					default:
						s.Length = uint32(rng.IntN(40))
					}
					subs = append(subs, s)
				}
				write := func(zeros bool) []byte {
					out := sha256.New()
					w, err := NewWriter(out, Header{Version: Version102, IDSize: idSize})
					if err != nil {
						t.Fatal(err)
					}
					w.SegmentSize = seg
					if err := w.ZeroArray(1, 2, 3, Int); err == nil || !strings.Contains(err.Error(), "outside a heap dump") {
						t.Fatalf("ZeroArray outside a heap dump: %v", err)
					}
					w.BeginHeapDump(tag, 7)
					for i := range subs {
						s := &subs[i]
						if zeros && s.Tag == SubPrimitiveArrayDump {
							err = w.ZeroArray(s.ID, s.StackTrace, s.Length, s.ElemType)
						} else {
							err = w.WriteSub(s)
						}
						if err != nil {
							t.Fatal(err)
						}
					}
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
					return out.Sum(nil)
				}
				if got, want := write(true), write(false); !bytes.Equal(got, want) {
					t.Fatalf("IDs of %d, segments of %d, %s: SHA-256 %x with ZeroArray, %x with WriteSub", idSize, seg, tag, got, want)
				}
			}
		}
	}
}

// TestRoomRefused: Instance and ObjectArray outside a heap dump, or for a
// sub-record too large for a record, return an error and write nothing.
func TestRoomRefused(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, Header{Version: "JAVA PROFILE 1.0.2", IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Instance(8, 0, 16, 4); err == nil || !strings.Contains(err.Error(), "outside a heap dump") {
		t.Errorf("Instance outside a heap dump: %v", err)
	}
	if _, err := w.ObjectArray(8, 0, 16, 4); err == nil || !strings.Contains(err.Error(), "outside a heap dump") {
		t.Errorf("ObjectArray outside a heap dump: %v", err)
	}
	if err := w.BeginHeapDump(TagHeapDump, 0); err != nil {
		t.Fatal(err)
	}
	// A record's body is at most 2³²-1 bytes, and an 8-byte-ID sub-record
	// has 25 bytes before its data: the largest data WriteSub takes is
	// 2³²-1-16-25 bytes (16: room for the record's own cut).
	sizes := []int{-1}
	if big := int64(1) << 32; int64(int(big)) == big { // not on 32-bit platforms, whose int stops short
		sizes = append(sizes, int(big), int(big-41))
	}
	for _, size := range sizes {
		if _, err := w.Instance(8, 0, 16, size); err == nil || !strings.Contains(err.Error(), "does not fit") {
			t.Errorf("Instance of %d bytes: %v", size, err)
		}
	}
	for _, n := range []int{-1, 1 << 29, (1<<32-41)/8 + 1} {
		if _, err := w.ObjectArray(8, 0, 16, n); err == nil || !strings.Contains(err.Error(), "does not fit") {
			t.Errorf("ObjectArray of %d elements: %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := len("JAVA PROFILE 1.0.2") + 1 + 12 + 9; out.Len() != want {
		t.Errorf("wrote %d bytes, want %d: the header and an empty HEAP DUMP", out.Len(), want)
	}
}

// TestClassDumpCounts: WriteSub refuses a CLASS DUMP with more than 65535
// constants, static fields or instance fields, whose u2 counts would
// otherwise wrap and leave the rest of the segment unreadable, and writes
// one with 65535.
func TestClassDumpCounts(t *testing.T) {
	for _, c := range []struct {
		constants, statics, fields int
		ok                         bool
	}{{65535, 65535, 65535, true}, {65536, 0, 0, false}, {0, 65536, 0, false}, {0, 0, 65536, false}} {
		var out bytes.Buffer
		w, err := NewWriter(&out, Header{Version: Version102, IDSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.BeginHeapDump(TagHeapDumpSegment, 0); err != nil {
			t.Fatal(err)
		}
		s := &SubRecord{Tag: SubClassDump, Class: ClassDump{ID: 16,
			Constants: make([]Constant, c.constants), Statics: make([]StaticField, c.statics), Fields: make([]Field, c.fields)}}
		for i := range s.Class.Constants {
			s.Class.Constants[i].Type = Int
		}
		for i := range s.Class.Statics {
			s.Class.Statics[i].Type = Int
		}
		for i := range s.Class.Fields {
			s.Class.Fields[i].Type = Int
		}
		err = w.WriteSub(s)
		if !c.ok {
			if err == nil || !strings.Contains(err.Error(), "65535 at most") {
				t.Errorf("%d constants, %d statics, %d fields: %v, want refused", c.constants, c.statics, c.fields, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.EndHeapDump(); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		var got SubRecord
		if err := r.NextSub(&got); err != nil {
			t.Fatal(err)
		}
		if g := &got.Class; len(g.Constants) != c.constants || len(g.Statics) != c.statics || len(g.Fields) != c.fields {
			t.Errorf("read back %d constants, %d statics, %d fields", len(g.Constants), len(g.Statics), len(g.Fields))
		}
	}
}

// TestRoomRefusedWithRoom: with room left in the Writer's buffer (a
// record written before), Instance and ObjectArray still refuse a
// negative size and any call outside a heap dump, and an Instance larger
// than the segment size, alone in its heap dump, gives one HEAP DUMP
// record as WriteSub does.
func TestRoomRefusedWithRoom(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, Header{Version: "JAVA PROFILE 1.0.2", IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	w.SegmentSize = 1 << 10
	if err := w.BeginHeapDump(TagHeapDump, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Instance(8, 0, 16, 100); err != nil {
		t.Fatal(err)
	}
	// The buffer is empty again, with room for 100 bytes and more.
	if err := w.EndHeapDump(); err != nil {
		t.Fatal(err)
	}
	if err := w.BeginHeapDump(TagHeapDump, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Instance(8, 0, 16, -1); err == nil {
		t.Error("Instance of -1 bytes: no error")
	}
	if _, err := w.ObjectArray(8, 0, 16, -1); err == nil {
		t.Error("ObjectArray of -1 elements: no error")
	}
	if err := w.EndHeapDump(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Instance(8, 0, 16, 4); err == nil {
		t.Error("Instance after EndHeapDump: no error")
	}
	if _, err := w.ObjectArray(8, 0, 16, 4); err == nil {
		t.Error("ObjectArray after EndHeapDump: no error")
	}

	one := func(write func(w *Writer) error) []byte {
		var out bytes.Buffer
		w, err := NewWriter(&out, Header{Version: "JAVA PROFILE 1.0.2", IDSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		w.SegmentSize = 16
		if err := w.BeginHeapDump(TagHeapDump, 0); err != nil {
			t.Fatal(err)
		}
		if err := write(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	want := one(func(w *Writer) error {
		return w.WriteSub(&SubRecord{Tag: SubInstanceDump, ID: 8, ClassID: 16, Data: make([]byte, 32)})
	})
	got := one(func(w *Writer) error { _, err := w.Instance(8, 0, 16, 32); return err })
	if !bytes.Equal(got, want) {
		t.Errorf("an Instance over the segment size, alone: %x, WriteSub %x", got, want)
	}
}

// failAfter is an io.Writer that fails once it has taken n bytes.
type failAfter struct{ n int }

func (f *failAfter) Write(b []byte) (int, error) {
	if len(b) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(b)
	return len(b), nil
}

// TestRoomAfterWriteError: once writing has failed, Instance and
// ObjectArray return the error, however much room the buffer has.
func TestRoomAfterWriteError(t *testing.T) {
	w, err := NewWriter(&failAfter{n: 100}, Header{Version: "JAVA PROFILE 1.0.2", IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.SegmentSize = 64 << 10
	if err := w.BeginHeapDump(TagHeapDump, 0); err != nil {
		t.Fatal(err)
	}
	// Segments are flushed to the bufio.Writer, which writes 1 MiB at a
	// time: write until the error comes back.
	for i := 0; ; i++ {
		if _, err := w.Instance(8, 0, 16, 60<<10); err != nil {
			break
		}
		if i > 100 {
			t.Fatal("no error after 6 MB to a writer that fails after 100 bytes")
		}
	}
	if _, err := w.Instance(8, 0, 16, 4); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Instance after a write error: %v", err)
	}
	if _, err := w.ObjectArray(8, 0, 16, 4); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("ObjectArray after a write error: %v", err)
	}
}

// TestSegmentSplit checks that a small segment size cuts a HEAP DUMP into
// segments closed by HEAP DUMP END, and that the result reads back to the
// same sub-records.
func TestSegmentSplit(t *testing.T) {
	src := testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "jdk-mat-sun_jdk5_64bit.hprof"))
	out, counts, err := copyHPROF(src, 4096)
	if err != nil {
		t.Fatal(err)
	}
	again, counts2, err := copyHPROF(out, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, again) {
		t.Fatal("re-reading the segmented copy changed it")
	}
	for k, v := range counts {
		if counts2[k] != v {
			t.Fatalf("%s: %d before split, %d after", k, v, counts2[k])
		}
	}
	r, _ := NewReader(bytes.NewReader(out))
	tags := map[Tag]int{}
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		tags[rec.Tag]++
	}
	if tags[TagHeapDumpSegment] < 2 || tags[TagHeapDumpEnd] != 1 || tags[TagHeapDump] != 0 {
		t.Fatalf("record tags after split: %v", tags)
	}
}

// TestSegmentAllocatedOnce: a Writer's segment is allocated at its full
// size when it first grows, not grown by append's steps (which allocated
// about five times the segment size, each page of it a page fault): writing
// 4 MiB of sub-records through Instance and WriteSub, with the default
// segment size, allocates the segment and the output buffer once each,
// whatever the order of the two calls. With a segment size of 1 GiB, the
// segment doubles from 1 MiB as the 4 MiB need, not allocated whole.
// Bytes allocated (runtime.MemStats.TotalAlloc), the least of three runs.
func TestSegmentAllocatedOnce(t *testing.T) {
	for _, seg := range []int{0, 1 << 30} {
		for _, first := range []string{"Instance", "WriteSub"} {
			least := segmentAlloc(t, seg, first == "Instance")
			// The segment (1 MiB) and the output buffer (1 MiB), with room
			// for the Writer's small parts; growing by steps allocated 5
			// MiB more. With 1 GiB: the doublings from 1 MiB to what the
			// 4.3 MB written need, and the buffer (10.9 MB allocated,
			// where the segment allocated whole was 1 GiB).
			limit := uint64(DefaultSegmentSize + 1<<20 + 256<<10)
			if seg > 0 {
				limit = 16 << 20
			}
			if testutil.RaceEnabled {
				// The instrumented build allocates the zeros that
				// WriteSub appends for each primitive array (2.2 MB of
				// them here), which a plain build appends in place: 5.3
				// and 17.8 MB were measured under -race.
				limit += 4 << 20
			}
			if least > limit {
				t.Errorf("segment size %d, %s first: writing 4 MiB of sub-records allocated %d bytes, want at most %d", seg, first, least, limit)
			}
		}
	}
}

// segmentAlloc returns the bytes allocated by writing 4 MiB of instances
// and primitive arrays in turns, an instance first or not, with segments
// of seg bytes (0: the default), the least of three runs.
func segmentAlloc(t *testing.T, seg int, instanceFirst bool) uint64 {
	t.Helper()
	least := uint64(1 << 63)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w, err := NewWriter(io.Discard, Header{Version: Version102, IDSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		w.SegmentSize = seg
		w.BeginHeapDump(TagHeapDumpSegment, 0)
		sub := SubRecord{Tag: SubPrimitiveArrayDump, ElemType: Int, Length: 100}
		for i := range 4 << 20 / 400 {
			if (i%2 == 0) == instanceFirst {
				if _, err := w.Instance(uint64(i+1), 0, 8, 400); err != nil {
					t.Fatal(err)
				}
			} else {
				sub.ID = uint64(i + 1)
				if err := w.WriteSub(&sub); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestTruncatedEverywhere cuts a real dump at every offset of its first
// 2 KiB and at every 401st beyond: a cut between two records leaves a
// shorter, sound file; any other cut gives a *FormatError wrapping
// io.ErrUnexpectedEOF, at the cut record (or at the sub-record cut, within
// it), and a cut top-level record says exactly how many bytes it lacks.
func TestTruncatedEverywhere(t *testing.T) {
	src := testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "jdk-hprof-slurp-hprof-32.bin"))
	type span struct {
		start, end int64
		heap       bool
	}
	var recs []span
	r, err := NewReader(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	headerEnd := r.Offset()
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, span{rec.Offset, rec.Offset + 9 + int64(rec.Length), rec.Tag.IsHeapDump()})
	}
	checked := 0
	for cut := int64(0); cut < int64(len(src)); cut++ {
		if cut > 2048 && cut%401 != 0 {
			continue
		}
		checked++
		_, _, err := copyHPROF(src[:cut], 1<<30)
		k := sort.Search(len(recs), func(i int) bool { return recs[i].end > cut })
		if cut >= headerEnd && (k == len(recs) || recs[k].start == cut) {
			if err != nil {
				t.Fatalf("cut at %d, between records: %v", cut, err)
			}
			continue
		}
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, io.ErrUnexpectedEOF) && cut >= headerEnd {
			t.Fatalf("cut at %d: %v, want a FormatError saying truncated", cut, err)
		}
		if cut < headerEnd {
			continue
		}
		rec := recs[k]
		switch {
		case fe.Offset < rec.start || fe.Offset > cut:
			t.Fatalf("cut at %d in the record at %d: error at offset %d", cut, rec.start, fe.Offset)
		case !rec.heap && cut >= rec.start+9:
			want := needsMoreText(rec.end - cut)
			if fe.Offset != rec.start || !strings.HasSuffix(fe.Msg, want) {
				t.Fatalf("cut at %d in the record at %d..%d: %v, want %q at offset %d", cut, rec.start, rec.end, err, want, rec.start)
			}
		}
		// Skipping every record, heap dumps included, meets the cut in
		// the record and says what it lacks.
		if cut >= rec.start+9 {
			err := skipAll(src[:cut])
			want := needsMoreText(rec.end - cut)
			if !errors.As(err, &fe) || fe.Offset != rec.start || !strings.HasSuffix(fe.Msg, want) {
				t.Fatalf("cut at %d, skipping the record at %d..%d: %v, want %q at offset %d", cut, rec.start, rec.end, err, want, rec.start)
			}
		}
	}
	t.Logf("%d cuts of %d bytes, %d records", checked, len(src), len(recs))
}

// skipAll reads the record headers of src, skipping every body.
func skipAll(src []byte) error {
	r, err := NewReader(bytes.NewReader(src))
	if err != nil {
		return err
	}
	for _, err := range r.Records() {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestNotHPROF(t *testing.T) {
	for _, in := range []string{"", "PK\x03\x04zipzip", "JAVA PROFILE 1.0.2", "JAVA PROFILE 1.0.2\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00"} {
		_, err := NewReader(bytes.NewReader([]byte(in)))
		if err == nil {
			t.Fatalf("%q: no error", in)
		}
	}
	_, err := NewReader(bytes.NewReader([]byte("hello world, not a heap dump at all")))
	if !errors.Is(err, ErrNotHPROF) {
		t.Fatalf("want ErrNotHPROF, got %v", err)
	}
}

func TestUnknownSubRecord(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{Version: Version102, IDSize: 4})
	w.WriteRecord(TagHeapDumpSegment, 0, []byte{0x42, 1, 2, 3, 4})
	w.Flush()
	r, _ := NewReader(bytes.NewReader(buf.Bytes()))
	r.Next()
	var s SubRecord
	err := r.NextSub(&s)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Tag != 0x42 || fe.Offset != 31+9 {
		t.Fatalf("got %v", err)
	}
}

// TestCorruptCountNoHugeAlloc: an array whose count asks for far more than
// its record or file holds (up to 2^32-1 elements: 32 GiB of IDs) is a
// *FormatError at the array's offset, and reading it allocates a few
// kilobytes whatever the count: nothing is sized by the count before its
// bytes are there. It measures bytes (runtime.MemStats.TotalAlloc), not
// allocations, of NextSub alone (the Reader's own buffer is allocated
// before), the least of three runs: -race and the test runner's own
// goroutines do not make it fail.
func TestCorruptCountNoHugeAlloc(t *testing.T) {
	const limit = 64 << 10   // bytes; a count of 2^17 IDs would take 1 MiB
	const subOffset = 31 + 9 // after the header ("JAVA PROFILE 1.0.2\0", ID size, time) and the record header
	be32 := func(b []byte, v uint32) []byte { return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v)) }
	for _, c := range []struct {
		name      string
		body      func(n uint32) []byte
		elemSize  int
		truncate  bool // the record claims 4 GiB and the file ends after body
		arrayData bool
	}{
		{"object array in a short record", func(n uint32) []byte {
			b := be32(be32(be32([]byte{byte(SubObjectArrayDump)}, 1), 0), n)
			return be32(be32(be32(b, 2), 0x10), 0x14) // class, then 2 elements
		}, 4, false, false},
		{"object array in a truncated file", func(n uint32) []byte {
			b := be32(be32(be32([]byte{byte(SubObjectArrayDump)}, 1), 0), n)
			return be32(be32(be32(b, 2), 0x10), 0x14)
		}, 4, true, false},
		{"long array in a short record", func(n uint32) []byte {
			b := be32(be32(be32([]byte{byte(SubPrimitiveArrayDump)}, 1), 0), n)
			return append(b, byte(Long), 1, 2, 3, 4, 5, 6, 7, 8)
		}, 8, false, true},
		{"long array in a truncated file", func(n uint32) []byte {
			b := be32(be32(be32([]byte{byte(SubPrimitiveArrayDump)}, 1), 0), n)
			return append(b, byte(Long), 1, 2, 3, 4, 5, 6, 7, 8)
		}, 8, true, true},
	} {
		for _, n := range []uint32{1 << 17, 1 << 24, 1<<32 - 1} {
			var buf bytes.Buffer
			w, _ := NewWriter(&buf, Header{Version: Version102, IDSize: 4})
			w.WriteRecord(TagHeapDump, 0, c.body(n))
			w.Flush()
			data := buf.Bytes()
			// Elements beyond the record: the reader says so; within the
			// record but beyond the file: the file is truncated.
			want, truncated := "run past the end of its HEAP DUMP", false
			if c.truncate {
				copy(data[subOffset-4:], []byte{0xFF, 0xFF, 0xFF, 0xFF})
				if int64(n)*int64(c.elemSize) < 1<<32-32 {
					want, truncated = "truncated", true
				}
			}
			least := uint64(1 << 63)
			var err error
			var s SubRecord
			for range 3 {
				r, rerr := NewReader(bytes.NewReader(data))
				if rerr != nil {
					t.Fatal(rerr)
				}
				r.ArrayData = c.arrayData
				if _, rerr := r.Next(); rerr != nil {
					t.Fatal(rerr)
				}
				s = SubRecord{}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err = r.NextSub(&s)
				runtime.ReadMemStats(&after)
				least = min(least, after.TotalAlloc-before.TotalAlloc)
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset != subOffset || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, count %d: error %v, want a *FormatError at offset %d saying %q", c.name, n, err, subOffset, want)
			}
			if truncated && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s, count %d: error %v does not wrap io.ErrUnexpectedEOF", c.name, n, err)
			}
			if least > limit || len(s.Elements) > 2 || len(s.Data) > 8 {
				t.Fatalf("%s, count %d: NextSub allocated %d bytes (limit %d), kept %d elements and %d data bytes",
					c.name, n, least, limit, len(s.Elements), len(s.Data))
			}
		}
	}
}

// TestSkipElements: with SkipElements, object arrays come back with their
// ID, class and length but no elements, and every other sub-record is read
// as without it.
func TestSkipElements(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	type arr struct {
		id, class uint64
		n         uint32
	}
	read := func(skip bool) (arrays []arr, elems, subs int) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SkipElements = skip
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
				subs++
				if s.Tag == SubObjectArrayDump {
					arrays = append(arrays, arr{s.ID, s.ClassID, s.Length})
					elems += len(s.Elements)
				}
			}
		}
		return
	}
	a1, e1, n1 := read(false)
	a2, e2, n2 := read(true)
	if e1 == 0 || e2 != 0 {
		t.Errorf("elements decoded: %d without SkipElements, %d with", e1, e2)
	}
	if n1 != n2 || len(a1) != len(a2) {
		t.Fatalf("sub-records %d vs %d, object arrays %d vs %d", n1, n2, len(a1), len(a2))
	}
	for i := range a1 {
		if a1[i] != a2[i] {
			t.Fatalf("object array %d: %+v vs %+v", i, a1[i], a2[i])
		}
	}
}

// TestRootFieldsOfItsKind: a root has the fields of its own kind and zero
// for the others, not the values of the root read before it (FuzzCrunch
// found an oracle printing a stale frame number of an UNREACHABLE).
func TestRootFieldsOfItsKind(t *testing.T) {
	in := []SubRecord{
		{Tag: SubRootJavaFrame, ID: 1, Thread: 7, Frame: 3},
		{Tag: SubRootThreadObject, ID: 2, Thread: 8, StackTrace: 9},
		{Tag: SubRootJNIGlobal, ID: 3, JNIRef: 0x44},
		{Tag: SubUnreachable, ID: 4},
		{Tag: SubRootNativeStack, ID: 5, Thread: 6},
		{Tag: SubRootUnknown, ID: 6},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.BeginHeapDump(TagHeapDumpSegment, 0)
	for i := range in {
		if err := w.WriteSub(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.EndHeapDump()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var got []SubRecord
	for _, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		for s, err := range r.SubRecords() {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, SubRecord{Tag: s.Tag, ID: s.ID, Thread: s.Thread, Frame: s.Frame, StackTrace: s.StackTrace, JNIRef: s.JNIRef})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(in) {
		t.Errorf("read back\n%v\nwant\n%v", got, in)
	}
}

// TestVersionLength: the Reader and the Writer agree on the longest version
// string, MaxVersionLen bytes, whatever the Reader has buffered (FuzzWriter
// RoundTrip found a 54-byte version the Reader read and the Writer refused).
func TestVersionLength(t *testing.T) {
	for _, n := range []int{MaxVersionLen, MaxVersionLen + 1, MaxVersionLen + 20} {
		v := "JAVA PROFILE " + strings.Repeat("1", n-len("JAVA PROFILE "))
		file := append([]byte(v), 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0)
		file = append(file, make([]byte, 100)...) // records' worth of bytes in the buffer
		_, rerr := NewReader(bytes.NewReader(file))
		_, werr := NewWriter(io.Discard, Header{Version: v, IDSize: 4})
		if ok := n <= MaxVersionLen; (rerr == nil) != ok || (werr == nil) != ok {
			t.Errorf("version of %d bytes: Reader %v, Writer %v; want both to accept it: %v", n, rerr, werr, ok)
		}
		var fe *FormatError
		if rerr != nil && !errors.As(rerr, &fe) {
			t.Errorf("version of %d bytes: %T is not a *FormatError", n, rerr)
		}
	}
}

// TestHeapDumpAroundTopLevelRecord: a top-level record written while a heap
// dump is open keeps the heap dump one dump. A HEAP DUMP with sub-records
// becomes HEAP DUMP SEGMENTs closed by a HEAP DUMP END; one left empty is
// written empty, with its own tag, after the top-level record, and gets no
// HEAP DUMP END, which would add an empty dump to the file.
func TestHeapDumpAroundTopLevelRecord(t *testing.T) {
	root := &SubRecord{Tag: SubRootUnknown, ID: 7}
	for _, c := range []struct {
		name          string
		tag           Tag
		before, after bool // a sub-record before and after the top-level record
		want          string
	}{
		{"empty HEAP DUMP", TagHeapDump, false, false, "UNLOAD CLASS HEAP DUMP(0)"},
		{"HEAP DUMP with sub-records after", TagHeapDump, false, true, "UNLOAD CLASS HEAP DUMP SEGMENT(1) HEAP DUMP END"},
		{"HEAP DUMP with sub-records before", TagHeapDump, true, false, "HEAP DUMP SEGMENT(1) UNLOAD CLASS HEAP DUMP END"},
		{"HEAP DUMP with sub-records around", TagHeapDump, true, true, "HEAP DUMP SEGMENT(1) UNLOAD CLASS HEAP DUMP SEGMENT(1) HEAP DUMP END"},
		{"empty HEAP DUMP SEGMENT", TagHeapDumpSegment, false, false, "UNLOAD CLASS HEAP DUMP SEGMENT(0)"},
		{"HEAP DUMP SEGMENT with sub-records after", TagHeapDumpSegment, false, true, "UNLOAD CLASS HEAP DUMP SEGMENT(1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			w, err := NewWriter(&out, Header{Version: Version102, IDSize: 4})
			if err != nil {
				t.Fatal(err)
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(w.BeginHeapDump(c.tag, 0))
			if c.before {
				must(w.WriteSub(root))
			}
			must(w.WriteRecord(TagUnloadClass, 0, w.Encoder().AppendSerial(nil, 1)))
			if c.after {
				must(w.WriteSub(root))
			}
			must(w.EndHeapDump())
			must(w.Flush())
			r, err := NewReader(bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rec, err := range r.Records() {
				if err != nil {
					t.Fatal(err)
				}
				if !rec.Tag.IsHeapDump() {
					got = append(got, rec.Tag.String())
					continue
				}
				n := 0
				for _, err := range r.SubRecords() {
					if err != nil {
						t.Fatal(err)
					}
					n++
				}
				got = append(got, fmt.Sprintf("%s(%d)", rec.Tag, n))
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Errorf("records: %s\nwant:    %s", s, c.want)
			}
		})
	}
}

// needsMoreText is the end of the message for a record cut n bytes short.
func needsMoreText(n int64) string {
	if n == 1 {
		return "needs 1 more byte"
	}
	return fmt.Sprintf("needs %d more bytes", n)
}

// TestReaderReset: a Reader reset onto a dump reads it as a new Reader
// does, whatever it read before and however far (mid-record, with options
// set), and into the same buffer: a second pass over a dump (crunch's)
// touches no new memory.
func TestReaderReset(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	other, _, err := copyHPROF(data, 64<<10) // other segment boundaries
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := copyHPROFWith(data, 1<<20, (*Writer).WriteSub)
	if err != nil {
		t.Fatal(err)
	}

	r, err := NewReader(bytes.NewReader(other))
	if err != nil {
		t.Fatal(err)
	}
	r.ArrayData, r.SkipElements, r.MaxElements = true, true, 3
	for rec, err := range r.Records() { // stop in the middle of a heap dump record
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag.IsHeapDump() {
			var s SubRecord
			if err := r.NextSub(&s); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := r.Reset(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n >= readBufSize/2 {
		t.Errorf("Reset allocated %d bytes: a new buffer of %d", n, readBufSize)
	}
	if r.ArrayData || r.SkipElements || r.MaxElements != 0 {
		t.Errorf("options kept after Reset: ArrayData %v, SkipElements %v, MaxElements %d", r.ArrayData, r.SkipElements, r.MaxElements)
	}
	if r.Header() != fresh.Header() || r.Offset() != fresh.Offset() {
		t.Fatalf("after Reset: header %+v at %d, a new Reader %+v at %d", r.Header(), r.Offset(), fresh.Header(), fresh.Offset())
	}
	got, _, err := copyReader(r, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("read after Reset: %d bytes written back, %d from a new Reader, not the same", len(got), len(want))
	}

	if err := r.Reset(strings.NewReader("JAVA PROFILE 1.0.2\x00")); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrNotHPROF) {
		t.Errorf("Reset onto a cut header: %v", err)
	}
}

// TestNewReaderSize: a Reader with a small buffer (NewReaderSize, at
// least MinReadBuffer) reads what a Reader with NewReader's reads, records
// and arrays longer than its buffer included, and Reset keeps its buffer's
// size, where a Reader of bytes gets NewReader's.
func TestNewReaderSize(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	want, _, err := copyHPROFWith(data, 1<<20, (*Writer).WriteSub)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ask, size int }{{1, MinReadBuffer}, {MinReadBuffer + 3, MinReadBuffer + 3}, {64 << 10, 64 << 10}} {
		r, err := NewReaderSize(bytes.NewReader(data), c.ask)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.in.Size(); n != c.size {
			t.Errorf("NewReaderSize(%d): a buffer of %d bytes, want %d", c.ask, n, c.size)
		}
		for pass := 1; pass <= 2; pass++ {
			got, _, err := copyReader(r, 1<<20)
			if err != nil {
				t.Fatalf("buffer of %d, pass %d: %v", c.size, pass, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("buffer of %d, pass %d: %d bytes written back, %d from NewReader's, not the same", c.size, pass, len(got), len(want))
			}
			if err := r.Reset(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			if n := r.in.Size(); n != c.size {
				t.Errorf("after Reset: a buffer of %d bytes, want %d", n, c.size)
			}
		}
	}
	r, err := NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Reset(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if n := r.in.Size(); n != readBufSize {
		t.Errorf("a Reader of bytes, Reset: a buffer of %d bytes, want %d", n, readBufSize)
	}
}

// countingReadSeeker counts the bytes read from a bytes.Reader.
type countingReadSeeker struct {
	*bytes.Reader
	read int64
}

func (c *countingReadSeeker) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.read += int64(n)
	return n, err
}

// TestSetReadAhead: a Reader whose reads ask for a few KiB at a time
// (SetReadAhead), of a source it can seek, reads little of the heap dump
// records its caller skips (SkipSubs, or Next past a record not read),
// and gives the records, and the sub-records after a skip, of a Reader
// that reads it all; Reset clears it.
func TestSetReadAhead(t *testing.T) {
	data, _, err := copyHPROF(testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz")), 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		rec Record
		sub SubRecord
	}
	// In each heap dump record, the first sub-record boundary after three
	// quarters of it, from a Reader of the bytes.
	skipTo := map[int64]int64{}
	var heap int64 // the bytes of heap dump records
	whole, err := NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range whole.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag.IsHeapDump() {
			heap += int64(rec.Length)
			var sub SubRecord
			for whole.Offset() < rec.End()-int64(rec.Length)/4 {
				if err := whole.NextSub(&sub); err != nil {
					t.Fatal(err)
				}
			}
			skipTo[rec.Offset] = whole.Offset()
		}
	}
	walk := func(ahead int) ([]seen, int64) {
		src := &countingReadSeeker{Reader: bytes.NewReader(data)}
		r, err := NewReader(src)
		if err != nil {
			t.Fatal(err)
		}
		r.SetReadAhead(ahead)
		var got []seen
		for rec, err := range r.Records() {
			if err != nil {
				t.Fatal(err)
			}
			s := seen{rec: rec}
			if rec.Tag.IsHeapDump() { // read half, skip a quarter, read a sub-record, skip the rest
				var sub SubRecord
				for r.Offset() < rec.Body()+int64(rec.Length)/2 {
					if err := r.NextSub(&sub); err != nil {
						t.Fatal(err)
					}
				}
				if err := r.SkipSubs(skipTo[rec.Offset]); err != nil {
					t.Fatal(err)
				}
				if err := r.NextSub(&s.sub); err != nil && err != io.EOF {
					t.Fatal(err)
				}
				s.sub = SubRecord{Tag: s.sub.Tag, Offset: s.sub.Offset, ID: s.sub.ID}
			}
			got = append(got, s)
		}
		return got, src.read
	}
	want, all := walk(0)
	got, read := walk(4 << 10)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read ahead 4 KiB at a time: %d records and sub-records differ from the %d of a Reader reading it all", len(got), len(want))
	}
	if all != int64(len(data)) || read > all-heap/3 {
		t.Errorf("read ahead 4 KiB at a time: %d bytes of %d read (%d without), where nearly half of each heap dump record (%d bytes in all) is skipped", read, len(data), all, heap)
	}
	t.Logf("%d bytes read of %d (%d without a read-ahead)", read, len(data), all)
}
