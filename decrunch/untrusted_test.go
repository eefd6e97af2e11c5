package decrunch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	canon "github.com/heapcrunch/heapcrunch/names"
)

// countingDiscard counts what it is given.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// allocated returns the bytes allocated by the process so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// amplifier writes a small BMD file whose records ask for a large output.
func amplifier(t *testing.T, classes uint64, body func(w *bmd.Writer)) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 8, Classes: classes, ClassesPlaced: true})
	if err != nil {
		t.Fatal(err)
	}
	body(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAmplification: crafted files of a few kilobytes that ask for
// terabytes of HPROF (primitive arrays of 268 M longs, instances of a class
// with 65,535 fields, array names of a long name) stop at the output limit
// with an *OutputLimitError (or, for the instances, the reader's bound on
// layout work, which comes first), having written less than the limit, and
// allocate memory in proportion to their own bytes, not to what they ask.
func TestAmplification(t *testing.T) {
	const limit = 64 << 20
	cases := []struct {
		name string
		file []byte
	}{
		{"1000 arrays of 268 M longs", amplifier(t, 0, func(w *bmd.Writer) {
			w.HeapDump(true)
			for range 1000 {
				w.PrimitiveArray(bmd.Long, 268_000_000, false)
			}
			w.HeapDumpEnd()
		})},
		{"instances of a class of 65535 long fields", amplifier(t, 1, func(w *bmd.Writer) {
			c := &bmd.Class{Index: 1}
			for range 65535 {
				c.Fields = append(c.Fields, bmd.Field{Name: 0, Type: bmd.Long})
			}
			w.HeapDump(true)
			w.Class(c)
			w.PlaceClasses(1)
			vals := make([]uint64, 65535)
			for range 2000 {
				w.Instance(1, vals)
			}
			w.HeapDumpEnd()
		})},
		{"array names of a long name", amplifier(t, 0, func(w *bmd.Writer) {
			long := bytes.Repeat([]byte("x"), 1<<20)
			id, _ := w.ClearString(long)
			for range 20000 {
				w.ArrayName(id, 255, true)
			}
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Logf("%d bytes of BMD", len(c.file))
			var out countingDiscard
			before := allocated()
			_, err := Decrunch(bytes.NewReader(c.file), &out, Options{MaxOutput: limit})
			grew := allocated() - before
			var le *OutputLimitError
			var fe *bmd.FormatError
			switch {
			case errors.As(err, &le) && le.Limit == limit:
			case errors.As(err, &fe) && strings.Contains(fe.Msg, "implausibly long"):
				// The reader refuses instances whose layouts cost far
				// more time than their bytes explain, before the limit.
			default:
				t.Fatalf("error %v, want the output limit", err)
			}
			if out.n > limit {
				t.Errorf("%d bytes written, the limit is %d", out.n, limit)
			}
			if bound := uint64(128<<20 + 64*len(c.file)); grew > bound {
				t.Errorf("allocated %d bytes for a %d-byte file (bound %d)", grew, len(c.file), bound)
			}
			// With salvage too: the limit is not damage to salvage.
			if _, err := Decrunch(bytes.NewReader(c.file), io.Discard, Options{MaxOutput: limit, Salvage: true}); !errors.As(err, &le) && !errors.As(err, &fe) {
				t.Errorf("with salvage: %v", err)
			}
		})
	}
}

// TestOutputEstimateInstances: the first pass counts each instance's field
// bytes from its class's whole layout (8-byte IDs: an object field 8, an
// int 4, a dropped long 8), also for two classes whose instances
// alternate, both from the OBJECTS records of the runs it skips and, in a
// file without them (as older writers wrote), from the instances; and a
// limit under them is refused before any heap record is written.
func TestOutputEstimateInstances(t *testing.T) {
	const n = 1000
	for _, runs := range []bool{true, false} {
		file := amplifier(t, 2, func(w *bmd.Writer) {
			w.NoObjectRuns = !runs
			w.HeapDump(true)
			w.Class(&bmd.Class{Index: 1, Fields: []bmd.Field{{Type: bmd.Object}, {Type: bmd.Int, Kept: true}}})
			w.Class(&bmd.Class{Index: 2, Super: 1, Fields: []bmd.Field{{Type: bmd.Long}}})
			w.PlaceClasses(2)
			for range n {
				w.Instance(1, []uint64{0, 7})
				w.Instance(2, []uint64{0, 7, 0})
			}
			w.HeapDumpEnd()
		})
		if got := bytes.Count(file, []byte{byte(bmd.KindObjects)}) > 0; runs && !got {
			t.Fatal("no OBJECTS record written")
		}
		want := int64(n * ((8 + 4) + (8 + 4 + 8)))
		r, err := bmd.NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		r.SkipValues, r.SkipObjects = true, true // as Decrunch reads
		c := &converter{meta: r.Metadata()}
		if err := c.firstPass(r); err != nil {
			t.Fatal(err)
		}
		if c.estimate != want {
			t.Errorf("runs %v: estimate %d bytes, want %d", runs, c.estimate, want)
		}
		var le *OutputLimitError
		var out countingDiscard
		if _, err := Decrunch(bytes.NewReader(file), &out, Options{MaxOutput: want - 1}); !errors.As(err, &le) {
			t.Errorf("runs %v, limit %d: error %v, want the output limit", runs, want-1, err)
		}
		if out.n > 100 { // the HPROF header
			t.Errorf("runs %v: %d bytes written before the limit was refused", runs, out.n)
		}
	}
}

// TestIDOverflow: an object ID too large for the file's 4-byte IDs is an
// *IDOverflowError, and the record that holds it is not written: with
// salvage, the HPROF holds what came before it, nothing of it. In the
// file whole, and cut at a block's end right after that record, where the
// reading error that follows must not hide it; the same both ways of the
// second pass.
func TestIDOverflow(t *testing.T) {
	const big = 1 << 30
	// What the salvaged HPROF holds: sub-records by kind, and top-level
	// records (heap dump records, LOAD CLASS, STACK FRAME, START THREAD).
	type kept struct{ classes, instances, arrays, roots, heaps, loads, frames, threads int }
	cases := map[string]struct {
		body func(w *bmd.Writer)
		want kept // with salvage
		// The record that holds the ID, which the error names with its
		// offset: the nth (from 0) of its kind in the file.
		held bmd.Kind
		nth  int
	}{
		"instance": {func(w *bmd.Writer) {
			w.Instance(1, []uint64{big})
			w.Instance(1, []uint64{0})
		}, kept{classes: 1, heaps: 1}, bmd.KindInstance, 0},
		"instance, then the end":  {func(w *bmd.Writer) { w.Instance(1, []uint64{big}) }, kept{classes: 1, heaps: 1}, bmd.KindInstance, 0},
		"one that fits, then not": {func(w *bmd.Writer) { w.Instance(1, []uint64{0}); w.Instance(1, []uint64{big}) }, kept{classes: 1, instances: 1, heaps: 1}, bmd.KindInstance, 1},
		"object array":            {func(w *bmd.Writer) { w.ObjectArray(1, []uint64{0, big, 0}) }, kept{classes: 1, heaps: 1}, bmd.KindObjectArray, 0},
		"root":                    {func(w *bmd.Writer) { w.Root(uint8(hprof.SubRootUnknown), big, 0, 0, 0, 0) }, kept{classes: 1, heaps: 1}, bmd.KindRoot, 0},
		"class":                   {func(w *bmd.Writer) { w.Class(&bmd.Class{Index: 2, Super: big}) }, kept{classes: 1, heaps: 1}, bmd.KindClass, 1},
		"class dumped again": {func(w *bmd.Writer) {
			w.Class(&bmd.Class{Index: 1, Redump: true, Loader: big, Fields: []bmd.Field{{Type: bmd.Object}}})
		}, kept{classes: 1, heaps: 1}, bmd.KindClass, 1},
		"start thread": {func(w *bmd.Writer) { w.StartThread(1, big, 0, 0, 0, 0) }, kept{classes: 1, heaps: 1}, bmd.KindStartThread, 0},
		// Written by the first pass, which stops there, and the second
		// does not run: it would write records whose names and classes'
		// LOAD CLASS records the first pass did not reach.
		"load class": {func(w *bmd.Writer) {
			w.LoadClass(1, big, 0, 0)
			w.StackFrame(0, 0, 0, 0, 0)
		}, kept{}, bmd.KindLoadClass, 0},
	}
	for name, tc := range cases {
		var b bytes.Buffer
		w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Alignment: 256, Classes: 2, ClassesPlaced: true})
		if err != nil {
			t.Fatal(err)
		}
		w.HeapDump(true)
		w.Class(&bmd.Class{Index: 1, Fields: []bmd.Field{{Type: bmd.Object}}})
		w.PlaceClasses(1)
		tc.body(w)
		// A block ends after the last record: cut there, the file keeps it
		// whole (cut inside a block, salvage drops the block).
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		cut := b.Len()
		w.HeapDumpEnd()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		at := recordAt(t, b.Bytes(), tc.held, tc.nth)
		for i, data := range [][]byte{b.Bytes(), b.Bytes()[:cut]} {
			for _, salvage := range []bool{false, true} {
				sameSecondPassWays(t, data, Options{Salvage: salvage})
				var out bytes.Buffer
				st, err := Decrunch(bytes.NewReader(data), &out, Options{Salvage: salvage})
				if !salvage {
					if i == 0 && !isOverflow(err, tc.held, at) {
						t.Errorf("%s: error %v, want an object ID too large for 4-byte IDs in the %s record at offset %d", name, err, tc.held, at)
					}
					continue // cut: the first pass's reading error, or the overflow
				}
				if err != nil || !isOverflow(st.Salvaged, tc.held, at) {
					t.Fatalf("%s (file %d): salvage: error %v, Salvaged %v; want an object ID too large in the %s record at offset %d", name, i, err, st.Salvaged, tc.held, at)
				}
				var got kept
				r, err := hprof.NewReader(bytes.NewReader(out.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				for rec, err := range r.Records() {
					if err != nil {
						t.Fatalf("%s (file %d): the salvaged HPROF: %v", name, i, err)
					}
					switch rec.Tag {
					case hprof.TagLoadClass:
						got.loads++
					case hprof.TagStackFrame:
						got.frames++
					case hprof.TagStartThread:
						got.threads++
					}
					if !rec.Tag.IsHeapDump() {
						continue
					}
					got.heaps++
					for s, err := range r.SubRecords() {
						if err != nil {
							t.Fatalf("%s (file %d): the salvaged HPROF: %v", name, i, err)
						}
						switch {
						case s.Tag == hprof.SubInstanceDump:
							got.instances++
						case s.Tag == hprof.SubObjectArrayDump:
							got.arrays++
						case s.Tag == hprof.SubClassDump:
							got.classes++
						case s.Tag.IsRoot():
							got.roots++
						}
					}
				}
				if got != tc.want {
					t.Errorf("%s (file %d): salvage kept %+v, want %+v", name, i, got, tc.want)
				}
				if st.Objects != uint64(got.classes+got.instances+got.arrays) || st.Roots != uint64(got.roots) {
					t.Errorf("%s (file %d): Stats count %d objects and %d roots, the HPROF holds %+v", name, i, st.Objects, st.Roots, got)
				}
			}
		}
	}
}

// isOverflow reports whether err is an *IDOverflowError for 4-byte IDs,
// in the record of kind held at offset at, with its message.
func isOverflow(err error, held bmd.Kind, at int64) bool {
	var oe *IDOverflowError
	want := fmt.Sprintf("decrunch: an object ID too large for 4-byte identifiers in the %s record at offset %d (more objects than they can number, or a damaged file)", held, at)
	return errors.As(err, &oe) && oe.IDSize == 4 && oe.Record == held.String() && oe.Offset == at && err.Error() == want
}

// recordAt returns the offset of the nth (from 0) record of kind in the
// BMD file data, as its reader gives it.
func recordAt(t *testing.T, data []byte, kind bmd.Kind, nth int) int64 {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("no %s record %d: %v", kind, nth, err)
		}
		if rec.Kind == kind {
			if nth == 0 {
				return rec.Offset
			}
			nth--
		}
	}
}

