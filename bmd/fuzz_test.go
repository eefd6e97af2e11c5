package bmd_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"google.golang.org/protobuf/encoding/protowire"
)

// seedBMDs returns small version 2 files: the fuzz seed dumps (cut from the
// fixtures and the shared corpus, plus hand-built ones) crunched with
// default and with keep-everything options, and a file written directly
// with every record kind.
func seedBMDs(tb testing.TB) [][]byte {
	var out [][]byte
	for _, s := range fuzzseed.Seeds(tb, 4<<10) {
		for _, opt := range []crunch.Options{{}, {KeepStrings: true, KeepPrimitives: true}, {DropHeaps: []string{"zygote"}, Labels: []string{"app=x"}}} {
			var b bytes.Buffer
			if _, err := crunch.Crunch(bytes.NewReader(s.Data), &b, opt); err == nil {
				out = append(out, b.Bytes())
			}
		}
	}
	return append(out, everyKind())
}

// everyKind writes a file with every record kind of version 2, including
// the ones crunch rarely writes.
func everyKind() []byte {
	var b bytes.Buffer
	w, _ := bmd.NewWriter(&b, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 4, Timestamp: 1, Hash: bmd.HashXX64, Tool: "fuzz",
		Objects: 8, Classes: 3, Strings: 5, Alignment: 16, ClassesPlaced: true, Labels: []string{"app=fuzz", "k=v"}})
	w.ClearString([]byte("java.lang.Object"))
	w.HashedString(5, 0x1234567890abcdef)
	w.HashedString(9, 0xfedcba0987654321)
	w.ClearString([]byte("java.lang.String"))
	w.ArrayName(2, 3, true)
	w.Time(3)
	w.LoadClass(1, 1, 0, 1)
	w.LoadClass(2, 2, 0, 2)
	f, _ := w.StackFrame(2, 3, 0, 1, -3)
	w.StackTrace(1, 1, []uint64{f, 0})
	w.StartThread(1, 3, 1, 3, 0, 0)
	w.RawRecord(0x0E, []byte{0, 0, 0, 1, 0, 8})
	w.HeapDump(true)
	w.HeapInfo('Z', 3)
	w.Class(&bmd.Class{Index: 2, Super: 1, InstanceSize: 16,
		Fields: []bmd.Field{{Name: 1, Type: bmd.Short, Kept: true}, {Name: 2, Type: bmd.Char}, {Name: 3, Type: bmd.Boolean, Kept: true}}})
	w.Class(&bmd.Class{Index: 1, StackTrace: 1, Loader: 9, InstanceSize: 8,
		Constants: []bmd.Constant{{Index: 1, Type: bmd.Int, Kept: true, Value: 0xFFFFFFFF}, {Index: 2, Type: bmd.Object, Value: 2}},
		Statics:   []bmd.Static{{Name: 2, Type: bmd.Double, Kept: true, Value: 0x400921fb54442d18}, {Name: 3, Type: bmd.Long}},
		Fields:    []bmd.Field{{Name: 2, Type: bmd.Object}, {Name: 3, Type: bmd.Float, Kept: true}}})
	w.PlaceClasses(2)
	w.Trace(1)
	w.Instance(2, []uint64{0xFFFF, 0, 1, 4, 0x3f800000})
	w.Instance(1, []uint64{0, 0})
	w.HeapInfo('A', 2)
	w.ObjectArray(1, []uint64{3, 0, 99})
	w.ObjectArray(77, nil)
	w.Class(&bmd.Class{Index: 3, Super: 2})
	w.Instance(3, []uint64{1, 2, 3, 4, 5})
	w.Trace(0)
	w.PrimitiveArray(bmd.Byte, 10, false)
	w.PrimitiveArray(bmd.Long, 1<<20, true)
	for _, k := range []uint8{0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90} {
		w.Root(k, 3, 1, 0xFFFFFFFF, 0x77, 1)
		w.Root(k, 5, 1, 2, 0x70, 0)
	}
	w.PlaceClasses(1)
	w.HeapDumpEnd()
	w.HeapDump(false) // a second heap dump
	w.Class(&bmd.Class{Index: 2, Redump: true, Super: 1, InstanceSize: 20,
		Fields: []bmd.Field{{Name: 1, Type: bmd.Short, Kept: true}, {Name: 2, Type: bmd.Char}, {Name: 3, Type: bmd.Boolean, Kept: true}}})
	w.ObjectID(5)
	w.Instance(2, []uint64{1, 0, 0, 9, 0})
	w.ObjectArray(2, []uint64{5})
	w.ObjectID(11)
	w.PrimitiveArray(bmd.Int, 1, false)
	w.HeapDumpEnd()
	w.Time(4)
	w.UnloadClass(2)
	w.EndThread(1)
	w.Close()
	return b.Bytes()
}

