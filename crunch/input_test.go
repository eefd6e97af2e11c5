package crunch

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/cacheread"
	"github.com/heapcrunch/heapcrunch/internal/cores"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// The tests of this package map a file given to Crunch wherever the
// system can (testWay), or read it at offsets where a test says so
// (bothSplitReads): they test the ways that split the passes (pass 1's
// batches and pieces, pass 2's spans) whatever the cores of the machine
// running them. TestInputRead tests the others.
func init() { wayOf = func(io.ReadSeeker) readWay { return testWay } }

// testWay is the way the tests read a file given to Crunch (wayOf).
var testWay = readMapped

// bothSplitReads runs f as two subtests: a file given to Crunch mapped,
// and read at offsets (readAt).
func bothSplitReads(t *testing.T, f func(t *testing.T)) {
	defer func(w readWay) { testWay = w }(testWay)
	for _, way := range []readWay{readMapped, readAt} {
		t.Run(map[readWay]string{readMapped: "mapped", readAt: "read at offsets"}[way], func(t *testing.T) {
			testWay = way
			f(t)
		})
	}
}

// defaultWayOf is wayOf as crunch has it (package variables are set
// before init runs).
var defaultWayOf = wayOf

// TestInputRead: where wayOf says so, a file is read through a buffer,
// not mapped (by its passes' goroutines alone, or also at offsets by the
// goroutines they split their work with, readAt), and gives the BMD file
// of the same dump mapped and of its bytes, with progress in both passes,
// with pass 2 on one goroutine and on two; a file cut short while crunch
// reads it is an error in either pass, not a crash.
func TestInputRead(t *testing.T) { bothPass2Ways(t, testInputRead) }

func testInputRead(t *testing.T) {
	data, path, want := sampleFile(t)
	var mapped bytes.Buffer
	if _, err := Crunch(openMapped(t, path), &mapped, Options{}); err != nil {
		t.Fatal(err)
	}
	defer func(f func(io.ReadSeeker) readWay) { wayOf = f }(wayOf)
	for _, way := range []readWay{readBuffered, readAt} {
		wayOf = func(io.ReadSeeker) readWay { return way }
		testInputReadWay(t, data, want, mapped.Bytes(), way)
	}
}