// TestNameAndFrameIDOverflow: a string or frame ID too large for the
// file's 4-byte IDs (s<<3|4 or f<<3|2 above 2^32-1) is an
// *IDOverflowError that says which kind of ID, like an object ID: it used
// to be cut to 32 bits, and string 2^29+1 became string 1 (spec/bmd.md
// §8.1: no two IDs share a value). 2^29-1 fits.
func TestNameAndFrameIDOverflow(t *testing.T) {
	const big = 1<<29 + 1
	for name, tc := range map[string]struct {
		body func(w *bmd.Writer)
		what string
	}{
		"LOAD CLASS name":    {func(w *bmd.Writer) { w.LoadClass(1, 5, 0, big) }, "string"},
		"STACK FRAME method": {func(w *bmd.Writer) { w.StackFrame(big, 0, 0, 1, 0) }, "string"},
		"STACK FRAME source": {func(w *bmd.Writer) { w.StackFrame(1, 0, big, 1, 0) }, "string"},
		"STACK TRACE frame":  {func(w *bmd.Writer) { w.StackTrace(1, 1, []uint64{1, big}) }, "stack frame"},
		"START THREAD group": {func(w *bmd.Writer) { w.StartThread(1, 5, 0, 1, big, 0) }, "string"},
		"HEAP INFO name":     {func(w *bmd.Writer) { w.HeapDump(true); w.HeapInfo('A', big); w.HeapDumpEnd() }, "string"},
		"CLASS field name": {func(w *bmd.Writer) {
			w.HeapDump(true)
			w.Class(&bmd.Class{Index: 1, Fields: []bmd.Field{{Name: big, Type: bmd.Int}}})
			w.PlaceClasses(1)
			w.HeapDumpEnd()
		}, "string"},
		"fits": {func(w *bmd.Writer) {
			w.LoadClass(1, 5, 0, 1<<29-1)
			w.StackTrace(1, 1, []uint64{1<<29 - 1})
		}, ""},
	} {
		var b bytes.Buffer
		w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Classes: 1, ClassesPlaced: true})
		if err != nil {
			t.Fatal(err)
		}
		w.ClearString([]byte("com.example.Secret"))
		tc.body(w)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = Decrunch(bytes.NewReader(b.Bytes()), io.Discard, Options{})
		var oe *IDOverflowError
		switch {
		case tc.what == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.what == "":
		case !errors.As(err, &oe) || oe.IDSize != 4 || !strings.Contains(err.Error(), "a "+tc.what+" ID too large for 4-byte identifiers"):
			t.Errorf("%s: error %v, want a %s ID too large for 4-byte identifiers", name, err, tc.what)
		}
	}
}