// The records of a file are in checksummed blocks, which a fuzzer's
// changes almost always break: the record decoders would see little but
// checksum errors. So each fuzz input is read as it is, and also taken as
// a file whose blocks and header checksum are left out (version, metadata
// length, metadata, then the records), framed again: the blocks are then
// sound, and the changes reach the records.

// fuzzUnframe returns a file without its header checksum and block framing.
func fuzzUnframe(tb testing.TB, file []byte) []byte {
	f, err := rtUnframe(file)
	if err != nil {
		tb.Fatal(err)
	}
	return append(slices.Clone(file[:f.header-8]), f.stream...)
}

// fuzzReframe frames data as fuzzUnframe leaves it: a header checksum, the
// metadata marked checksummed_blocks if it is not, and the records in
// blocks of varied sizes. ok is false if data has no such header.
func fuzzReframe(data []byte) (file []byte, ok bool) {
	v, k := protowire.ConsumeVarint(data)
	if k < 0 || v != bmd.Version2 {
		return nil, false
	}
	n, k2 := protowire.ConsumeVarint(data[k:])
	if k2 < 0 || n > uint64(len(data)-k-k2) {
		return nil, false
	}
	meta := slices.Clone(data[k+k2 : k+k2+int(n)])
	if m, err := bmd.ParseMetadata(meta); err == nil && !m.Blocks {
		meta = append(meta, 0x68, 0x01)
	}
	return rtFrame(rtRawHeader(meta), data[k+k2+int(n):], 7, 1, 64, bmd.BlockSize), true
}

func addSeeds(f *testing.F) {
	for _, b := range seedBMDs(f) {
		f.Add(b)
		f.Add(fuzzUnframe(f, b))
	}
	f.Add([]byte{})
	f.Add([]byte{1})                      // version 1
	f.Add([]byte{2, 0})                   // no metadata: no identifier size
	f.Add([]byte{2, 4, 0x10, 4, 0x68, 1}) // no checksum
	f.Add([]byte{2, 2, 0x10, 4, 21})      // END without counts
	// 2 classes: class 1 with a short field, class 2 extending it; an
	// instance of class 2 (object 3), dumped again as an instance of 1.
	f.Add([]byte{2, 4, 0x10, 4, 0x40, 2,
		13, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0x13, 13, 4, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		14, 2, 0xFF, 0xFF, 0x03, 24, 1, 14, 1, 5, 21, 4, 0})
}

// totalAlloc returns the bytes allocated so far by the process (cheaper
// than runtime.ReadMemStats, which stops the world).
func totalAlloc() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// allocBound is what reading an input of n bytes may allocate: the
// Reader's fixed buffer and slack, and a multiple of the input.
func allocBound(n int) uint64 { return 4<<20 + 256*uint64(n) }

