package crunch_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// fuzzMaxOutput bounds the HPROF a fuzzed round trip may write: a few
// input bytes can declare a 4-billion-element array, which crunch keeps
// as a length and decrunch would write out in full.
const fuzzMaxOutput = 16 << 20

// FuzzCrunch crunches any input as an HPROF dump, with default options and
// with options that keep or drop more (o's bits: keep strings, keep
// primitives, drop heaps, leak profile). No panic, and whenever crunch
// succeeds its output is a BMD file that reads back whole and decrunches
// (unless the HPROF would exceed fuzzMaxOutput). When nothing is dropped
// and names are kept (--keep-strings, with or without --keep-primitives),
// the decrunched dump has the input's object graph: the same heap dumps,
// objects, classes with their names, super classes, instance sizes and
// fields, references, array lengths and roots (heapstat.Canonical, which
// renumbers IDs and leaves out primitive values).
func FuzzCrunch(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data, uint8(0))
		f.Add(s.Data, uint8(1))
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
		bmdtest.Records(t, out.Bytes(), false, nil)
		var back bytes.Buffer
		_, err := decrunch.Decrunch(bytes.NewReader(out.Bytes()), &back, decrunch.Options{MaxOutput: fuzzMaxOutput})
		if le := (*decrunch.OutputLimitError)(nil); errors.As(err, &le) {
			return
		}
		if err != nil {
			t.Fatalf("%+v: crunch output does not decrunch: %v", opt, err)
		}
		if !opt.KeepStrings || opt.DropHeaps != nil || opt.Profile != "" {
			return
		}
		want, err := heapstat.Canonical(data)
		if err != nil {
			return // crunch accepts what heapstat's stricter walk may not
		}
		got, err := heapstat.Canonical(back.Bytes())
		if err != nil {
			t.Fatalf("%+v: the decrunched HPROF does not read back: %v", opt, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v: the round trip changed the dump (- input, + decrunched):\n%s", opt, lineDiff(want, got, 10))
		}
	})
}
