package crunch_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
)

// FuzzCrunch crunches any input as an HPROF dump, with default options and
// with options that keep or drop more: no panic, and whenever crunch
// succeeds its output is a BMD file that reads back whole.
func FuzzCrunch(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data, uint8(0))
	}
	f.Add(fuzzseed.HandBuilt(4, "JAVA PROFILE 1.0.3"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, o uint8) {
		opt := crunch.Options{KeepStrings: o&1 != 0, KeepPrimitives: o&2 != 0}
		if o&4 != 0 {
			opt.DropHeaps = []string{"zygote", "app"}
		}
		if o&8 != 0 {
			opt.Profile = "leak"
			opt.PreserveClasses = []string{"com.example.Leaf"}
		}
		var out bytes.Buffer
		if _, err := crunch.Crunch(bytes.NewReader(data), &out, opt); err != nil {
			return
		}
		r, err := bmd.NewReader(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("crunch output has no BMD header: %v", err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				return
			} else if err != nil {
				t.Fatalf("crunch output does not read back: %v", err)
			}
		}
	})
}
