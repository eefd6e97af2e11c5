package bmd_test

import (
	"bytes"
	"io"
	"math"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// TestInstanceKept checks that InstanceKept, given only the values kept,
// writes instances that read back with those values (and 0 for the
// dropped primitives), and the bytes Instance writes given every value: on
// a chain whose classes mix dropped and kept primitives (its layout
// cached), and on a chain that loops (built anew at each use).
func TestInstanceKept(t *testing.T) {
	mixed := []*bmd.Class{
		{Index: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}, {Name: 2, Type: bmd.Object}, {Name: 3, Type: bmd.Long, Kept: true}, {Name: 4, Type: bmd.Float, Kept: true}}},
		{Index: 2, Super: 1, Fields: []bmd.Field{{Name: 5, Type: bmd.Object}, {Name: 6, Type: bmd.Byte}, {Name: 7, Type: bmd.Double, Kept: true}, {Name: 8, Type: bmd.Char}}},
	}
	loop := []*bmd.Class{
		{Index: 1, Super: 2, Fields: []bmd.Field{{Name: 1, Type: bmd.Short}, {Name: 2, Type: bmd.Object}}},
		{Index: 2, Super: 1, Fields: []bmd.Field{{Name: 3, Type: bmd.Object}, {Name: 4, Type: bmd.Int, Kept: true}}},
	}
	for _, tc := range []struct {
		name            string
		classes         []*bmd.Class
		class           uint64
		all, kept, read []uint64 // every value, those kept, those read back
	}{
		// Instance order: class 2's fields, then class 1's.
		{"mixed", mixed, 2,
			[]uint64{4, 0x7f, math.Float64bits(-2.5), 'x', 0xdead, 5, 1 << 40, uint64(math.Float32bits(1.5))},
			[]uint64{4, math.Float64bits(-2.5), 5, 1 << 40, uint64(math.Float32bits(1.5))},
			[]uint64{4, 0, math.Float64bits(-2.5), 0, 0, 5, 1 << 40, uint64(math.Float32bits(1.5))}},
		{"loop", loop, 1, []uint64{9, 3, 4, 1<<31 + 7}, []uint64{3, 4, 1<<31 + 7}, []uint64{0, 3, 4, 1<<31 + 7}},
	} {
		write := func(f func(w *bmd.Writer) (uint64, error)) []byte {
			var out bytes.Buffer
			w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 8, Classes: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.classes {
				if _, err := w.Class(c); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 { // the second and third from the layouts built
				if _, err := f(w); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return out.Bytes()
		}
		b := write(func(w *bmd.Writer) (uint64, error) { return w.InstanceKept(tc.class, tc.kept) })
		r, err := bmd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if rec.Kind == bmd.KindInstance {
				n++
				if rec.Class != tc.class || !slices.Equal(rec.Values, tc.read) {
					t.Errorf("%s: read back class %d, values %x; want class %d, %x", tc.name, rec.Class, rec.Values, tc.class, tc.read)
				}
			}
		}
		if n != 3 {
			t.Errorf("%s: %d instances read back, want 3", tc.name, n)
		}
		a := write(func(w *bmd.Writer) (uint64, error) { return w.Instance(tc.class, tc.all) })
		if !bytes.Equal(a, b) {
			t.Errorf("%s: InstanceKept wrote\n% x\nInstance\n% x", tc.name, b, a)
		}
	}
}