// readAll reads data record by record until the end or the first error,
// checks that the error is a *bmd.FormatError (or ErrVersion1) with an
// offset in the input, that every record's offset is on it in the payload
// of a sound block, and returns the records rendered as strings with the
// state (time, trace) they were read under, the metadata, and whether the
// file was read to its END.
func readAll(t *testing.T, data []byte) (recs []string, meta *bmd.Metadata, complete bool) {
	t.Helper()
	check := func(err error) {
		t.Helper()
		if errors.Is(err, bmd.ErrVersion1) {
			return
		}
		var fe *bmd.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("error %T is not a *bmd.FormatError: %v", err, err)
		}
		if fe.Offset < 0 || fe.Offset > int64(len(data)) {
			t.Fatalf("error offset %d outside the %d-byte input: %v", fe.Offset, len(data), err)
		}
		if !strings.HasPrefix(err.Error(), "bmd: ") {
			t.Fatalf("error %q", err)
		}
	}
	r, err := bmd.NewReader(bytes.NewReader(data))
	if err != nil {
		check(err)
		return nil, nil, false
	}
	f, _ := rtUnframe(data) // the sound blocks, up to the first bad one
	if f.header == 0 {
		t.Fatal("the reader accepts a header that is not sound")
	}
	offs := newRTOffsets(f)
	m := r.Metadata()
	var time uint32
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs, &m, true
		}
		if err != nil {
			check(err)
			return recs, &m, false
		}
		if _, err := offs.check(rec); err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case bmd.KindTime:
			time = rec.Time
			continue
		case bmd.KindTrace, bmd.KindObjectID: // state: seen in the objects' trace and ID
			continue
		case bmd.KindInstance:
			lay, ok := r.Layout(rec.Class)
			if !ok || len(lay) != len(rec.Values) {
				t.Fatalf("instance of class %d: layout %v (%v), %d values", rec.Class, lay, ok, len(rec.Values))
			}
		case bmd.KindClass:
			if rec.ID != rec.Def.Index || rec.ID == 0 || rec.ID > m.Classes {
				t.Fatalf("class %d of %d read as %d", rec.Def.Index, m.Classes, rec.ID)
			}
		}
		recs = append(recs, describe(rec, time))
	}
}

// describe renders the fields a record of its kind sets.
func describe(r *bmd.Record, time uint32) string {
	s := r.Kind.String() + " "
	switch r.Kind {
	case bmd.KindString, bmd.KindHashedString, bmd.KindArrayName, bmd.KindStackFrame, bmd.KindClass, bmd.KindInstance,
		bmd.KindObjectArray, bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		s += fmt.Sprintf("id=%d ", r.ID) // these kinds and PLACE CLASSES and OBJECT ID set ID
	}
	switch r.Kind {
	case bmd.KindPlaceClasses:
		return s + fmt.Sprintf("%d+%d", r.ID, r.Length)
	case bmd.KindString:
		return s + fmt.Sprintf("%q", r.Text)
	case bmd.KindHashedString:
		return s + fmt.Sprintf("%d %x", r.Length, r.Hash)
	case bmd.KindArrayName:
		return s + fmt.Sprintf("%d %d %v", r.Name, r.Dims, r.Descriptor)
	case bmd.KindLoadClass:
		return s + fmt.Sprintf("t=%d %d %d %d %d", time, r.Serial, r.Class, r.Trace, r.Name)
	case bmd.KindUnloadClass, bmd.KindEndThread:
		return s + fmt.Sprintf("t=%d %d", time, r.Serial)
	case bmd.KindStackFrame:
		return s + fmt.Sprintf("t=%d %d %d %d %d %d", time, r.Method, r.Signature, r.Source, r.ClassSerial, r.Line)
	case bmd.KindStackTrace:
		return s + fmt.Sprintf("t=%d %d %d %v", time, r.Serial, r.Thread, r.Frames)
	case bmd.KindStartThread:
		return s + fmt.Sprintf("t=%d %d %d %d %d %d %d", time, r.Serial, r.Object, r.Trace, r.Name, r.Group, r.Parent)
	case bmd.KindRawRecord:
		return s + fmt.Sprintf("t=%d %d %x", time, r.Tag, r.Text)
	case bmd.KindHeapDump:
		return s + fmt.Sprintf("t=%d %v", time, r.Segment)
	case bmd.KindHeapDumpEnd:
		return s + fmt.Sprintf("t=%d", time)
	case bmd.KindClass:
		return s + fmt.Sprintf("%+v", r.Def)
	case bmd.KindInstance:
		return s + fmt.Sprintf("%d %d %v", r.Trace, r.Class, r.Values)
	case bmd.KindObjectArray:
		return s + fmt.Sprintf("%d %d %d %v", r.Trace, r.Class, r.Count, r.Elements)
	case bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		return s + fmt.Sprintf("%d %d %d", r.Trace, r.Type, r.Count)
	case bmd.KindRoot:
		return s + fmt.Sprintf("%02x %d %d %d %d %d", r.Tag, r.Object, r.Thread, r.Frame, r.JNIRef, r.Trace)
	case bmd.KindHeapInfo:
		return s + fmt.Sprintf("%d %d", r.HeapType, r.Name)
	}
	return s
}

