package bmd_test

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
)

// readObjectsOr reads file with a Reader set up by set, to its end or
// first error, rendering each record without its offset (an
// ObjectRecord has none), then the error. With batch above 0 it reads as
// decrunch's pipeline does: NextObjects, batch records at a time into
// values of capacity vcap (grown as needed), and Next when it returns 0.
func readObjectsOr(file []byte, set func(*bmd.Reader), batch, vcap int) []string {
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		return []string{"header: " + err.Error()}
	}
	set(r)
	var out []string
	objs := make([]bmd.ObjectRecord, batch)
	vals := make([]uint64, 0, vcap)
	for {
		if batch > 0 {
			var n int
			n, vals = r.NextObjects(objs, vals[:0])
			for _, o := range objs[:n] {
				rec := bmd.Record{Kind: o.Kind, ID: o.ID, Trace: o.Trace, Class: o.Class, Count: o.Count, Type: o.Type}
				v := slices.Clone(vals[o.Lo:o.Hi])
				if o.Kind == bmd.KindInstance {
					rec.Values = v
				} else {
					rec.Elements = v
				}
				out = append(out, rtRender(&rec))
			}
			if n > 0 {
				continue
			}
		}
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		if rec.Values == nil {
			rec.Values = []uint64{} // as a rendered ObjectRecord's
		}
		out = append(out, rtRender(rec))
	}
}

// TestNextObjects: reading with NextObjects, and Next where it stops,
// gives the records, values included, and the error that Next alone
// gives, on a real dump's BMD with kept primitive values (floats and
// doubles among them) and by default, in blocks of many sizes (records
// across blocks, which NextObjects leaves to Next), cut at many places;
// with batches of 1, 3 and 256 records, values that fit in the room
// given and values that do not, object arrays in pieces (MaxElements)
// and SkipValues.
func TestNextObjects(t *testing.T) {
	kept, dropped := sampleBMD(t, crunch.Options{KeepPrimitives: true}), sampleBMD(t, crunch.Options{})
	sets := map[string]func(*bmd.Reader){
		"plain":         func(*bmd.Reader) {},
		"MaxElements 3": func(r *bmd.Reader) { r.MaxElements = 3 },
		"SkipValues":    func(r *bmd.Reader) { r.SkipValues = true },
	}
	for i, f := range [][]byte{kept, rtReframe(t, kept, 7), rtReframe(t, kept, 1000, 3, 64), dropped} {
		for name, set := range sets {
			want := readObjectsOr(f, set, 0, 0)
			if len(want) < 1000 || slices.ContainsFunc(want, func(s string) bool { return len(s) > 6 && s[:6] == "error:" }) {
				t.Fatalf("file %d, %s: test premise: %d records, or an error", i, name, len(want))
			}
			for _, b := range [][2]int{{1, 0}, {3, 5}, {256, 1 << 12}} {
				if got := readObjectsOr(f, set, b[0], b[1]); !slices.Equal(got, want) {
					t.Fatalf("file %d, %s, batches of %d: %d records, %d with Next alone; first difference %s", i, name, b[0], len(got), len(want), firstRecordDiff(got, want))
				}
			}
			if name != "plain" {
				continue
			}
			for cut := 50; cut < len(f); cut += len(f) / 13 {
				want := readObjectsOr(f[:cut], set, 0, 0)
				if got := readObjectsOr(f[:cut], set, 256, 1<<12); !slices.Equal(got, want) {
					t.Fatalf("file %d, %s, cut at %d: %s", i, name, cut, firstRecordDiff(got, want))
				}
			}
		}
	}
}

// firstRecordDiff describes where two renderings first differ.
func firstRecordDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("record %d: %q, want %q", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d records against %d", len(got), len(want))
}

// TestNextObjectsBoundsValues: a call of NextObjects decodes no record
// after the one that brings its values to MaxBatchValues, where the
// instances of a class of 65,535 fields, none kept, take two bytes each
// in the file and 65,535 values each (the file below, 135 KB, its class
// 131 KB of it, gave 33.6 M values in one call without the bound); the
// reading reads the instances that Next alone reads and ends as it ends
// (the file asks for more layout work than its size allows).
func TestNextObjectsBoundsValues(t *testing.T) {
	const fields, n = 65535, 2048
	f := bmdtest.WideClass(t, fields, n, 0)
	if len(f) > 140<<10 {
		t.Fatalf("test premise: the file takes %d bytes", len(f))
	}
	read := func(batch int) (instances, calls int, end error) {
		r, err := bmd.NewReader(bytes.NewReader(f))
		if err != nil {
			t.Fatal(err)
		}
		objs := make([]bmd.ObjectRecord, batch)
		var vals []uint64
		for {
			var k int
			if batch > 0 {
				k, vals = r.NextObjects(objs, vals[:0])
			}
			if k > 0 {
				if len(vals) > bmd.MaxBatchValues-1+fields {
					t.Fatalf("one call decoded %d records, %d values", k, len(vals))
				}
				instances, calls = instances+k, calls+1
				continue
			}
			rec, err := r.Next()
			if err != nil {
				return instances, calls, err
			}
			if rec.Kind == bmd.KindInstance {
				instances++
			}
		}
	}
	want, _, wantEnd := read(0)
	got, calls, end := read(n)
	if got != want || fmt.Sprint(end) != fmt.Sprint(wantEnd) || want < 100 || calls < want/4 {
		t.Errorf("%d instances read, in %d calls of NextObjects, then %v; Next alone %d, then %v", got, calls, end, want, wantEnd)
	}
	small := bmdtest.WideClass(t, fields, 40, 0)
	if got, want := readObjectsOr(small, func(*bmd.Reader) {}, 40, 0), readObjectsOr(small, func(*bmd.Reader) {}, 0, 0); !slices.Equal(got, want) {
		t.Errorf("NextObjects and Next differ: %s", firstRecordDiff(got, want))
	}
}
