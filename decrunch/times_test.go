package decrunch

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/multidump"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// recordTimes is what a round trip keeps of the times of a dump's
// top-level records (spec/bmd.md §8).
type recordTimes struct {
	// created is the date Eclipse MAT gives the first heap dump
	// (Pass1Parser): the header's, plus the heap dump record's time, plus
	// 2³² µs for each record before it whose time is lower than the one
	// before (which MAT takes for the wrap of a 32-bit clock), in ms.
	created int64
	kept    []uint32 // the times of the records that keep their place
	heaps   []uint32 // the times of the heap dump records, runs of one time as one
	names   []uint32 // the times of the STRING and LOAD CLASS records
}

// timesOf reads the times of the top-level records of an HPROF dump.
func timesOf(t *testing.T, data []byte) recordTimes {
	t.Helper()
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var rt recordTimes
	var prev, wraps int64
	found := false
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if int64(rec.Time) < prev {
			wraps++
		}
		prev = int64(rec.Time)
		switch rec.Tag {
		case hprof.TagString, hprof.TagLoadClass:
			rt.names = append(rt.names, rec.Time)
		case hprof.TagHeapDump, hprof.TagHeapDumpSegment:
			if !found {
				rt.created, found = int64(r.Header().Timestamp)+(wraps<<32+int64(rec.Time))/1000, true
			}
			if n := len(rt.heaps); n == 0 || rt.heaps[n-1] != rec.Time {
				rt.heaps = append(rt.heaps, rec.Time)
			}
		case hprof.TagStackFrame, hprof.TagStackTrace, hprof.TagStartThread, hprof.TagEndThread, hprof.TagUnloadClass:
			rt.kept = append(rt.kept, rec.Time)
		}
	}
	return rt
}

// TestRecordTimes: a round trip keeps the times of the records that keep
// their place and of the heap dump records, and the date Eclipse MAT
// gives a dump; the names that decrunch writes before them (STRING and
// LOAD CLASS) have time 0, so that times do not go back before the first
// heap dump. It fails with either fix undone: crunch wrote a heap dump
// record after the class definitions it needs, whose LOAD CLASS records
// set their own times, and so gave it theirs (131 ms for 2,496 ms in the
// ahat RI dump); decrunch wrote the names with their times, out of order
// (MAT dated that dump 11.9 hours late, hprof-slurp-hprof-32.bin 17.9),
// and began its second pass at the time its first ended (the first of
// three heap dumps dated as the last).
// On the corpus dumps (old agents' dumps, whose records' times vary), a
// file of three heap dumps, and the fixtures.
func TestRecordTimes(t *testing.T) {
	var three bytes.Buffer
	if err := multidump.Write(&three, 3); err != nil {
		t.Fatal(err)
	}
	dumps := map[string][]byte{"multidump": three.Bytes()}
	for name, data := range testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz") {
		dumps[name] = data
	}
	t.Run("shared corpus", func(t *testing.T) {
		for _, p := range testutil.CorpusHPROFs(t) {
			dumps[filepath.Base(p)] = testutil.ReadAll(t, p)
		}
	})
	for name, data := range dumps {
		t.Run(name, func(t *testing.T) {
			want := timesOf(t, data)
			out, _ := decrunchBytes(t, crunchBytes(t, data, crunch.Options{}), Options{})
			got := timesOf(t, out)
			if got.created != want.created {
				t.Errorf("MAT's date of the heap dump: %d ms, want %d (%+.1f h)", got.created, want.created, float64(got.created-want.created)/3.6e6)
			}
			if !slices.Equal(got.kept, want.kept) {
				t.Errorf("times of the records kept in place: %v, want %v", got.kept, want.kept)
			}
			if !slices.Equal(got.heaps, want.heaps) {
				t.Errorf("times of the heap dump records: %v, want %v", got.heaps, want.heaps)
			}
			if i := slices.IndexFunc(got.names, func(t uint32) bool { return t != 0 }); i >= 0 {
				t.Errorf("name record %d has time %d, want 0", i, got.names[i])
			}
		})
	}
}
