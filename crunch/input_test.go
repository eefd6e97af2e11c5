package crunch

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/internal/cores"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// The tests of this package map a file given to Crunch wherever the
// system can, as crunch did before it asked cores.MapInput: they test
// the mapped ways (pass 1's batches and pieces, pass 2's spans) whatever
// the cores of the machine running them. TestInputRead tests the other.
func init() { wayOf = func(io.ReadSeeker) readWay { return readMapped } }

// defaultWayOf is wayOf as crunch has it (package variables are set
// before init runs).
var defaultWayOf = wayOf

// TestInputRead: where wayOf says so, a file is read through a buffer,
// not mapped (pass 2 on one goroutine with readAlone), and gives the BMD
// file of the same dump mapped and of its bytes, with progress in both
// passes, with pass 2 on one goroutine and on two; a file cut short while
// crunch reads it is an error in either pass, not a crash.
func TestInputRead(t *testing.T) { bothPass2Ways(t, testInputRead) }

func testInputRead(t *testing.T) {
	data, path, want := sampleFile(t)
	var mapped bytes.Buffer
	if _, err := Crunch(openMapped(t, path), &mapped, Options{}); err != nil {
		t.Fatal(err)
	}
	defer func(f func(io.ReadSeeker) readWay) { wayOf = f }(wayOf)
	for _, way := range []readWay{readBuffered, readAlone} {
		wayOf = func(io.ReadSeeker) readWay { return way }
		testInputReadWay(t, data, want, mapped.Bytes(), way)
	}
}

func testInputReadWay(t *testing.T, data, want, mapped []byte, way readWay) {
	f := openMapped(t, writeTemp(t, "sample.hprof", data)) // a file the system would map
	if in := openInput(f); in.mapped != nil || in.alone != (way == readAlone) {
		in.unmap()
		t.Fatalf("way %d: openInput mapped the file (%v) or read it alone (%v)", way, in.mapped != nil, in.alone)
	}
	got, passes := crunchProgress(t, f)
	if !bytes.Equal(got, want) || !bytes.Equal(got, mapped) || !passes[1] || !passes[2] {
		t.Fatalf("way %d, file read through a buffer: %d bytes of BMD, want %d (mapped: %d); progress in passes %v",
			way, len(got), len(want), len(mapped), passes)
	}
	for _, cutIn := range []int{1, 2} {
		err := crunchCut(t, data, cutIn)
		// Cut in pass 1, the dump is short; in pass 2, it changed.
		want := map[int]string{1: "truncated", 2: "changed while it was read"}[cutIn]
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("file cut to 4096 bytes in pass %d: error %v, want one saying %q", cutIn, err, want)
		}
	}
}

// sampleFile writes the sample fixture to a file and returns its bytes,
// the file's path and its BMD file, crunched from its bytes.
func sampleFile(t *testing.T) (data []byte, path string, bmd []byte) {
	t.Helper()
	data = testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	path = writeTemp(t, "sample.hprof", data)
	var out bytes.Buffer
	if _, err := Crunch(bytes.NewReader(data), &out, Options{}); err != nil {
		t.Fatal(err)
	}
	return data, path, out.Bytes()
}

// crunchProgress crunches src and returns the BMD file and the passes
// that reported progress.
func crunchProgress(t *testing.T, src io.ReadSeeker) ([]byte, map[int]bool) {
	t.Helper()
	passes := map[int]bool{}
	var out bytes.Buffer
	if _, err := Crunch(src, &out, Options{Progress: func(pass int, _ int64) { passes[pass] = true }}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), passes
}

// crunchCut writes data to a file, crunches it, cutting it to 4096 bytes
// once pass cutIn reports progress, and returns the error.
func crunchCut(t *testing.T, data []byte, cutIn int) error {
	t.Helper()
	path := writeTemp(t, "cut.hprof", data)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cut := func(pass int, _ int64) {
		if pass == cutIn {
			if err := os.Truncate(path, 4096); err != nil {
				t.Error(err)
			}
		}
	}
	_, err = Crunch(f, io.Discard, Options{Progress: cut})
	return err
}

