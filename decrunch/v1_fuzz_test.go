package decrunch_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/names"
)

// FuzzDecrunchV1: any input that reads as BMD version 1 gives a valid
// HPROF or an error, never a panic; with salvage, a valid HPROF of what
// precedes the damage.
func FuzzDecrunchV1(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		for _, opt := range []crunch.Options{{}, {KeepStrings: true, KeepPrimitives: true}} {
			var b bytes.Buffer
			if _, err := crunch.CrunchV1(bytes.NewReader(s.Data), &b, opt, nil); err == nil {
				f.Add(b.Bytes())
				if b.Len() > 100 {
					f.Add(b.Bytes()[:b.Len()*2/3])
				}
			}
		}
	}
	// As the original cruncher wrote: no marker, LEGACY records with the
	// dump's IDs, a super class defined after its subclass.
	var b bytes.Buffer
	w, _ := bmd.NewV1Writer(&b, []byte("JAVA PROFILE 1.0.3"))
	w.ClearString(1, []byte("java.lang.Object"))
	w.HashedString(2, 24, names.JavaHashString("com.example.MainActivity"))
	w.Legacy(0x04, make([]byte, 24))
	w.Legacy(0x05, []byte{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0})
	w.Class(&bmd.V1Class{ID: 5, Super: 6, Name: 2, Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}, Discarded: 6})
	w.Class(&bmd.V1Class{ID: 6, Name: 1})
	w.Instance(7, 5, []uint64{8})
	w.ObjectArray(8, 6, []uint32{7, 0})
	w.PrimitiveArray(9, bmd.Char, 3)
	w.RootObjects([]uint32{7, 9})
	w.Flush()
	f.Add(b.Bytes())
	// A class whose discarded fields, as the original's int fillers, are
	// more than a CLASS DUMP's count holds (TestV1FillersFitClassDump).
	b.Reset()
	w, _ = bmd.NewV1Writer(&b, []byte("JAVA PROFILE 1.0.2"))
	w.ClearString(1, []byte("java.lang.Object"))
	w.Class(&bmd.V1Class{ID: 5, Name: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}}, Discarded: 65535 * 4})
	w.Instance(7, 5, []uint64{3})
	w.RootObjects([]uint32{7})
	w.Flush()
	f.Add(b.Bytes())
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		names := decrunch.NewNameTable()
		add := names.Source("fuzz")
		for _, n := range []string{"java.lang.Object", "com.example.MainActivity", "value"} {
			add(n)
		}
		for _, salvage := range []bool{false, true} {
			out := &limitWriter{max: 16 << 20}
			st, err := decrunch.Decrunch(bytes.NewReader(data), out, decrunch.Options{Names: names, Salvage: salvage})
			if err != nil {
				var fe *bmd.FormatError
				if !errors.As(err, &fe) && !errors.Is(err, errTooBig) && !errors.Is(err, bmd.ErrNotBMD) {
					// Decrunch's own checks (an *IDOverflowError) end the
					// reading too, and salvage keeps what came before.
					if salvage {
						t.Fatalf("salvage failed: %v", err)
					}
				}
				if salvage && fe != nil && out.buf.Len() > 0 {
					t.Fatalf("salvage failed: %v", err)
				}
				continue
			}
			if st == nil {
				t.Fatal("no error and no stats")
			}
			if err := heapstat.ReadAll(out.buf.Bytes()); err != nil {
				t.Fatalf("salvage=%v: the HPROF written does not read back: %v", salvage, err)
			}
		}
	})
}
