package bmd_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// sampleBMD returns the BMD file of the sample dump, crunched with opt.
func sampleBMD(t testing.TB, opt crunch.Options) []byte {
	t.Helper()
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	var file bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &file, opt); err != nil {
		t.Fatal(err)
	}
	return file.Bytes()
}

// skimRead reads file with SkipValues, and SkipObjects if asked, and
// renders each record (rtRender) at its offset, and gives its kind; err is the error
// that ends the reading (nil at the end of the file).
func skimRead(file []byte, skipObjects bool) (recs []string, kinds []bmd.Kind, err error) {
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		return nil, nil, err
	}
	r.SkipValues, r.SkipObjects = true, skipObjects
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs, kinds, nil
		}
		if err != nil {
			return recs, kinds, err
		}
		recs = append(recs, fmt.Sprintf("@%d %s", rec.Offset, rtRender(rec)))
		kinds = append(kinds, rec.Kind)
	}
}

// isObject reports whether k is a kind of object record, the kinds an
// OBJECTS run holds.
func isObject(k bmd.Kind) bool {
	return k == bmd.KindInstance || k == bmd.KindObjectArray || k == bmd.KindPrimitiveArray || k == bmd.KindPrimitiveNoData
}

// withoutObjects returns the records that are neither object records nor
// OBJECTS records (which a read with SkipObjects returns).
func withoutObjects(recs []string, kinds []bmd.Kind) []string {
	var out []string
	for i, r := range recs {
		if !isObject(kinds[i]) && kinds[i] != bmd.KindObjects {
			out = append(out, r)
		}
	}
	return out
}

// objectsHeader decodes the OBJECTS record at stream[at:]: the bytes and
// the number of the records after it, and the size of its own.
func objectsHeader(stream []byte, at int) (n, count, size int) {
	p := at + 1
	v := [2]uint64{}
	for i := range v {
		x, k := binary.Uvarint(stream[p:])
		v[i], p = x, p+k
	}
	_, k := binary.Uvarint(stream[p:]) // the HPROF bytes
	return int(v[0]), int(v[1]), p + k - at
}

// objectRuns returns how many OBJECTS records a file has, walking the
// records a full read gives.
func objectRuns(t *testing.T, file []byte) int {
	t.Helper()
	f, _, ends := rtRecordsOf(t, file)
	runs, at := 0, 0
	for _, end := range ends {
		if f.stream[at] == byte(bmd.KindObjects) {
			runs++
		}
		at = end
	}
	return runs
}