// TestObjectOutsideHeapDump: an object after the end of the heap dumps
// (only a faulty or forged file has one) is an error, whichever kind it
// is, and whichever way the second pass runs.
func TestObjectOutsideHeapDump(t *testing.T) {
	// 1<<30: a reference too large for 4-byte IDs as well (the place is
	// said first, as for any other record).
	objects := map[string]func(w *bmd.Writer) (uint64, error){
		"INSTANCE DUMP":        func(w *bmd.Writer) (uint64, error) { return w.Instance(1, []uint64{1}) },
		"OBJECT ARRAY DUMP":    func(w *bmd.Writer) (uint64, error) { return w.ObjectArray(1, []uint64{1, 0}) },
		"PRIMITIVE ARRAY DUMP": func(w *bmd.Writer) (uint64, error) { return w.PrimitiveArray(bmd.Int, 3, false) },
		"INSTANCE DUMP ":       func(w *bmd.Writer) (uint64, error) { return w.Instance(1, []uint64{1 << 30}) },
		"OBJECT ARRAY DUMP ":   func(w *bmd.Writer) (uint64, error) { return w.ObjectArray(1, []uint64{1, 1 << 30}) },
	}
	for key, object := range objects {
		tag := strings.TrimSpace(key)
		var b bytes.Buffer
		w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Classes: 1, ClassesPlaced: true})
		if err != nil {
			t.Fatal(err)
		}
		w.Class(&bmd.Class{Index: 1, Fields: []bmd.Field{{Name: 0, Type: bmd.Object}}})
		w.HeapDump(true)
		w.PlaceClasses(1)
		w.HeapDumpEnd()
		if _, err := object(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sameSecondPassWays(t, b.Bytes(), Options{})
		if _, err := Decrunch(bytes.NewReader(b.Bytes()), io.Discard, Options{}); err == nil || !strings.Contains(err.Error(), "decrunch: "+tag+" outside a heap dump") {
			t.Errorf("error %v, want decrunch: %s outside a heap dump", err, tag)
		}
	}
}