// TestSegmentWorkersMapped: pass 1 hands heap dump records to other
// goroutines only from a mapped dump, one per core for Go; a dump read
// through a buffer is read on pass 1's goroutine alone.
func TestSegmentWorkersMapped(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if n := segmentWorkers(true); n != 2 {
		t.Errorf("mapped, GOMAXPROCS=2: %d workers, want 2", n)
	}
	if n := segmentWorkers(false); n != 1 {
		t.Errorf("read through a buffer, GOMAXPROCS=2: %d workers, want 1", n)
	}
	runtime.GOMAXPROCS(1)
	if n := segmentWorkers(true); n != 1 {
		t.Errorf("mapped, GOMAXPROCS=1: %d workers, want 1", n)
	}
}

// TestMapCheaper: mapped is cheap enough at up to half as long again as
// read through a buffer, not beyond.
func TestMapCheaper(t *testing.T) {
	for _, c := range []struct {
		read, mapped time.Duration
		want         bool
	}{
		{time.Millisecond, 500 * time.Microsecond, true},
		{time.Millisecond, time.Millisecond, true},
		{time.Millisecond, 1500 * time.Microsecond, true},
		{time.Millisecond, 1501 * time.Microsecond, false},
		{600 * time.Microsecond, 2300 * time.Microsecond, false}, // this VM's, 2026-12-02
	} {
		if got := mapCheaper(c.read, c.mapped); got != c.want {
			t.Errorf("read %v, mapped %v: %v, want %v", c.read, c.mapped, got, c.want)
		}
	}
}

// TestMappedPays: a file under minMapBytes and a source that is not a
// file are not candidates for mapping (largeFile), so wayOf probes
// nothing for them; a larger file is, with its size, and the probe
// leaves the file's offset where it was, at its start, for openInput.
// (Whether it maps depends on the machine.)
func TestMappedPays(t *testing.T) {
	if !canMap {
		t.Skip("files are not mapped on this system")
	}
	small := openMapped(t, writeTemp(t, "small", make([]byte, minMapBytes-1)))
	if f, _ := largeFile(small); f != nil {
		t.Errorf("a file of %d bytes: largeFile gives it", minMapBytes-1)
	}
	if f, _ := largeFile(bytes.NewReader(make([]byte, minMapBytes))); f != nil {
		t.Error("a bytes.Reader: largeFile gives a file")
	}
	size := int64(minMapBytes + mapProbeBytes)
	f, got := largeFile(openMapped(t, writeTemp(t, "large", make([]byte, size))))
	if f == nil || got != size {
		t.Fatalf("a file of %d bytes: largeFile gives %v, %d", size, f, got)
	}
	pays := mappedPays(f, got)
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		t.Errorf("after the probe the file is at %d (%v), want 0", pos, err)
	}
	t.Logf("mapping pays on this machine: %v", pays)
}

