package bmd_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/metrics"
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
		for _, opt := range []crunch.Options{{}, {KeepStrings: true, KeepPrimitives: true}, {DropHeaps: []string{"zygote"}}} {
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
	w, _ := bmd.NewWriter(&b, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 4, Timestamp: 1, Hash: bmd.HashXX64, Tool: "fuzz", Objects: 7, Classes: 2, Strings: 3})
	w.String([]byte("java.lang.Object"))
	w.HashedString(5, 0x1234567890abcdef)
	w.HashedString(9, 0xfedcba0987654321)
	w.Time(3)
	w.LoadClass(1, 1, 0, 1)
	w.LoadClass(2, 2, 0, 2)
	f, _ := w.StackFrame(2, 3, 0, 1, -3)
	w.StackTrace(1, 1, []uint64{f, 0})
	w.StartThread(1, 3, 1, 3, 0, 0)
	w.RawRecord(0x0E, []byte{0, 0, 0, 1, 0, 8})
	w.HeapDump(true)
	w.HeapInfo('Z', 3)
	w.Class(&bmd.Class{StackTrace: 1, Loader: 9, InstanceSize: 8,
		Constants: []bmd.Constant{{Index: 1, Type: bmd.Int, Kept: true, Value: 0xFFFFFFFF}, {Index: 2, Type: bmd.Object, Value: 2}},
		Statics:   []bmd.Static{{Name: 2, Type: bmd.Double, Kept: true, Value: 0x400921fb54442d18}, {Name: 3, Type: bmd.Long}},
		Fields:    []bmd.Field{{Name: 2, Type: bmd.Object}, {Name: 3, Type: bmd.Float, Kept: true}}})
	w.Class(&bmd.Class{Super: 1, InstanceSize: 16,
		Fields: []bmd.Field{{Name: 1, Type: bmd.Short, Kept: true}, {Name: 2, Type: bmd.Char}, {Name: 3, Type: bmd.Boolean, Kept: true}}})
	w.Trace(1)
	w.Instance(2, []uint64{0xFFFF, 0, 1, 4, 0x3f800000})
	w.Instance(1, []uint64{0, 0})
	w.HeapInfo('A', 2)
	w.ObjectArray(1, []uint64{3, 0, 99})
	w.ObjectArray(77, nil)
	w.Trace(0)
	w.PrimitiveArray(bmd.Byte, 10, false)
	w.PrimitiveArray(bmd.Long, 1<<20, true)
	for _, k := range []uint8{0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90} {
		w.Root(k, 3, 1, 0xFFFFFFFF, 0x77, 1)
		w.Root(k, 5, 1, 2, 0x70, 0)
	}
	w.HeapDumpEnd()
	w.Time(4)
	w.UnloadClass(2)
	w.EndThread(1)
	w.Close()
	return b.Bytes()
}

func addSeeds(f *testing.F) {
	for _, b := range seedBMDs(f) {
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1})                 // version 1
	f.Add([]byte{2, 0})              // no metadata: no identifier size
	f.Add([]byte{2, 2, 0x10, 4, 21}) // END without counts
	f.Add([]byte{2, 2, 0x10, 4, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0x03, 14, 1})
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
// offset in the input, and returns the records rendered as strings with the
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
	}
	r, err := bmd.NewReader(bytes.NewReader(data))
	if err != nil {
		check(err)
		return nil, nil, false
	}
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
		if rec.Offset < 0 || rec.Offset >= int64(len(data)) {
			t.Fatalf("%s record at offset %d of a %d-byte input", rec.Kind, rec.Offset, len(data))
		}
		switch rec.Kind {
		case bmd.KindTime:
			time = rec.Time
			continue
		case bmd.KindTrace:
			continue
		case bmd.KindInstance:
			lay, ok := r.Layout(rec.Class)
			if !ok || len(lay) != len(rec.Values) {
				t.Fatalf("instance of class %d: layout %v (%v), %d values", rec.Class, lay, ok, len(rec.Values))
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
		s += fmt.Sprintf("id=%d ", r.ID) // only these kinds set ID
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

// FuzzReader reads any input as BMD version 2: no panic, bounded
// allocation, errors that are *bmd.FormatError with an offset.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		before := totalAlloc()
		readAll(t, data)
		if got := totalAlloc() - before; got > allocBound(len(data)) {
			t.Fatalf("reading %d bytes allocated %d bytes", len(data), got)
		}
	})
}

// FuzzRoundTrip: the records the Reader accepts (up to its first error),
// given to a Writer, read back the same.
func FuzzRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		want, meta, complete := readAll(t, data)
		if meta == nil {
			return
		}
		var out bytes.Buffer
		w, err := bmd.NewWriter(&out, meta)
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
			if rec.Kind != bmd.KindTime && rec.Kind != bmd.KindTrace {
				n++
			}
			switch rec.Kind {
			case bmd.KindString:
				_, err = w.String(rec.Text)
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
				_, err = w.Class(&rec.Def)
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
				t.Fatalf("%s records are not handled by this test: add them", rec.Kind)
			}
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
			t.Fatalf("%d records read, %d after writing (complete %v): last %s / %s", len(want), len(got), complete, want[len(want)-1], got[len(got)-1])
		}
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("record %d: read %s, after writing %s", i, want[i], got[i])
			}
		}
	})
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
// must not make the reader allocate more than a multiple of its input.
// Before the fix, 16 KB describing 1,000 classes whose supers enter a
// two-class loop made the reader allocate 670 MB (each chain repeated the
// loop's fields once per class, and every chain was cached).
func TestLayoutMemoryBounded(t *testing.T) {
	fields := make([]bmd.Field, 10)
	for i := range fields {
		fields[i] = bmd.Field{Name: 1, Type: bmd.Int}
	}
	for _, shape := range []string{"loop", "line"} {
		const k = 2000
		var b bytes.Buffer
		w, _ := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4})
		if shape == "loop" {
			// Classes 1 and 2 are each other's super; all others extend 1.
			w.Class(&bmd.Class{Super: 2, Fields: fields})
			w.Class(&bmd.Class{Super: 1, Fields: fields})
			for i := 0; i < k; i++ {
				w.Class(&bmd.Class{Super: 1})
			}
		} else {
			// Each class extends the previous one.
			for i := 0; i < k; i++ {
				w.Class(&bmd.Class{Super: uint64(i), Fields: fields[:2]})
			}
		}
		w.Flush()
		n := uint64(w.Objects())
		for i := uint64(1); i <= n; i++ {
			b.Write(protowire.AppendVarint([]byte{byte(bmd.KindInstance)}, i)) // every field dropped: no bytes
		}
		data := b.Bytes()
		before := totalAlloc()
		r, err := bmd.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("%s: %v", shape, err)
				}
				break
			}
		}
		got := totalAlloc() - before
		t.Logf("%s: %d bytes read, %d allocated", shape, len(data), got)
		if got > allocBound(len(data))+16<<20 {
			t.Fatalf("%s: reading %d bytes allocated %d", shape, len(data), got)
		}
		if ch, _ := r.Layout(2); shape == "loop" && len(ch) != 2*len(fields) {
			t.Fatalf("class 2 of a loop has %d fields in its layout, want %d (each class once)", len(ch), 2*len(fields))
		}
	}
}