func testInputReadWay(t *testing.T, data, want, mapped []byte, way readWay) {
	f := openMapped(t, writeTemp(t, "sample.hprof", data)) // a file the system would map
	in := openInput(f)
	if in.mapped != nil || (in.at != nil) != (way == readAt) {
		in.unmap()
		t.Fatalf("way %d: openInput mapped the file (%v) or reads it at offsets (%v)", way, in.mapped != nil, in.at != nil)
	}
	// A regular file's reads, through the buffer and at offsets, are
	// cacheread's, so that the scheduler does not hand them over.
	c, ok := in.src.(*cacheread.File)
	if at, isC := in.at.(*cacheread.File); !ok || in.at != nil && (!isC || at != c) {
		t.Fatalf("way %d: openInput reads the file through %T and at offsets through %T, want *cacheread.File for both", way, in.src, in.at)
	}
	if in := openInput(bytes.NewReader(data)); in.at != nil {
		t.Fatal("openInput reads a bytes.Reader at offsets")
	} else if _, ok := in.src.(*bytes.Reader); !ok {
		t.Fatalf("openInput read a bytes.Reader through %T", in.src)
	}
	got, passes := crunchProgress(t, f)
	if !bytes.Equal(got, want) || !bytes.Equal(got, mapped) || !passes[1] || !passes[2] {
		t.Fatalf("way %d, file read through a buffer: %d bytes of BMD, want %d (mapped: %d); progress in passes %v",
			way, len(got), len(want), len(mapped), passes)
	}
	for _, cutIn := range []int{1, 2} {
		err := crunchCut(t, data, cutIn)
		// Cut in pass 1, the dump is short, or read at offsets a record
		// split off was cut; in pass 2, it changed.
		want := map[int]string{1: "truncated", 2: "changed while it was read"}[cutIn]
		if way == readAt {
			want = "changed while it was read"
		}
		if err == nil || !strings.Contains(err.Error(), want) && !(cutIn == 1 && strings.Contains(err.Error(), "truncated")) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("way %d, file cut to 4096 bytes in pass %d: error %v, want one saying %q", way, cutIn, err, want)
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

// TestSegmentWorkersSplit: pass 1 hands heap dump records to other
// goroutines only from a dump mapped or read at offsets, one per core for
// Go; a dump read through a buffer alone is read on pass 1's goroutine.
func TestSegmentWorkersSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if n := segmentWorkers(true); n != 2 {
		t.Errorf("split, GOMAXPROCS=2: %d workers, want 2", n)
	}
	if n := segmentWorkers(false); n != 1 {
		t.Errorf("read through a buffer alone, GOMAXPROCS=2: %d workers, want 1", n)
	}
	runtime.GOMAXPROCS(1)
	if n := segmentWorkers(true); n != 1 {
		t.Errorf("split, GOMAXPROCS=1: %d workers, want 1", n)
	}
}

// TestMapCheaper: mapped is cheap enough, with the cores far, at up to
// half as long again as read through a buffer, not beyond.
func TestMapCheaper(t *testing.T) {
	for _, c := range []struct {
		read, mapped time.Duration
		want         bool
	}{
		{time.Millisecond, 500 * time.Microsecond, true},
		{time.Millisecond, time.Millisecond, true},
		{time.Millisecond, 1500 * time.Microsecond, true},
		{time.Millisecond, 1501 * time.Microsecond, false},
		{600 * time.Microsecond, 2300 * time.Microsecond, false}, // the VM of 2026-12-02
		{12 * time.Microsecond, 16 * time.Microsecond, true},     // the Zen 4 VM of 2026-12-05
	} {
		if got := mapCheaper(c.read, c.mapped); got != c.want {
			t.Errorf("read %v, mapped %v: %v, want %v", c.read, c.mapped, got, c.want)
		}
	}
}

// TestFaultsCheaper: with the cores near, the page faults of mapped bytes
// pay at up to a quarter of the time of reading them through a buffer,
// not beyond: those of 2 MiB folios (the Zen 4 VM of 2026-12-05, 0.07 to
// 0.10 of the read), not those of small ones (0.58 to 0.86).
func TestFaultsCheaper(t *testing.T) {
	for _, c := range []struct {
		read, touched time.Duration
		want          bool
	}{
		{100 * time.Microsecond, 9 * time.Microsecond, true},
		{100 * time.Microsecond, 25 * time.Microsecond, true},
		{100 * time.Microsecond, 26 * time.Microsecond, false},
		{110 * time.Microsecond, 64 * time.Microsecond, false},
	} {
		if got := faultsCheaper(c.read, c.touched); got != c.want {
			t.Errorf("read %v, touched %v: %v, want %v", c.read, c.touched, got, c.want)
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
	for _, near := range []bool{true, false} {
		pays := mappedPays(f, got, near)
		if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
			t.Errorf("after the probe the file is at %d (%v), want 0", pos, err)
		}
		t.Logf("mapping pays on this machine, the cores near %v: %v", near, pays)
	}
}

// TestWayOf: crunch's choice of reading. A source that is not a file, or
// a file under minMapBytes, is read through a buffer without a probe of
// the cores, and a larger one where there is one core for Go; else the
// cores are probed: with no answer in time (the other core busy, or
// stopped a while) at offsets; with an answer, near or far,
// mapped where mapped pages are cheap (mapPays, asked only then, and told
// whether the cores are near) and at offsets where they are not
// (mappedPays says so on a system that maps no files, and openInput reads
// at offsets a file it fails to map), an Android dump as any other.
// HEAPCRUNCH_SPLIT=on maps it whatever its size or the probe, and "off"
// reads it through a buffer. Read through a buffer, there is no probe to
// linger for (endLinger).
func TestWayOf(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(p func() (time.Duration, error)) { cores.Probe = p }(cores.Probe)
	defer func(m func(*os.File, int64, bool) bool) { mapPays = m }(mapPays)
	defer func(e func()) { endLinger = e }(endLinger)
	ended := false
	endLinger = func() { ended = true }
	probed, asked, askedNear := false, false, false
	near := func() (time.Duration, error) { probed = true; return 60 * time.Nanosecond, nil }
	far := func() (time.Duration, error) { probed = true; return 430 * time.Nanosecond, nil }
	busy := func() (time.Duration, error) { probed = true; return 0, cores.ErrSlow }
	cheap := func(_ *os.File, _ int64, n bool) bool { asked, askedNear = true, n; return true }
	dear := func(_ *os.File, _ int64, n bool) bool { asked, askedNear = true, n; return false }
	small, large := writeTemp(t, "small", make([]byte, 1<<20)), writeTemp(t, "large", make([]byte, minMapBytes))
	android := writeTemp(t, "android", append([]byte(hprof.Version103+"\x00"), make([]byte, minMapBytes)...))
	open := func(p string) io.ReadSeeker { return openMapped(t, p) }
	for _, c := range []struct {
		name   string
		src    func() io.ReadSeeker
		env    string
		procs  int
		probe  func() (time.Duration, error)
		pays   func(*os.File, int64, bool) bool
		want   readWay
		probes bool
		asks   bool
		// askNear: mapPays is told that the cores are near.
		askNear bool
	}{
		{"bytes", func() io.ReadSeeker { return bytes.NewReader(make([]byte, minMapBytes)) }, "", 2, near, cheap, readBuffered, false, false, false},
		{"small file", func() io.ReadSeeker { return open(small) }, "", 2, near, cheap, readBuffered, false, false, false},
		{"large file, far cores, cheap pages", func() io.ReadSeeker { return open(large) }, "", 2, far, cheap, readMapped, true, true, false},
		{"large file, far cores, dear pages", func() io.ReadSeeker { return open(large) }, "", 2, far, dear, readAt, true, true, false},
		{"large file, near cores, cheap pages", func() io.ReadSeeker { return open(large) }, "", 2, near, cheap, readMapped, true, true, true},
		{"large file, near cores, dear pages", func() io.ReadSeeker { return open(large) }, "", 2, near, dear, readAt, true, true, true},
		{"large Android dump, near cores, dear pages", func() io.ReadSeeker { return open(android) }, "", 2, near, dear, readAt, true, true, true},
		{"large Android dump, near cores, cheap pages", func() io.ReadSeeker { return open(android) }, "", 2, near, cheap, readMapped, true, true, true},
		{"large Android dump, far cores, dear pages", func() io.ReadSeeker { return open(android) }, "", 2, far, dear, readAt, true, true, false},
		{"large file, busy core", func() io.ReadSeeker { return open(large) }, "", 2, busy, cheap, readAt, true, false, false},
		{"large file, one core", func() io.ReadSeeker { return open(large) }, "", 1, near, cheap, readBuffered, false, false, false},
		{"small file, split on", func() io.ReadSeeker { return open(small) }, "on", 2, far, dear, readMapped, false, false, false},
		{"large file, split off", func() io.ReadSeeker { return open(large) }, "off", 2, near, cheap, readBuffered, false, false, false},
	} {
		t.Setenv(cores.SplitEnv, c.env)
		runtime.GOMAXPROCS(c.procs)
		cores.Probe, mapPays, probed, asked, askedNear, ended = c.probe, c.pays, false, false, false, false
		got := defaultWayOf(c.src())
		if got != c.want || probed != c.probes || asked != c.asks {
			t.Errorf("%s: way %d, cores probed %v, mapping asked %v; want %d, %v, %v", c.name, got, probed, asked, c.want, c.probes, c.asks)
		}
		if want := c.want == readBuffered; ended != want {
			t.Errorf("%s: the lingering for the probe ended %v, want %v", c.name, ended, want)
		}
		if asked && askedNear != c.askNear {
			t.Errorf("%s: mapping asked with the cores near %v, want %v", c.name, askedNear, c.askNear)
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

// TestReadAtBuffers: input.readAt reads the bytes at an offset of a file
// into a buffer kept while it is large enough; a new buffer is a multiple
// of minReadBuffer, and one given back (giveBack) is handed out again
// before a new one is made; bytes the file no longer holds are an error
// saying it changed.
func TestReadAtBuffers(t *testing.T) {
	data := make([]byte, 3*minReadBuffer)
	for i := range data {
		data[i] = byte(i * 13)
	}
	f := openMapped(t, writeTemp(t, "data", data))
	in := &input{at: f, size: int64(len(data))}
	var buf []byte
	got, err := in.readAt(&buf, 100, 1000)
	if err != nil || !bytes.Equal(got, data[100:1100]) || cap(buf) != minReadBuffer {
		t.Fatalf("1,000 bytes at 100: %d bytes, %v, a buffer of %d; want them, a buffer of %d", len(got), err, cap(buf), minReadBuffer)
	}
	first := &buf[0]
	if got, err = in.readAt(&buf, 5, minReadBuffer); err != nil || !bytes.Equal(got, data[5:5+minReadBuffer]) || &buf[0] != first {
		t.Fatalf("%d bytes at 5: %v, the buffer kept %v", minReadBuffer, err, &buf[0] == first)
	}
	if got, err = in.readAt(&buf, 7, minReadBuffer+1); err != nil || !bytes.Equal(got, data[7:8+minReadBuffer]) || cap(buf) != 2*minReadBuffer {
		t.Fatalf("%d bytes at 7: %v, a buffer of %d, want %d", minReadBuffer+1, err, cap(buf), 2*minReadBuffer)
	}
	// The smaller buffer went back to the input: the next one needed is it.
	var other []byte
	if _, err := in.readAt(&other, 0, 10); err != nil || &other[0] != first {
		t.Errorf("a buffer of 10 bytes after one of %d was given back: %v, the same one %v", minReadBuffer, err, err == nil && &other[0] == first)
	}
	in.giveBack(buf)
	if b := in.buffer(minReadBuffer + 1); &b[0] != &buf[0] {
		t.Error("the buffer given back is not handed out again")
	}
	if _, err := in.readAt(&buf, int64(len(data))-10, 20); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("20 bytes 10 before the end: error %v, want one saying the file changed", err)
	}
}