// TestClassOutsideHeapDump: a class dump that cannot be written where
// the file has it (outside a heap dump, which only a faulty or forged
// file does) is an error; with salvage, one held for PLACE CLASSES is
// written at the end with the other held classes, one not held is lost,
// and Stats count the class dumps the HPROF holds.
func TestClassOutsideHeapDump(t *testing.T) {
	for _, placed := range []bool{true, false} {
		var b bytes.Buffer
		w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Classes: 1, ClassesPlaced: placed})
		if err != nil {
			t.Fatal(err)
		}
		w.Class(&bmd.Class{Index: 1})
		if placed {
			w.PlaceClasses(1)
		}
		w.HeapDump(true)
		w.HeapDumpEnd()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := Decrunch(bytes.NewReader(b.Bytes()), io.Discard, Options{}); err == nil || !strings.Contains(err.Error(), "outside a heap dump") {
			t.Errorf("placed %v: error %v, want CLASS DUMP outside a heap dump", placed, err)
		}
		sameSecondPassWays(t, b.Bytes(), Options{Salvage: true})
		var out bytes.Buffer
		st, err := Decrunch(bytes.NewReader(b.Bytes()), &out, Options{Salvage: true})
		if err != nil || st.Salvaged == nil {
			t.Fatalf("placed %v: salvage: error %v, Salvaged %v", placed, err, st.Salvaged)
		}
		classes := 0
		err = heapstat.Walk(out.Bytes(), func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
			if s != nil && s.Tag == hprof.SubClassDump {
				classes++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("placed %v: the salvaged HPROF: %v", placed, err)
		}
		want := 0
		if placed {
			want = 1
		}
		if classes != want || st.Objects != uint64(classes) {
			t.Errorf("placed %v: salvage wrote %d class dumps and counts %d objects, want %d", placed, classes, st.Objects, want)
		}
	}
}

