package bmdtest

import (
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// TestRecords: Records gives every record of a file in order, the values
// of its instances decoded unless asked to skip objects, and the file's
// metadata.
func TestRecords(t *testing.T) {
	file := WideClass(t, 3, 5, 0)
	for _, skip := range []bool{false, true} {
		var kinds []bmd.Kind
		values := 0
		meta := Records(t, file, skip, func(rec *bmd.Record) {
			kinds = append(kinds, rec.Kind)
			if rec.Kind == bmd.KindInstance {
				values += len(rec.Values)
			}
		})
		if meta.Objects != 6 || meta.IDSize != 4 {
			t.Errorf("skip %v: metadata %+v, want 6 objects of 4-byte IDs", skip, meta)
		}
		want := []bmd.Kind{bmd.KindString, bmd.KindHeapDump, bmd.KindClass, bmd.KindInstance, bmd.KindInstance,
			bmd.KindInstance, bmd.KindInstance, bmd.KindInstance, bmd.KindHeapDumpEnd, bmd.KindEnd}
		if !slices.Equal(kinds, want) {
			t.Fatalf("skip %v: records %v, want %v", skip, kinds, want)
		}
		if skip && values != 0 || !skip && values != 15 {
			t.Errorf("skip %v: %d values decoded", skip, values)
		}
	}
}
