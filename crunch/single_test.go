package crunch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/cores"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/multidump"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// onOneGoroutine makes pass 2 run on one goroutine (pass2.single) or on
// two, until the function it returns is called.
func onOneGoroutine(one bool) (restore func()) {
	was := pass2OneGoroutine
	pass2OneGoroutine = func(uint64, int64) bool { return one }
	return func() { pass2OneGoroutine = was }
}

// bothPass2Ways runs f as two subtests: pass 2 on two goroutines, and on
// one.
func bothPass2Ways(t *testing.T, f func(t *testing.T)) {
	for _, one := range []bool{false, true} {
		t.Run(map[bool]string{false: "two goroutines", true: "one goroutine"}[one], func(t *testing.T) {
			defer onOneGoroutine(one)()
			f(t)
		})
	}
}

// crunchPass2 crunches data with pass 2 on one goroutine or on two.
func crunchPass2(data []byte, opt Options, one bool) (*Stats, []byte, error) {
	defer onOneGoroutine(one)()
	var out bytes.Buffer
	st, err := Crunch(bytes.NewReader(data), &out, opt)
	return st, out.Bytes(), err
}

// samePass2Ways checks that pass 2 on one goroutine writes what pass 2 on
// two writes, byte for byte, with the same Stats, or fails with the same
// error.
func samePass2Ways(t *testing.T, data []byte, opt Options) {
	t.Helper()
	wantSt, want, wantErr := crunchPass2(data, opt, false)
	st, got, err := crunchPass2(data, opt, true)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%+v: one goroutine: error %v; two: %v", opt, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%+v: one goroutine wrote %d bytes of BMD, which differ from the %d of two", opt, len(got), len(want))
	}
	if err == nil && !reflect.DeepEqual(st, wantSt) {
		t.Fatalf("%+v: one goroutine's Stats\n%+v\ndiffer from two's\n%+v", opt, st, wantSt)
	}
}

// TestPass2OneGoroutine: pass 2 on one goroutine gives the BMD file or the
// error of pass 2 on two, on the fixtures and the corpus dumps, whole, cut
// short and with a byte changed, with the options that keep more or drop
// heaps (objects then go through items); on a dump with objects dumped
// again; and on one with unknown IDs, numbered in order (TestUnknownIDsInOrder
// checks the numbers).
func TestPass2OneGoroutine(t *testing.T) {
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "sample-align16.hprof.gz", "sample-nocoops.hprof.gz", "secrets.hprof.gz", "sample-zgc.hprof.gz", "sample-jdk25.hprof.gz")
	var several bytes.Buffer
	if err := multidump.Write(&several, 3); err != nil {
		t.Fatal(err)
	}
	dumps["three heap dumps"] = several.Bytes()
	dumps["unknown IDs"] = unknownIDsDump(2 * chunkSubRecords)
	options := []Options{{}, {KeepPrimitives: true, KeepStrings: true}, {Profile: "leak", DropHeaps: []string{"zygote", "image"}}}
	for name, data := range dumps {
		t.Run(name, func(t *testing.T) {
			for _, opt := range options {
				samePass2Ways(t, data, opt)
			}
			samePass2Ways(t, data[:len(data)*2/3], Options{})
			bad := bytes.Clone(data)
			bad[len(bad)/2] ^= 0x5a
			samePass2Ways(t, bad, Options{})
		})
	}
}

// FuzzPass2Ways: whatever the input, pass 2 on one goroutine gives what
// pass 2 on two gives.
func FuzzPass2Ways(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		samePass2Ways(t, data, Options{})
	})
}

// nullArraysDump writes a dump of one heap dump record, as Android
// writes them, of arrays object arrays of elems null references (8-byte
// IDs), and returns its path.
func nullArraysDump(t *testing.T, arrays, elems int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "arrays.hprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := hprof.NewWriter(f, hprof.Header{Version: hprof.Version102, IDSize: 8})
	w.SegmentSize = 128 << 20
	w.BeginHeapDump(hprof.TagHeapDump, 0)
	nulls := make([]uint64, elems)
	for i := range arrays {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: uint64(0x100000 + 16*i), Elements: nulls})
	}
	w.EndHeapDump()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// TestPagesGivenBack: both passes give back the pages of a mapped dump as
// they read on, pass 2 on two goroutines or on one, also when the heap
// dump is one record, as Android writes it, here of 64 KiB arrays: while
// an 80 MiB dump is crunched, the process's file pages stay within a few
// release steps (Linux, where /proc says).
func TestPagesGivenBack(t *testing.T) {
	const arrays = 1280 // of 64 KiB, null references, which both passes read
	path := nullArraysDump(t, arrays, 8192)
	bothPass2Ways(t, func(t *testing.T) {
		f := openMapped(t, path)
		before := fileRSS(t)
		var grown [3]int64 // by pass
		var calls [3]int
		progress := func(pass int, _ int64) {
			grown[pass] = max(grown[pass], fileRSS(t)-before)
			calls[pass]++
		}
		st, err := Crunch(f, io.Discard, Options{Progress: progress})
		if err != nil {
			t.Fatal(err)
		}
		if st.Objects != arrays || calls[2] < 4 {
			t.Fatalf("test premise: %d objects, %d progress calls in pass 2", st.Objects, calls[2])
		}
		t.Logf("grown %v MiB, calls %v", [3]int64{grown[0] >> 20, grown[1] >> 20, grown[2] >> 20}, calls)
		for pass := 1; pass <= 2; pass++ {
			if grown[pass] > 4*releaseStep {
				t.Errorf("pass %d: the process's file pages grew by %d MiB reading an 80 MiB dump", pass, grown[pass]>>20)
			}
		}
	})
}