// TestNamesBounded: the names decrunch keeps for array names and a
// mapping's lookups grow with the bytes read, not with the texts a few
// bytes stand for, with no output limit. A recovered name is kept as the
// name table's own string however often the file uses it (2,000 uses of a
// 64 KiB candidate, 128 MiB of names written, allocate little); STRING
// records of 4 bytes that each share 255 bytes with the previous one, and
// ARRAY NAME records of 5 bytes that each stand for 3,800 bytes, are
// refused with a *NamesLimitError once they hold more than the bound,
// with salvage too.
func TestNamesBounded(t *testing.T) {
	long := strings.Repeat("n", 64<<10)
	table := NewNameTable()
	table.Source("candidates")(long)
	recovered := amplifier(t, 0, func(w *bmd.Writer) {
		for range 2000 {
			w.HashedString(uint64(len(long)), canon.HashString(long))
		}
	})
	var out countingDiscard
	before := allocated()
	st, err := Decrunch(bytes.NewReader(recovered), &out, Options{Names: table})
	grew := allocated() - before
	if err != nil || st.Recovered != 2000 {
		t.Fatalf("recovered names: error %v, %v recovered", err, st)
	}
	if out.n < 2000<<16 {
		t.Errorf("recovered names: %d bytes written, want the 2000 names", out.n)
	}
	if bound := uint64(32<<20 + 64*len(recovered)); grew > bound {
		t.Errorf("recovered names: allocated %d bytes for a %d-byte file (bound %d)", grew, len(recovered), bound)
	}

	cases := []struct {
		name string
		file []byte
	}{
		{"strings sharing 255 bytes", amplifier(t, 0, func(w *bmd.Writer) {
			s := bytes.Repeat([]byte("y"), bmd.MaxSharedPrefix)
			for range 400_000 {
				w.ClearString(s)
			}
		})},
		{"array names of 3,800 bytes", amplifier(t, 0, func(w *bmd.Writer) {
			id, _ := w.ClearString(bytes.Repeat([]byte("x"), 3540))
			for range 100_000 {
				w.ArrayName(id, 255, true)
			}
		})},
	}
	for _, c := range cases {
		for _, salvage := range []bool{false, true} {
			_, err := Decrunch(bytes.NewReader(c.file), io.Discard, Options{Salvage: salvage})
			var ne *NamesLimitError
			if !errors.As(err, &ne) {
				t.Errorf("%s (%d bytes), salvage %v: error %v, want a *NamesLimitError", c.name, len(c.file), salvage, err)
				continue
			}
			if ne.Bytes > maxNameBytes+nameBytesPerByte*ne.Offset+maxKeptArrayName {
				t.Errorf("%s: %v: more than the bound", c.name, err)
			}
		}
	}
}