// rewrite writes the records of a sound file again, with a Writer that
// set may change.
func rewrite(t *testing.T, file []byte, set func(*bmd.Writer)) *bytes.Buffer {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	meta := r.Metadata()
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &meta)
	if err != nil {
		t.Fatal(err)
	}
	set(w)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := copyRecord(w, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestObjectRuns: the Writer frames the runs of object records of a real
// dump's BMD in OBJECTS records that say exactly what the runs hold, runs
// of 256 bytes to 64 KiB and a record; NoObjectRuns writes none, and the
// records read are the same.
func TestObjectRuns(t *testing.T) {
	b := sampleBMD(t, crunch.Options{})
	f, recs, ends := rtRecordsOf(t, b)
	_, kinds, err := skimRead(b, false)
	if err != nil {
		t.Fatal(err)
	}
	// Walk the stream: every object record lies in a run, which ends
	// where its length says, after as many records as its count says.
	inRun, runEnd, runLeft, runs, objects, framing := false, 0, 0, 0, 0, 0
	at := 0
	for i, end := range ends {
		start := at
		if f.stream[at] == byte(bmd.KindObjects) {
			if inRun {
				t.Fatalf("OBJECTS at stream offset %d inside a run", at)
			}
			n, count, head := objectsHeader(f.stream, at)
			if n > 64<<10+1<<10 || n < 256 {
				t.Errorf("run at %d of %d bytes: over 64 KiB and a record, or under 256 bytes", at, n)
			}
			inRun, runEnd, runLeft = true, at+head+n, count
			runs++
			framing += head
			start = at + head
		}
		if isObject(kinds[i]) {
			objects++
			if inRun && (start >= runEnd || runLeft == 0) {
				t.Fatalf("%s at stream offset %d: past its run", kinds[i], start)
			}
			if inRun {
				runLeft--
			}
		} else if inRun {
			t.Fatalf("%s at stream offset %d inside a run", kinds[i], start)
		}
		if inRun && runLeft == 0 {
			if end != runEnd {
				t.Fatalf("run ending at %d: its records end at %d", runEnd, end)
			}
			inRun = false
		}
		at = end
	}
	if runs == 0 || objects < 1000 {
		t.Fatalf("%d runs, %d objects", runs, objects)
	}
	t.Logf("%d object records, %d runs, %d bytes of OBJECTS records in %d", objects, runs, framing, len(b))

	plain := rewrite(t, b, func(w *bmd.Writer) { w.NoObjectRuns = true })
	if got := objectRuns(t, plain.Bytes()); got != 0 {
		t.Errorf("NoObjectRuns: %d OBJECTS records", got)
	}
	if plain.Len() != len(b)-framing {
		t.Errorf("NoObjectRuns: %d bytes, want %d", plain.Len(), len(b)-framing)
	}
	if _, plainRecs, _ := rtRecordsOf(t, plain.Bytes()); !slices.Equal(plainRecs, recs) {
		t.Error("NoObjectRuns: other records read")
	}
}

// TestSkipObjects: with SkipObjects, the reader gives the records of a
// real dump's BMD that are not objects, exactly as a full read gives them
// (offsets and IDs), and the file's END checks; in a file without runs,
// and in one where large arrays and instances stand outside runs, it also
// gives the objects outside runs, with their IDs. Cut or damaged, it gives
// the same records before the damage as a full read, then an error.
func TestSkipObjects(t *testing.T) {
	b := sampleBMD(t, crunch.Options{})
	full, kinds, err := skimRead(b, false)
	if err != nil {
		t.Fatal(err)
	}
	got, gotKinds, err := skimRead(b, true)
	if err != nil {
		t.Fatal(err)
	}
	want := withoutObjects(full, kinds)
	if rest := withoutObjects(got, gotKinds); !slices.Equal(rest, want) || len(rest) == len(full) {
		t.Fatalf("skipping objects: %d records, want the %d of %d that are not objects", len(rest), len(want), len(full))
	}
	// The OBJECTS records returned and the objects outside them count
	// every object.
	r, err := bmd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.SkipObjects = true
	var counted, objects int
	for rec, err := r.Next(); err != io.EOF; rec, err = r.Next() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == bmd.KindObjects {
			counted += int(rec.Count)
		}
		if isObject(rec.Kind) {
			counted++ // in a run too short to frame
		}
	}
	for _, k := range kinds {
		if isObject(k) {
			objects++
		}
	}
	if counted != objects {
		t.Errorf("OBJECTS records count %d objects, a full read gives %d", counted, objects)
	}

	// Without OBJECTS records every record is read; with runs of fewer
	// than 4 KiB left unframed, those and the records that are not
	// objects.
	plain := rewrite(t, b, func(w *bmd.Writer) { w.NoObjectRuns = true }).Bytes()
	plainFull, _, err := skimRead(plain, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := skimRead(plain, true); err != nil || !slices.Equal(got, plainFull) {
		t.Errorf("no runs: %d records skipping objects (%v), %d reading all", len(got), err, len(plainFull))
	}
	defer bmd.SetMinRunBytes(bmd.SetMinRunBytes(4 << 10))
	mixed := rewrite(t, b, func(*bmd.Writer) {}).Bytes()
	mixedFull, mixedKinds, err := skimRead(mixed, false)
	if err != nil {
		t.Fatal(err)
	}
	got, gotKinds, err = skimRead(mixed, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(withoutObjects(got, gotKinds), withoutObjects(mixedFull, mixedKinds)) {
		t.Error("mixed: the records that are not objects differ")
	}
	alone := 0
	for i, r := range got {
		if gotKinds[i] == bmd.KindObjects {
			continue
		}
		if isObject(gotKinds[i]) {
			alone++
		}
		if !slices.Contains(mixedFull, r) {
			t.Fatalf("mixed: skipping objects gives %q, which a full read does not", r)
		}
	}
	if alone == 0 || alone == len(mixedFull)-len(withoutObjects(mixedFull, mixedKinds)) {
		t.Fatalf("mixed: %d objects outside runs", alone)
	}

	// Cut, or a byte changed, at many places: the records before the
	// damage, then an error.
	for at := 100; at < len(b); at += len(b) / 97 {
		bad := slices.Clone(b)
		bad[at] ^= 0x10
		for name, f := range map[string][]byte{"cut": b[:at], "damaged": bad} {
			full, kinds, errFull := skimRead(f, false)
			got, gotKinds, errSkip := skimRead(f, true)
			var fe *bmd.FormatError
			if !errors.As(errSkip, &fe) || errFull == nil {
				t.Fatalf("%s at %d: errors %v skipping objects, %v reading all", name, at, errSkip, errFull)
			}
			if want := withoutObjects(full, kinds); !slices.Equal(withoutObjects(got, gotKinds), want) {
				t.Fatalf("%s at %d: %d records skipping objects, want %d", name, at, len(got), len(want))
			}
		}
	}
}

// TestSpecObjectsExample: the example of spec/bmd.md §5.25, two primitive
// arrays in a run framed by an OBJECTS record, is what the Writer writes.
func TestSpecObjectsExample(t *testing.T) {
	sec := exSection(t, exSpec(t), "### 5.25 ")
	for _, want := range []string{"`10 0a 05 10 08 ac 02`", "`19 07 02 c0 02`"} {
		if !strings.Contains(sec, want) {
			t.Fatalf("§5.25 does not show %s", want)
		}
	}
	defer bmd.SetMinRunBytes(bmd.SetMinRunBytes(1))
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	w.HeapDump(true)
	w.PrimitiveArray(bmd.Int, 5, false)
	w.PrimitiveArray(bmd.Byte, 300, false)
	w.HeapDumpEnd()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := rtUnframe(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x0b, 0x01, 0x19, 0x07, 0x02, 0xc0, 0x02, 0x10, 0x0a, 0x05, 0x10, 0x08, 0xac, 0x02, 0x0c}
	if !bytes.HasPrefix(f.stream, want) {
		t.Errorf("the Writer writes % x, want % x then END", f.stream, want)
	}
}

// TestDecodeRun: with SkipObjects and DecodeRun, the reader decodes the
// runs DecodeRun picks, given their first ID and count, and returns their
// records as a full read does (offsets, IDs, values), skips the others,
// and returns the records that are not objects as a read with SkipObjects
// alone does.
func TestDecodeRun(t *testing.T) {
	b := sampleBMD(t, crunch.Options{})
	full := map[uint64]string{} // object ID -> the record as a full read renders it
	r, err := bmd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := r.Next(); err != io.EOF; rec, err = r.Next() {
		if err != nil {
			t.Fatal(err)
		}
		if isObject(rec.Kind) {
			full[rec.ID] = fmt.Sprintf("@%d %s", rec.Offset, rtRender(rec))
		}
	}
	skim, skimKinds, err := skimRead(b, true)
	if err != nil {
		t.Fatal(err)
	}
	// Every other run, by the order DecodeRun is asked.
	r, err = bmd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.SkipObjects = true
	asked, picked := 0, map[uint64]bool{}
	last := uint64(0)
	r.DecodeRun = func(first, count uint64) bool {
		asked++
		if first < last {
			t.Errorf("run from ID %d asked after one from %d", first, last)
		}
		last = first
		if asked%2 == 0 {
			return false
		}
		for id := first; id < first+count; id++ {
			picked[id] = true
		}
		return true
	}
	var rest []string
	var restKinds []bmd.Kind
	decoded := 0
	for rec, err := r.Next(); err != io.EOF; rec, err = r.Next() {
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("@%d %s", rec.Offset, rtRender(rec))
		if isObject(rec.Kind) && picked[rec.ID] {
			decoded++
			if s != full[rec.ID] {
				t.Fatalf("object %d decoded as %q, a full read gives %q", rec.ID, s, full[rec.ID])
			}
			continue
		}
		rest, restKinds = append(rest, s), append(restKinds, rec.Kind)
	}
	if asked < 2 || decoded != len(picked) || decoded == 0 {
		t.Fatalf("%d runs asked for, %d objects decoded of the %d picked", asked, decoded, len(picked))
	}
	// What is left is a read with SkipObjects, but the OBJECTS records of
	// the runs decoded.
	var want []string
	for i, s := range skim {
		if skimKinds[i] == bmd.KindObjects {
			continue
		}
		want = append(want, s)
	}
	var got []string
	for i, s := range rest {
		if restKinds[i] != bmd.KindObjects {
			got = append(got, s)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the records outside the runs decoded: %d, a read with SkipObjects gives %d", len(got), len(want))
	}
	if n := countKind(restKinds, bmd.KindObjects); n != asked/2 {
		t.Errorf("%d OBJECTS records returned for %d runs skipped", n, asked/2)
	}
}

// countKind counts k in kinds.
func countKind(kinds []bmd.Kind, k bmd.Kind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}
