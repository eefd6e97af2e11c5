package bmd_test

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// runObject is an object record for TestAddObjects: written one by one,
// or added in a run.
type runObject struct {
	kind   bmd.Kind
	class  uint64
	refs   []uint64
	t      bmd.Type
	length uint32
}

// runFile is the file of TestAddObjects: classes 1 (two references), 2
// (none, two dropped ints) and 3 (an array class) defined, 4 and 5 not,
// 4 bytes per ID.
func runFile(t *testing.T, runs bool, groups [][]runObject) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 4, Classes: 5, Hash: bmd.HashXX64})
	if err != nil {
		t.Fatal(err)
	}
	defs := []bmd.Class{
		{Index: 1, Fields: []bmd.Field{{Name: 0, Type: bmd.Object}, {Name: 0, Type: bmd.Object}}},
		{Index: 2, Fields: []bmd.Field{{Name: 0, Type: bmd.Int}, {Name: 0, Type: bmd.Int}}},
		{Index: 3},
	}
	for i := range defs {
		if _, err := w.Class(&defs[i]); err != nil {
			t.Fatal(err)
		}
	}
	r := bmd.NewObjectRun(5, 4)
	for g, objs := range groups {
		if g > 0 {
			// Another record between the groups: a run of OBJECTS ends.
			if err := w.Trace(uint32(g)); err != nil {
				t.Fatal(err)
			}
		}
		if runs {
			r.Reset(w.NextID())
		}
		for _, o := range objs {
			if runs {
				var ok bool
				switch o.kind {
				case bmd.KindInstance:
					size := int64(8)
					ok = r.Instance(o.class, size, o.refs)
				case bmd.KindObjectArray:
					ok = r.ObjectArray(o.class, o.class >= 1 && o.class <= 3, o.refs)
				default:
					ok = r.PrimitiveArray(o.t, o.length, o.kind == bmd.KindPrimitiveNoData)
				}
				if !ok {
					t.Fatalf("%+v not added", o)
				}
				continue
			}
			var err error
			switch o.kind {
			case bmd.KindInstance:
				_, err = w.InstanceKept(o.class, o.refs)
			case bmd.KindObjectArray:
				_, err = w.ObjectArray(o.class, o.refs)
			default:
				_, err = w.PrimitiveArray(o.t, o.length, o.kind == bmd.KindPrimitiveNoData)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if runs {
			if err := w.AddObjects(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// randomObjects returns n object records for runFile, referring to the
// objects 1 to max, large ones among them.
func randomObjects(rng *rand.Rand, n int, max uint64) []runObject {
	objs := make([]runObject, n)
	ref := func() uint64 {
		if rng.IntN(4) == 0 {
			return 0
		}
		return 1 + rng.Uint64N(max)
	}
	for i := range objs {
		switch rng.IntN(5) {
		case 0, 1:
			objs[i] = runObject{kind: bmd.KindInstance, class: 1, refs: []uint64{ref(), ref()}}
		case 2:
			objs[i] = runObject{kind: bmd.KindInstance, class: 2}
		case 3:
			elems := make([]uint64, rng.IntN(8)+rng.IntN(2)*rng.IntN(3000))
			for j := range elems {
				elems[j] = ref()
			}
			objs[i] = runObject{kind: bmd.KindObjectArray, class: []uint64{3, 4, 0, 100}[rng.IntN(4)], refs: elems}
		default:
			k := bmd.KindPrimitiveArray
			if rng.IntN(3) == 0 {
				k = bmd.KindPrimitiveNoData
			}
			objs[i] = runObject{kind: k, t: bmd.Type(4 + rng.IntN(8)), length: rng.Uint32N(1 << 20)}
		}
	}
	return objs
}

// TestAddObjects checks that objects added in runs make the same file,
// byte for byte, as the same objects written one by one: OBJECTS
// records cut at the same places (runs of 64 KiB, records before and
// after runs too short to frame), the same blocks and the same END.
func TestAddObjects(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var groups [][]runObject
		for range 1 + rng.IntN(6) {
			n := []int{0, 1, 3, 200, 5000}[rng.IntN(5)]
			groups = append(groups, randomObjects(rng, n, 20000))
		}
		one := runFile(t, false, groups)
		added := runFile(t, true, groups)
		if !bytes.Equal(one, added) {
			t.Fatalf("seed %d: %d bytes added in runs, %d one by one, first difference at %d", seed, len(added), len(one), firstDiff(one, added))
		}
		recs, kinds, err := skimRead(added, false)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(recs) == 0 || len(kinds) != len(recs) {
			t.Fatalf("seed %d: nothing read", seed)
		}
	}
}

// firstDiff returns the first offset where a and b differ.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestAddObjectsChecks checks that a run that took for granted what the
// Writer does not hold is refused, and that a record a run cannot hold is
// not added to it.
func TestAddObjectsChecks(t *testing.T) {
	newWriter := func() *bmd.Writer {
		w, err := bmd.NewWriter(&bytes.Buffer{}, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 4, Classes: 3, Hash: bmd.HashXX64})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Class(&bmd.Class{Index: 1, Fields: []bmd.Field{{Type: bmd.Object}}}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	cases := []struct {
		name string
		fill func(r *bmd.ObjectRun)
		want string
	}{
		{"first ID", func(r *bmd.ObjectRun) { r.Reset(9); r.PrimitiveArray(bmd.Int, 1, false) }, "next ID is 4"},
		{"undefined class", func(r *bmd.ObjectRun) { r.Reset(4); r.Instance(2, 4, []uint64{0}) }, "undefined class 2"},
		{"fields", func(r *bmd.ObjectRun) { r.Reset(4); r.Instance(1, 8, []uint64{0, 0}) }, "has 2 values for 1 fields kept"},
		{"size", func(r *bmd.ObjectRun) { r.Reset(4); r.Instance(1, 8, []uint64{0}) }, "as 1 references and 8 bytes"},
		{"array class defined", func(r *bmd.ObjectRun) { r.Reset(4); r.ObjectArray(1, false, nil) }, "took class 1 as defined (false)"},
		{"array class undefined", func(r *bmd.ObjectRun) { r.Reset(4); r.ObjectArray(2, true, nil) }, "took class 2 as defined (true)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWriter()
			r := bmd.NewObjectRun(3, 4)
			c.fill(r)
			if r.Len() != 1 {
				t.Fatalf("the run holds %d records, want 1", r.Len())
			}
			err := w.AddObjects(r)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("AddObjects: %v, want an error with %q", err, c.want)
			}
		})
	}
	r := bmd.NewObjectRun(3, 4)
	r.Reset(4)
	refused := []struct {
		name string
		ok   bool
	}{
		{"class 0", r.Instance(0, 0, nil)},
		{"class above the count", r.Instance(4, 0, nil)},
		{"object type", r.PrimitiveArray(bmd.Object, 1, false)},
		{"invalid type", r.PrimitiveArray(bmd.Type(12), 1, false)},
		{"object as a defined class", r.ObjectArray(7, true, nil)},
		{"reference 2^63 away", r.ObjectArray(1, true, []uint64{4 + 1<<63})},
	}
	for _, c := range refused {
		if c.ok {
			t.Errorf("%s: added", c.name)
		}
	}
	if !r.Instance(1, 4, []uint64{5}) || r.Instance(1, 4, []uint64{5, 6}) || r.Instance(1, 8, []uint64{5}) {
		t.Errorf("an instance's class taken with two layouts in one run")
	}
	if !r.ObjectArray(2, true, nil) || r.ObjectArray(2, false, nil) {
		t.Errorf("an array's class taken as defined and not in one run")
	}
	if r.Len() != 2 {
		t.Errorf("the run holds %d records, want 2", r.Len())
	}
}

// TestObjectRunSiblings: runs that share a table of classes (Sibling)
// keep what each took for granted apart, filled in any order, and share
// it: a thousand siblings of a run for a million classes allocate a
// table once, not once each.
func TestObjectRunSiblings(t *testing.T) {
	a := bmd.NewObjectRun(5, 4)
	a.Reset(10)
	b := a.Sibling()
	b.Reset(20)
	if !a.Instance(1, 8, []uint64{0, 0}) || !b.Instance(1, 4, []uint64{0}) {
		t.Fatal("an instance of class 1 refused by a new run")
	}
	// Back to a, then to b: each keeps its own layout of class 1.
	if a.Instance(1, 4, []uint64{0}) || !a.Instance(1, 8, []uint64{0, 0}) {
		t.Error("run a, back from its sibling, forgot the layout it took for class 1")
	}
	if b.Instance(1, 8, []uint64{0, 0}) || !b.Instance(1, 4, []uint64{0}) {
		t.Error("run b, back from its sibling, forgot the layout it took for class 1")
	}
	if !a.ObjectArray(3, true, nil) || !b.ObjectArray(3, false, nil) || a.ObjectArray(3, false, nil) || b.ObjectArray(3, true, nil) {
		t.Error("siblings took class 3 as defined and not, each for itself, and kept it")
	}
	b.Reset(30) // emptied: takes class 1 anew
	if !b.Instance(1, 8, []uint64{0, 0}) || a.Instance(1, 4, []uint64{0}) {
		t.Error("after Reset of its sibling, a run takes a layout again or forgets its own")
	}
	var uses [][2]any
	for idx, defd := range a.Uses() {
		uses = append(uses, [2]any{idx, defd})
	}
	if len(uses) != 2 || uses[0] != [2]any{uint64(1), true} || uses[1] != [2]any{uint64(3), true} {
		t.Errorf("a's uses: %v", uses)
	}

	const classes = 1 << 20
	first := bmd.NewObjectRun(classes, 4)
	first.Reset(1)
	first.Instance(classes, 4, []uint64{0})
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	runs := make([]*bmd.ObjectRun, 1000)
	for i := range runs {
		runs[i] = first.Sibling()
		runs[i].Reset(uint64(i) + 2)
		runs[i].Instance(uint64(i)+1, 4, []uint64{0})
	}
	runtime.ReadMemStats(&ms1)
	if got := ms1.TotalAlloc - ms0.TotalAlloc; got > 8<<20 {
		t.Errorf("1000 sibling runs of one instance each, for %d classes, allocated %d bytes", classes, got)
	}
}