// TestShapesBounded: the shapes decrunch remembers hold at most
// maxShapeFields fields, however many a file's classes have: a line of
// 2,000 classes of one dropped int field each (each class has the fields
// of all above it, 2 M fields in all), with an instance of each in
// reverse order, whose instances are still converted, the same whichever
// way the second pass runs.
func TestShapesBounded(t *testing.T) {
	const n = 2000
	file := amplifier(t, n, func(w *bmd.Writer) {
		w.NoObjectRuns = true // the first pass sees every instance
		w.HeapDump(true)
		for i := uint64(1); i <= n; i++ {
			w.Class(&bmd.Class{Index: i, Super: i - 1, Fields: []bmd.Field{{Type: bmd.Int}}})
		}
		w.PlaceClasses(n)
		for i := uint64(n); i >= 1; i-- {
			w.InstanceKept(i, nil)
		}
		w.HeapDumpEnd()
	})
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	r.SkipValues = true
	c := &converter{meta: r.Metadata()}
	if err := c.firstPass(r); err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, sh := range c.shapes {
		if sh != nil {
			held += len(sh.types)
		}
	}
	if held > maxShapeFields || held != c.shapeLen {
		t.Errorf("shapes hold %d fields (counted %d), the bound is %d", held, c.shapeLen, maxShapeFields)
	}
	if want := int64(4 * n * (n + 1) / 2); c.estimate != want {
		t.Errorf("estimate %d bytes, want %d", c.estimate, want)
	}
	st, err := Decrunch(bytes.NewReader(file), io.Discard, Options{})
	if err != nil || st.Objects != 2*n {
		t.Fatalf("error %v, %d objects written, want %d", err, st.Objects, 2*n)
	}
	sameSecondPassWays(t, file, Options{})
}

// TestRenamedNamesBounded: the names a mapping gives in place of a file's
// count against the names kept (maxNameBytes): a mapping's class of a 1
// MB name, "a" in the file, and a 19,757-byte BMD whose LOAD CLASS
// records name arrays of a of 1 to 2,047 dimensions, each renamed to the
// long name with its own brackets and kept. Before, decrunch kept them
// all: 2.4 GB for 1.95 GB of STRING records written. Now a
// *NamesLimitError at the LOAD CLASS that passes the bound, with salvage
// too.
func TestRenamedNamesBounded(t *testing.T) {
	m, err := apkstrings.ParseMapping(strings.NewReader(strings.Repeat("X", 1<<20) + " -> a:\n"))
	if err != nil {
		t.Fatal(err)
	}
	file := amplifier(t, 0, func(w *bmd.Writer) {
		a, _ := w.ClearString([]byte("a"))
		var ids []uint64
		for d := range 255 {
			id, _ := w.ArrayName(a, uint8(d+1), false)
			ids = append(ids, id)
		}
		for base := ids[254]; len(ids) < 2047; {
			for d := 1; d <= 255 && len(ids) < 2047; d++ {
				id, _ := w.ArrayName(base, uint8(d), false)
				ids = append(ids, id)
			}
			base = ids[len(ids)-1]
		}
		for i, id := range ids {
			w.LoadClass(uint32(i+1), 1, 0, id)
		}
	})
	if len(file) > 32<<10 {
		t.Fatalf("test premise: the file takes %d bytes", len(file))
	}
	for _, salvage := range []bool{false, true} {
		before := allocated()
		_, err := Decrunch(bytes.NewReader(file), io.Discard, Options{Mapping: m, Salvage: salvage})
		grew := allocated() - before
		var ne *NamesLimitError
		if !errors.As(err, &ne) || ne.Record != "LOAD CLASS" {
			t.Fatalf("salvage %v: error %v, want a *NamesLimitError at a LOAD CLASS", salvage, err)
		}
		t.Logf("salvage %v, %d-byte file: %v; %d bytes allocated", salvage, len(file), err, grew)
		if ne.Bytes > maxNameBytes+nameBytesPerByte*ne.Offset+4<<20 {
			t.Errorf("salvage %v: %v: more than the bound", salvage, err)
		}
		if grew > 512<<20 {
			t.Errorf("salvage %v: allocated %d bytes for a %d-byte file", salvage, grew, len(file))
		}
	}
}