// TestPass2ReadToEachObject: pass 2 on one goroutine reports its
// progress, and gives back the pages of a mapped dump, at the first
// sub-record past each mark, as when it read its objects one by one, also
// where it reads them a batch at a time (SkimObjectsData). Here the
// dump's 80 object arrays of arrayPiece elements (512 KiB each, 40 MiB)
// were all one batch: readTo after the batch reported progress only at
// its last array ([31 41420767], want [31 16778056 33556072]), and the
// file pages grew by 40 MiB (Linux 6.18, ext4, where touching the head
// of each array maps the pages around it), 10 MiB at b6cb827.
func TestPass2ReadToEachObject(t *testing.T) {
	const arrays = 80 // null references, which pass 2 reads
	path := nullArraysDump(t, arrays, arrayPiece)
	// The offsets of the sub-records, at the first past each mark of
	// which readTo reports progress: every 16 MiB (progress.at).
	r := skippingReader(t, path)
	var subs []int64
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for s := new(hprof.SubRecord); r.NextSub(s) == nil; {
		subs = append(subs, s.Offset)
	}
	defer onOneGoroutine(true)()
	f := openMapped(t, path)
	before := fileRSS(t)
	var calls []int64
	var grown int64
	progress := func(pass int, done int64) {
		if pass == 2 {
			calls = append(calls, done)
			grown = max(grown, fileRSS(t)-before)
		}
	}
	st, err := Crunch(f, io.Discard, Options{Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if st.Objects != arrays || len(subs) != arrays || len(calls) == 0 {
		t.Fatalf("test premise: %d objects, %d sub-records, progress calls %v", st.Objects, len(subs), calls)
	}
	want := []int64{calls[0]}
	for next := calls[0] + 16<<20; ; {
		i, _ := slices.BinarySearch(subs, next)
		if i == len(subs) {
			break
		}
		want = append(want, subs[i])
		next = subs[i] + 16<<20
	}
	if !slices.Equal(calls, want) {
		t.Errorf("pass 2 reported progress at %v, want %v (the first sub-record 16 MiB past the last)", calls, want)
	}
	if grown > 4*releaseStep {
		t.Errorf("the process's file pages grew by %d MiB in pass 2, reading a 40 MiB dump", grown>>20)
	}
}

// TestOneCoreOneGoroutine: pass 2 (of a million objects) runs on one
// goroutine exactly when a second one does not pay: Go has one core to
// run on (GOMAXPROCS=1), or the probe of the cores finds them far apart
// or the other one busy.
func TestOneCoreOneGoroutine(t *testing.T) {
	t.Setenv(cores.PipelineEnv, "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func(p func() (time.Duration, error)) { cores.Probe = p }(cores.Probe)
	for _, c := range []struct {
		procs int
		rt    time.Duration
		ok    bool
		want  bool
	}{
		{1, 60 * time.Nanosecond, true, true},
		{2, 60 * time.Nanosecond, true, false},
		{4, 60 * time.Nanosecond, true, false},
		{2, 350 * time.Nanosecond, true, true},
		{2, 0, false, true},
	} {
		runtime.GOMAXPROCS(c.procs)
		cores.Probe = func() (time.Duration, error) {
			if !c.ok {
				return 0, cores.ErrNoStart
			}
			return c.rt, nil
		}
		if got := pass2OneGoroutine(1<<20, minMapBytes); got != c.want {
			t.Errorf("GOMAXPROCS=%d, round trip %v (measured %v): one goroutine %v, want %v", c.procs, c.rt, c.ok, got, c.want)
		}
	}
}

// TestPass2DumpBytes: pass 2 asks pass2OneGoroutine with the dump's size
// as pass 1 read it, and its objects (classes among them, as
// Stats.Objects counts them).
func TestPass2DumpBytes(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	was := pass2OneGoroutine
	defer func() { pass2OneGoroutine = was }()
	var objects uint64
	var size int64 = -1
	pass2OneGoroutine = func(n uint64, b int64) bool { objects, size = n, b; return true }
	st, err := Crunch(bytes.NewReader(data), io.Discard, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(data)) || objects != st.Objects {
		t.Errorf("pass2OneGoroutine asked with %d objects and %d bytes, want %d and %d", objects, size, st.Objects, len(data))
	}
}

// TestSmallDumpOneGoroutine: pass 2 of a dump under minMapBytes runs on
// one goroutine without a probe, however many objects it has and however
// near the cores are, unless HEAPCRUNCH_PIPELINE=on; a dump of
// minMapBytes asks the probe.
func TestSmallDumpOneGoroutine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(p func() (time.Duration, error)) { cores.Probe = p }(cores.Probe)
	probed := false
	cores.Probe = func() (time.Duration, error) { probed = true; return 60 * time.Nanosecond, nil }
	for _, c := range []struct {
		env    string
		bytes  int64
		want   bool // one goroutine
		probed bool
	}{
		{"", minMapBytes - 1, true, false},
		{"", minMapBytes, false, true},
		{"on", minMapBytes - 1, false, false},
		{"off", minMapBytes, true, false},
	} {
		t.Setenv(cores.PipelineEnv, c.env)
		probed = false
		if got := pass2OneGoroutine(1<<22, c.bytes); got != c.want || probed != c.probed {
			t.Errorf("%s=%q, a dump of %d bytes: one goroutine %v, probed %v; want %v, %v", cores.PipelineEnv, c.env, c.bytes, got, probed, c.want, c.probed)
		}
	}
}