// TestWayOf: crunch's choice of reading. A source that is not a file, or
// a file under minMapBytes, is read through a buffer without a probe of
// the cores; a larger one too where the cores are far apart or there is
// one core for Go; with the cores near, it is mapped or read alone, as
// mappedPays finds on this machine (on a system that maps no files, read
// through a buffer without a probe); HEAPCRUNCH_SPLIT=on maps it whatever
// its size or the probe, and "off" reads it through a buffer.
func TestWayOf(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(p func() (time.Duration, error)) { cores.Probe = p }(cores.Probe)
	probed := false
	near := func() (time.Duration, error) { probed = true; return 60 * time.Nanosecond, nil }
	far := func() (time.Duration, error) { probed = true; return 430 * time.Nanosecond, nil }
	small, large := writeTemp(t, "small", make([]byte, 1<<20)), writeTemp(t, "large", make([]byte, minMapBytes))
	open := func(p string) io.ReadSeeker { return openMapped(t, p) }
	// Where files are not mapped, a large file is as a small one.
	largeNear, largeProbes := []readWay{readMapped, readAlone}, canMap
	if !canMap {
		largeNear = []readWay{readBuffered}
	}
	for _, c := range []struct {
		name   string
		src    func() io.ReadSeeker
		env    string
		procs  int
		probe  func() (time.Duration, error)
		want   []readWay
		probes bool
	}{
		{"bytes", func() io.ReadSeeker { return bytes.NewReader(make([]byte, minMapBytes)) }, "", 2, near, []readWay{readBuffered}, false},
		{"small file", func() io.ReadSeeker { return open(small) }, "", 2, near, []readWay{readBuffered}, false},
		{"large file, far cores", func() io.ReadSeeker { return open(large) }, "", 2, far, []readWay{readBuffered}, largeProbes},
		{"large file, one core", func() io.ReadSeeker { return open(large) }, "", 1, near, []readWay{readBuffered}, false},
		{"large file, near cores", func() io.ReadSeeker { return open(large) }, "", 2, near, largeNear, largeProbes},
		{"small file, split on", func() io.ReadSeeker { return open(small) }, "on", 2, far, []readWay{readMapped}, false},
		{"large file, split off", func() io.ReadSeeker { return open(large) }, "off", 2, near, []readWay{readBuffered}, false},
	} {
		t.Setenv(cores.SplitEnv, c.env)
		runtime.GOMAXPROCS(c.procs)
		cores.Probe, probed = c.probe, false
		got := defaultWayOf(c.src())
		if !slices.Contains(c.want, got) || probed != c.probes {
			t.Errorf("%s: way %d, cores probed %v; want one of %v, probed %v", c.name, got, probed, c.want, c.probes)
		}
	}
}

// TestReadAloneOneGoroutine: a dump read alone runs pass 2 on one
// goroutine even where pass2OneGoroutine would run its pipeline; others
// as pass2OneGoroutine says.
func TestReadAloneOneGoroutine(t *testing.T) {
	p := &pass2{state: &state{nObj: 1 << 20}}
	for _, pipeline := range []bool{true, false} {
		defer onOneGoroutine(!pipeline)()
		if !p.oneGoroutine(&input{alone: true}) {
			t.Errorf("read alone, pipeline allowed %v: pass 2 on two goroutines", pipeline)
		}
		if got := p.oneGoroutine(&input{}); got == pipeline {
			t.Errorf("read through a buffer, pipeline allowed %v: one goroutine %v", pipeline, got)
		}
	}
}

// TestInputReaderReused: a dump read through a buffer is read by pass 2
// with pass 1's Reader, reset, so with its buffer: a new 1 MiB buffer
// cost 256 page faults (about 4 ms on the VM of 2026-12-02). A mapped
// dump needs no buffer.
func TestInputReaderReused(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	in := &input{src: bytes.NewReader(data), unmap: func() {}}
	r1, err := in.reader(1)
	if err != nil {
		t.Fatal(err)
	}
	n1 := 0
	for _, err := range r1.Records() { // pass 1 reads to the end
		if err != nil {
			t.Fatal(err)
		}
		n1++
	}
	r2, err := in.reader(2)
	if err != nil {
		t.Fatal(err)
	}
	if r2 != r1 {
		t.Fatal("pass 2 reads with a new Reader, not pass 1's")
	}
	if r2.Offset() != int64(len(r2.Header().Version))+1+4+8 {
		t.Errorf("pass 2's Reader at %d, not after the header", r2.Offset())
	}
	n := 0
	for _, err := range r2.Records() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != n1 || n == 0 {
		t.Errorf("pass 2 read %d records, pass 1 %d", n, n1)
	}
}