// fuzzInputs returns data, and data framed again if it can be (see
// fuzzReframe).
func fuzzInputs(data []byte) [][]byte {
	if framed, ok := fuzzReframe(data); ok {
		return [][]byte{data, framed}
	}
	return [][]byte{data}
}

// FuzzReader reads any input as BMD version 2: no panic, bounded
// allocation, errors that are *bmd.FormatError with an offset, records at
// their offsets, the same records and error with SkipValues as without,
// the same records that are not objects with SkipObjects. Framed again, the input's blocks are sound: no error is
// then the framing's.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for i, in := range fuzzInputs(data) {
			before := totalAlloc()
			readAll(t, in)
			if got := totalAlloc() - before; got > allocBound(len(in)) {
				t.Fatalf("reading %d bytes allocated %d bytes", len(in), got)
			}
			if got, want := readRendered(in, false), readRendered(in, true); !slices.Equal(got, want) {
				t.Fatalf("with the fast path: %d records, ending %q; without: %d, ending %q", len(got), lastOf(got), len(want), lastOf(want))
			}
			if got, want := skimmed(in, true), skimmed(in, false); !slices.Equal(got, want) {
				t.Fatalf("with SkipValues: %d records, ending %q; without: %d, ending %q", len(got), got[len(got)-1], len(want), want[len(want)-1])
			}
			// Skipping OBJECTS runs, the records that are not objects
			// are those of a full read, and more only where a full read
			// fails (in a run, which SkipObjects does not decode).
			full, kinds, errFull := skimRead(in, false)
			got, gotKinds, errSkip := skimRead(in, true)
			want, rest := withoutObjects(full, kinds), withoutObjects(got, gotKinds)
			if errFull == nil && (errSkip != nil || !slices.Equal(rest, want)) || len(rest) < len(want) || !slices.Equal(rest[:len(want)], want) {
				t.Fatalf("with SkipObjects: %d records that are not objects (%v); without: %d (%v)", len(rest), errSkip, len(want), errFull)
			}
			if i == 1 {
				r, err := bmd.NewReader(bytes.NewReader(in))
				for err == nil {
					_, err = r.Next()
				}
				var fe *bmd.FormatError
				if errors.Is(err, bmd.ErrChecksum) || errors.As(err, &fe) && fe.Record == "block" {
					t.Fatalf("sound blocks read as %v", err)
				}
			}
		}
	})
}

// lastOf returns the last of s, or "" if s is empty.
func lastOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// FuzzRoundTrip: the records the Reader accepts (up to its first error),
// given to a Writer with the same metadata, read back the same.
func FuzzRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range fuzzInputs(data) {
			roundTrip(t, in)
		}
	})
}

func roundTrip(t *testing.T, data []byte) {
	want, meta, complete := readAll(t, data)
	if meta == nil {
		return
	}
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, meta) // the same Classes: the same object IDs
	if err != nil {
		t.Fatal(err)
	}
	r, err := bmd.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(want); {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("second read: %v", err)
		}
		switch rec.Kind {
		case bmd.KindTime, bmd.KindTrace, bmd.KindObjectID:
		default:
			n++
		}
		if rec.Kind == bmd.KindObjectArray && rec.Class != 0 && rec.Class-rec.ID == 1<<63 && !w.Defined(rec.Class) {
			// Written as a class index, which is not that of a class:
			// the Writer writes it as a reference, and this one has no
			// encoding. Compare what came before.
			want, complete = want[:n-1], false
			n = len(want)
			continue
		}
		err = copyRecord(w, rec)
		if err != nil {
			t.Fatalf("writing %s: %v", rec.Kind, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, meta2, ok := readAll(t, out.Bytes())
	if !ok {
		t.Fatal("the Writer's output does not read back whole")
	}
	meta.Blocks = true
	if !reflect.DeepEqual(*meta2, *meta) {
		t.Fatalf("metadata %+v read back as %+v", *meta, *meta2)
	}
	if !complete {
		got = got[:len(got)-1] // the END the Writer added
	}
	// The Writer may reorder the roots of a run (it sorts them by
	// object): compare each run of same-kind roots as a set.
	sortRootRuns(want)
	sortRootRuns(got)
	for i := 0; i < len(want) && i < len(got); i++ {
		if want[i] != got[i] {
			t.Fatalf("record %d: read %s, after writing %s", i, want[i], got[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d records read, %d after writing (complete %v)", len(want), len(got), complete)
	}
}

// copyRecord writes a record as the Reader gave it with w (TRACE and END
// aside: the Writer writes TRACE with each object, and END at Close).
func copyRecord(w *bmd.Writer, rec *bmd.Record) error {
	var err error
	switch rec.Kind {
	case bmd.KindString:
		_, err = w.ClearString(rec.Text)
	case bmd.KindHashedString:
		_, err = w.HashedString(rec.Length, rec.Hash)
	case bmd.KindArrayName:
		_, err = w.ArrayName(rec.Name, rec.Dims, rec.Descriptor)
	case bmd.KindLoadClass:
		err = w.LoadClass(rec.Serial, rec.Class, rec.Trace, rec.Name)
	case bmd.KindUnloadClass:
		err = w.UnloadClass(rec.Serial)
	case bmd.KindStackFrame:
		_, err = w.StackFrame(rec.Method, rec.Signature, rec.Source, rec.ClassSerial, rec.Line)
	case bmd.KindStackTrace:
		err = w.StackTrace(rec.Serial, rec.Thread, rec.Frames)
	case bmd.KindStartThread:
		err = w.StartThread(rec.Serial, rec.Object, rec.Trace, rec.Name, rec.Group, rec.Parent)
	case bmd.KindEndThread:
		err = w.EndThread(rec.Serial)
	case bmd.KindRawRecord:
		err = w.RawRecord(rec.Tag, rec.Text)
	case bmd.KindTime:
		err = w.Time(rec.Time)
	case bmd.KindHeapDump:
		err = w.HeapDump(rec.Segment)
	case bmd.KindHeapDumpEnd:
		err = w.HeapDumpEnd()
	case bmd.KindClass:
		_, err = w.Class(&rec.Def) // its index and redump flag as read
	case bmd.KindObjectID:
		err = w.ObjectID(rec.ID)
	case bmd.KindInstance:
		err = w.Trace(rec.Trace)
		if err == nil {
			_, err = w.Instance(rec.Class, rec.Values)
		}
	case bmd.KindObjectArray:
		err = w.Trace(rec.Trace)
		if err == nil {
			_, err = w.ObjectArray(rec.Class, rec.Elements)
		}
	case bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		err = w.Trace(rec.Trace)
		if err == nil {
			_, err = w.PrimitiveArray(rec.Type, rec.Count, rec.Kind == bmd.KindPrimitiveNoData)
		}
	case bmd.KindRoot:
		err = w.Root(rec.Tag, rec.Object, rec.Thread, rec.Frame, rec.JNIRef, rec.Trace)
	case bmd.KindHeapInfo:
		err = w.HeapInfo(rec.HeapType, rec.Name)
	case bmd.KindPlaceClasses:
		err = w.PlaceClasses(rec.Length)
	case bmd.KindEnd, bmd.KindTrace: // TRACE: written with each object
	default:
		err = fmt.Errorf("%s records are not handled by this test: add them", rec.Kind)
	}
	return err
}

// sortRootRuns sorts each run of consecutive ROOT records of one kind.
func sortRootRuns(recs []string) {
	kind := func(s string) string {
		if !strings.HasPrefix(s, "ROOT ") {
			return ""
		}
		return s[:7]
	}
	for i := 0; i < len(recs); {
		k := kind(recs[i])
		j := i + 1
		for k != "" && j < len(recs) && kind(recs[j]) == k {
			j++
		}
		sort.Strings(recs[i:j])
		i = j
	}
}

// TestLayoutMemoryBounded: super links that loop, or make one long chain,
// classes defined in any order, at indexes scattered up to a huge class
// count, must not make the reader allocate more than a multiple of its
// input. Before the budget on flattened chains, 16 KB describing 1,000
// classes whose supers enter a two-class loop made the reader allocate
// 670 MB (each chain repeated the loop's fields once per class, and every
// chain was kept).
func TestLayoutMemoryBounded(t *testing.T) {
	fields := make([]bmd.Field, 10)
	for i := range fields {
		fields[i] = bmd.Field{Name: 1, Type: bmd.Int}
	}
	const k = 2000
	for _, shape := range []string{"loop", "line", "reverse line", "scattered"} {
		classes := uint64(k + 2)
		index := func(i uint64) uint64 { return i } // the index of the i-th class, from 1
		if shape == "scattered" {
			classes = 1 << 50
			index = func(i uint64) uint64 { return i * (1<<50/(k+3) - 7) }
		}
		var b bytes.Buffer
		w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Classes: classes, ClassesPlaced: true})
		if err != nil {
			t.Fatal(err)
		}
		var defined []uint64
		class := func(c *bmd.Class) {
			if _, err := w.Class(c); err != nil {
				t.Fatal(err)
			}
			defined = append(defined, c.Index)
		}
		switch shape {
		case "loop":
			// Classes 1 and 2 are each other's super; all others extend 1.
			class(&bmd.Class{Index: 1, Super: 2, Fields: fields})
			class(&bmd.Class{Index: 2, Super: 1, Fields: fields})
			for i := uint64(3); i < k+3; i++ {
				class(&bmd.Class{Index: i, Super: 1})
			}
		case "line", "scattered":
			// Each class extends the previous one.
			for i := uint64(1); i <= k; i++ {
				class(&bmd.Class{Index: index(i), Super: index(i - 1), Fields: fields[:2]})
			}
		case "reverse line":
			// The same, defined from the last class to the first.
			for i := uint64(k); i >= 1; i-- {
				class(&bmd.Class{Index: i, Super: i - 1, Fields: fields[:2]})
			}
		}
		for _, c := range defined {
			l, ok := w.Layout(c)
			if !ok {
				t.Fatalf("%s: no layout for class %d", shape, c)
			}
			if _, err := w.Instance(c, make([]uint64, len(l))); err != nil { // every field dropped: no bytes
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		if shape == "scattered" { // and PLACE CLASSES of every class, which stops at the first undefined one
			f, _ := rtUnframe(data)
			stream := f.stream[:len(f.stream)-1-protowire.SizeVarint(w.Objects())-1] // without END
			data = rtFrame(data[:f.header], rtCat(stream, []byte{0x16}, rtV(classes)))
		}
		before := totalAlloc()
		r, err := bmd.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if shape != "scattered" || !strings.Contains(err.Error(), "which is not defined") {
					t.Fatalf("%s: %v", shape, err)
				}
				break
			}
			n++
		}
		got := totalAlloc() - before
		t.Logf("%s: %d bytes, %d records read, %d allocated", shape, len(data), n, got)
		if n < 2*k {
			t.Fatalf("%s: only %d records read", shape, n)
		}
		if got > allocBound(len(data))+16<<20 {
			t.Fatalf("%s: reading %d bytes allocated %d", shape, len(data), got)
		}
		if ch, _ := r.Layout(2); shape == "loop" && len(ch) != 2*len(fields) {
			t.Fatalf("class 2 of a loop has %d fields in its layout, want %d (each class once)", len(ch), 2*len(fields))
		}
		if ch, ok := r.Layout(index(k)); shape != "loop" && (!ok || len(ch) != 2*k) {
			t.Fatalf("%s: the last class has %d fields in its layout, want %d", shape, len(ch), 2*k)
		}
	}
}

// TestLayoutTimeBounded: a class chain costs its walk once. A line of
// classes without fields, each the super class of the next, and an
// instance of each, from the last: a reader that walks each chain whole
// takes time quadratic in the file (it took 6 s for 20,000 classes). The
// reader must read the whole file, visiting each class a bounded number
// of times: the work it counts (classes visited, fields produced) grows
// linearly with the line's length. (Its speed: BenchmarkLayoutLine.)
func TestLayoutTimeBounded(t *testing.T) {
	work := map[uint64]int64{}
	for _, k := range []uint64{10000, 20000} {
		r, err := bmd.NewReader(bytes.NewReader(classLine(t, k)))
		records := 0
		for err == nil {
			_, err = r.Next()
			records++
		}
		if err != io.EOF {
			t.Fatalf("line of %d classes: %v after %d records", k, err, records)
		}
		work[k] = bmd.LayoutWork(r)
		if work[k] > 4*int64(k) {
			t.Errorf("line of %d classes: %d steps of layout work, want at most %d", k, work[k], 4*k)
		}
	}
	t.Logf("layout work: %v", work)
}

// classLine writes a line of k field-less classes, each the super class of
// the next, and an instance of each, from the last.
func classLine(t testing.TB, k uint64) []byte {
	var b bytes.Buffer
	w, _ := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Classes: k})
	for i := uint64(1); i <= k; i++ {
		w.Class(&bmd.Class{Index: i, Super: i - 1})
	}
	for i := k; i >= 1; i-- {
		w.Instance(i, nil)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func BenchmarkLayoutLine(b *testing.B) {
	file := classLine(b, 20000)
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		r, err := bmd.NewReader(bytes.NewReader(file))
		for err == nil {
			_, err = r.Next()
		}
		if err != io.EOF {
			b.Fatal(err)
		}
	}
}

// TestLayoutWorkBounded: dropped primitive fields take no bytes in an
// instance, so a class of many of them makes each 2-byte instance cost
// time in its fields; the reader must refuse such a file early rather
// than spend time quadratic in its size.
func TestLayoutWorkBounded(t *testing.T) {
	const fields, instances = 60000, 4000
	var b bytes.Buffer
	w, _ := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Classes: 1})
	c := &bmd.Class{Index: 1}
	for i := 0; i < fields; i++ {
		c.Fields = append(c.Fields, bmd.Field{Type: bmd.Int})
	}
	w.Class(c)
	values := make([]uint64, fields)
	for i := 0; i < instances; i++ {
		w.Instance(1, values)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := bmd.NewReader(bytes.NewReader(b.Bytes()))
	n := 0
	for err == nil {
		_, err = r.Next()
		n++
	}
	var fe *bmd.FormatError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "implausibly long") {
		t.Fatalf("after %d records of a %d-byte file: %v, want a format error about layouts", n, b.Len(), err)
	}
	if n >= instances {
		t.Errorf("refused only after %d records", n)
	}
	t.Logf("%d bytes: refused after %d records: %v", b.Len(), n, err)
}
