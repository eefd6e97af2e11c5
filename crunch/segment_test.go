package crunch

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestChunkClockAdvance: at and advance count sub-records as next does,
// from any state, across chunk boundaries.
func TestChunkClockAdvance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var c chunkClock
	for range 2000 {
		if rng.IntN(3) == 0 {
			c.record()
		}
		n := rng.IntN(3 * chunkSubRecords)
		if rng.IntN(4) == 0 {
			n = rng.IntN(3)
		}
		want := c
		var chunks []uint32
		for range n {
			want.next()
			chunks = append(chunks, want.chunk)
		}
		for i, ch := range chunks {
			if got := c.at(i); got != ch {
				t.Fatalf("at(%d) from %+v = %d, next gives %d", i, c, got, ch)
			}
		}
		c.advance(n)
		if c != want {
			t.Fatalf("advance(%d): %+v, next gives %+v", n, c, want)
		}
	}
}

// crunchSegments crunches data with pass 1 reading heap dump records on
// workers goroutines, records under minSplit bytes in batches of as many
// bytes (from a file, mapped: mapped or read at offsets, as testWay
// says; else inline), those over maxSplit bytes inline, pieces
// sub-records at a time.
func crunchSegments(t *testing.T, data []byte, opt Options, workers int, minSplit, maxSplit uint32, pieces int, mapped bool) ([]byte, error) {
	w, mn, b, m, p := segmentWorkers, minSplitRecord, splitBatchBytes, maxSplitRecord, inlineSubRecords
	defer func() {
		segmentWorkers, minSplitRecord, splitBatchBytes, maxSplitRecord, inlineSubRecords = w, mn, b, m, p
	}()
	segmentWorkers, minSplitRecord, splitBatchBytes, maxSplitRecord, inlineSubRecords = func(bool) int { return workers }, minSplit, int64(minSplit), maxSplit, pieces
	var in io.ReadSeeker = bytes.NewReader(data)
	if mapped {
		in = openMapped(t, writeTemp(t, "dump.hprof", data))
	}
	var out bytes.Buffer
	_, err := Crunch(in, &out, opt)
	return out.Bytes(), err
}

// sameAsInline checks that crunching data with opt each of the ways, by
// run, gives the output and error of reading every heap dump record
// inline.
func sameAsInline[W any](t *testing.T, data []byte, opt Options, ways []W, run func(W) ([]byte, error)) {
	t.Helper()
	want, wantErr := crunchSegments(t, data, opt, 1, 0, 0, 1<<16, false)
	for _, way := range ways {
		got, err := run(way)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%+v: error %v, inline %v", way, err, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: %d bytes of BMD differ from the %d of reading inline", way, len(got), len(want))
		}
	}
}

// sameSegmentsWays checks that reading heap dump records on other
// goroutines (all, only the small ones, the others in pieces of a few
// sub-records, or only the larger ones, the smaller in batches of a
// file) gives the output and error of reading them all inline.
func sameSegmentsWays(t *testing.T, data []byte, opt Options) {
	t.Helper()
	type way struct {
		workers            int
		minSplit, maxSplit uint32
		pieces             int
		mapped             bool
	}
	sameAsInline(t, data, opt, []way{{2, 0, 4 << 20, 1 << 16, false}, {3, 0, 30000, 5, false}, {2, 0, 200, 1, false}, {2, 3000, 1 << 20, 7, false},
		{2, 3000, 1 << 20, 7, true}, {3, 64 << 10, 1 << 20, 1 << 16, true}, {2, 1 << 30, 1 << 20, 5, true}},
		func(w way) ([]byte, error) {
			return crunchSegments(t, data, opt, w.workers, w.minSplit, w.maxSplit, w.pieces, w.mapped)
		})
}

// TestSegmentsInOrder: pass 1 gives the same BMD file or error whether it
// reads heap dump records inline or on other goroutines, one by one or in
// batches (the small records of a file, mapped or read at offsets:
// batchRecord, batchAhead), on the fixtures, the corpus dumps and dumps of
// 4 KiB records, whole, cut short, and with a byte changed; with heaps
// dropped (always inline) too.
func TestSegmentsInOrder(t *testing.T) { bothSplitReads(t, testSegmentsInOrder) }

func testSegmentsInOrder(t *testing.T) {
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "sample-align16.hprof.gz", "secrets.hprof.gz")
	// Records of 4 KiB, as Android writes them: batches of many.
	dumps["spans-4k-4"], dumps["spans-4k-8"] = spansDump(4, 4<<10), spansDump(8, 4<<10)
	for name, data := range dumps {
		t.Run(name, func(t *testing.T) {
			sameSegmentsWays(t, data, Options{})
			sameSegmentsWays(t, data[:len(data)*2/3], Options{})
			bad := bytes.Clone(data)
			bad[len(bad)/2] ^= 0x5a
			sameSegmentsWays(t, bad, Options{})
			sameSegmentsWays(t, data, Options{DropHeaps: []string{"zygote"}, KeepStrings: true})
		})
	}
}

// FuzzSegments: whatever the input, reading heap dump records on other
// goroutines gives what reading them inline gives.
func FuzzSegments(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameSegmentsWays(t, data, Options{})
	})
}

// TestMappedInput: a file, which crunch maps and reads in place, gives the
// BMD file of the same dump read through a buffer, with the progress
// reported in both passes; and a file cut short while crunch reads it is
// an error saying so, in either pass, not a crash; with pass 2 on two
// goroutines and on one.
func TestMappedInput(t *testing.T) { bothPass2Ways(t, testMappedInput) }

func testMappedInput(t *testing.T) {
	data, path, want := sampleFile(t)
	got, passes := crunchProgress(t, openMapped(t, path))
	if !bytes.Equal(got, want) || !passes[1] || !passes[2] {
		t.Fatalf("mapped file: %d bytes of BMD, want %d; progress in passes %v", len(got), len(want), passes)
	}
	for _, cutIn := range []int{1, 2} {
		if err := crunchCut(t, data, cutIn); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
			t.Errorf("file cut in pass %d: error %v", cutIn, err)
		}
	}
}

// TestMappedInputReleased: the pages of the mapped input that were read
// are given back as the reading goes on, so that a large dump does not
// add its size to the process's memory (Linux, where /proc says).
func TestMappedInputReleased(t *testing.T) {
	rssFile := func() int64 { return fileRSS(t) }
	const size = 64 << 20
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, bytes.Repeat([]byte{1}, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := openInput(f)
	defer in.unmap()
	if in.mapped == nil {
		t.Skip("files are not mapped on this system")
	}
	before := rssFile()
	sum := 0
	for off := 0; off < size; off += 4096 {
		sum += int(in.mapped[off])
		in.release(int64(off))
	}
	if sum != size/4096 {
		t.Fatalf("read %d", sum)
	}
	if grown := rssFile() - before; grown > 2*releaseStep {
		t.Fatalf("the process's file pages grew by %d MiB reading a %d MiB file", grown>>20, size>>20)
	}
}

// openMapped opens the file at path for the test, or skips the test where
// crunch would not map it.
func openMapped(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if m, unmap := mapFile(f); m == nil {
		t.Skip("files are not mapped on this system")
	} else {
		unmap()
	}
	return f
}

// fileRSS returns the process's resident pages of mapped files, or skips
// the test where /proc does not say (RssFile of /proc/self/status).
func fileRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb << 10
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestProgress: Options.Progress hears of both passes, in order, with
// offsets within the dump that do not go back, whether the dump is a
// mapped file or read through a buffer; with pass 2 on two goroutines and
// on one.
func TestProgress(t *testing.T) { bothPass2Ways(t, testProgress) }

func testProgress(t *testing.T) {
	data := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	path := filepath.Join(t.TempDir(), "sample.hprof")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, src := range map[string]io.ReadSeeker{"buffered": bytes.NewReader(data), "file": f} {
		type call struct {
			pass int
			done int64
		}
		var calls []call
		if _, err := Crunch(src, io.Discard, Options{Progress: func(pass int, done int64) { calls = append(calls, call{pass, done}) }}); err != nil {
			t.Fatal(err)
		}
		passes := map[int]bool{}
		for i, c := range calls {
			passes[c.pass] = true
			if c.done < 0 || c.done > int64(len(data)) {
				t.Errorf("%s: progress %d outside the %d-byte dump", name, c.done, len(data))
			}
			if i > 0 && (c.pass < calls[i-1].pass || c.pass == calls[i-1].pass && c.done < calls[i-1].done) {
				t.Errorf("%s: progress went back: %v after %v", name, c, calls[i-1])
			}
		}
		if !passes[1] || !passes[2] {
			t.Errorf("%s: progress of passes %v, want 1 and 2", name, passes)
		}
	}
}

// segmentState describes what a segment learned, for comparing two
// readings: sub-records counted, IDs kept and dropped (deltas, facts,
// ascending runs), the address layout, the first object array, the class
// dumps and needs, the heaps, and the error.
func segmentState(sg *segment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "subs %d heap %+v err %v\n", sg.subs, sg.heap, sg.err)
	for _, r := range []*idRun{&sg.objs, &sg.drops} {
		f := r.idFacts
		fmt.Fprintf(&b, "ids %x first %d n %d %#x-%#x lo %#x hi %#x or %#x runs %v over %v\n", r.delta, r.firstLen, f.n, f.first, f.last, f.lo, f.hi, f.or, f.runs.spans, f.runs.over)
	}
	fmt.Fprintf(&b, "addrs %+v array1 %+v\nneeds %v heaps %v\n", sg.addrs, sg.array1, sg.needs, sg.heaps)
	for _, c := range sg.classes {
		fmt.Fprintf(&b, "class %#x at %d sub %d\n", c.dump.ID, c.offset, c.sub)
	}
	return b.String()
}

// TestSegmentReadOneByOne: segment.read, which skims the objects in
// batches, learns what subRecord learns from the sub-records read one by
// one with NextSub, on the fixtures and the corpus dumps, whole and cut
// short, with no heap dropped and with the zygote and image heaps dropped
// (the Android dump has them), in one reading of each record and in
// pieces of a few sub-records or bytes; and with an object of ID 0 (null)
// inside a batch, an error after the objects before it.
func TestSegmentReadOneByOne(t *testing.T) {
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "sample-align16.hprof.gz")
	for name, data := range dumps {
		for _, d := range [][]byte{data, data[:len(data)*2/3], withNullObject(t, data, 1000)} {
			for _, drop := range []map[uint32]bool{nil, {'Z': true, 'I': true}} {
				for _, piece := range []struct {
					limit int
					bytes int64
				}{{0, 0}, {7, 0}, {0, 5000}} {
					checkSegmentRead(t, fmt.Sprintf("%s (%d bytes), drop %v, pieces %+v", name, len(d), drop, piece), d, drop, piece.limit, piece.bytes)
				}
			}
		}
	}
}

// checkSegmentRead reads the heap dump records of data with segment.read,
// limit sub-records or about bytes bytes at a time (0: no bound), and
// one by one, and compares what the two segments learned, piece by piece.
func checkSegmentRead(t *testing.T, name string, data []byte, drop map[uint32]bool, limit int, bytes int64) {
	t.Helper()
	skimmed, err := hprof.NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	single, _ := hprof.NewReaderBytes(data)
	var a, b segment
	heap := heapTracker{}
	for rec, err := range skimmed.Records() {
		if err != nil {
			return
		}
		if _, err := single.Next(); err != nil {
			t.Fatalf("%s: the second reader: %v", name, err)
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for more := true; more; {
			a.reset()
			b.reset()
			a.heap, b.heap = heap, heap
			until := int64(0)
			if bytes > 0 {
				until = skimmed.Offset() + bytes
			}
			more = a.read(skimmed, limit, until, drop)
			for n := 0; (limit <= 0 || n < limit) && (until <= 0 || single.Offset() < until); n++ {
				err := single.NextSub(&b.sub)
				if err == io.EOF {
					break
				}
				if err == nil {
					err = b.subRecord(&b.sub, drop)
				}
				if err != nil {
					b.err = err
					break
				}
				b.subs++
			}
			if got, want := segmentState(&a), segmentState(&b); got != want {
				t.Fatalf("%s: segment.read learned\n%s\none by one\n%s", name, got, want)
			}
			if a.err != nil {
				return
			}
			heap = a.heap
		}
	}
}

// withNullObject returns a copy of data whose object sub-record of index
// nth (instances and arrays, from 0) has ID 0.
func withNullObject(t *testing.T, data []byte, nth int) []byte {
	t.Helper()
	r, err := hprof.NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	var s hprof.SubRecord
	objects := 0
	for rec, err := range r.Records() {
		if err != nil {
			break
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for r.NextSub(&s) == nil {
			switch s.Tag {
			case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump:
				if objects == nth {
					b := bytes.Clone(data)
					clear(b[s.Offset+1 : s.Offset+1+int64(r.IDSize())])
					return b
				}
				objects++
			}
		}
	}
	t.Fatalf("%d objects, none of index %d", objects, nth)
	return nil
}

// TestSegmentPoolBuffers: the pool's goroutines read the heap dump records
// split off at offsets (splitAt) each into a buffer of its own, reused from
// record to record, not one that goes with the segment to the other core,
// and give their buffers back as they end, for pass 2: each record reads
// as it does inline, and after them the input holds one buffer for each
// goroutine at most (the records given, all but the one with an array
// read in pieces, fit the smallest buffer: no buffer was outgrown).
func TestSegmentPoolBuffers(t *testing.T) {
	data := spansDump(8, 4<<10)
	in := &input{at: openMapped(t, writeTemp(t, "dump.hprof", data)), size: int64(len(data))}
	r, err := hprof.NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	const workers = 2
	sp := newSegmentPool(workers, in, r.Header())
	var segs []*segment
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag.IsHeapDump() && rec.Length <= minReadBuffer {
			sg := &segment{done: make(chan struct{}), start: rec.Body(), rec: rec, readAt: true}
			segs = append(segs, sg)
			sp.jobs <- sg
		}
	}
	sp.stop()
	if len(segs) < 10 {
		t.Fatalf("%d heap dump records, want 10 or more", len(segs))
	}
	var ir hprof.Reader // of each record inline
	for _, sg := range segs {
		<-sg.done
		var inline segment
		if err := ir.ResetSubRecords(r.Header(), sg.rec, data[sg.rec.Body():sg.rec.End()], sg.rec.Body()); err != nil {
			t.Fatal(err)
		}
		ir.SkipElements = true
		for inline.read(&ir, 1<<14, 0, nil) {
		}
		if sg.err != nil || sg.subs != inline.subs || sg.objs.n != inline.objs.n || !bytes.Equal(sg.objs.delta, inline.objs.delta) {
			t.Fatalf("record at %d: %d sub-records, %d objects, error %v; inline %d, %d, %v", sg.rec.Offset, sg.subs, sg.objs.n, sg.err, inline.subs, inline.objs.n, inline.err)
		}
	}
	if n := len(in.bufs); n == 0 || n > workers {
		t.Errorf("%d buffers given back by %d goroutines, want 1 to %d", n, workers, workers)
	}
}

// passReads counts the bytes read through a source until its first seek
// to the start, where pass 2 begins: those of pass 1's goroutine (n), and
// after it, those of pass 2's (after).
type passReads struct {
	io.ReadSeeker
	n, after int64
	rewind   bool
}

// readsAtOffsets crunches the file at path, read at offsets, and returns
// the bytes that the passes' goroutines read of it, after checking that
// the BMD is want.
func readsAtOffsets(t *testing.T, path string, want []byte) *passReads {
	t.Helper()
	st, err := newState(&Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := openInput(openMapped(t, path))
	if in.at == nil {
		t.Fatal("the file is not read at offsets")
	}
	src := &passReads{ReadSeeker: in.src}
	in.src = src
	var out bytes.Buffer
	if _, err := st.run(in, &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("%d bytes of BMD, %d wanted, not the same", out.Len(), len(want))
	}
	return src
}

func (c *passReads) Read(p []byte) (int, error) {
	n, err := c.ReadSeeker.Read(p)
	if !c.rewind {
		c.n += int64(n)
	} else {
		c.after += int64(n)
	}
	return n, err
}

func (c *passReads) Seek(off int64, whence int) (int64, error) {
	if off == 0 && whence == io.SeekStart {
		c.rewind = true
	}
	return c.ReadSeeker.Seek(off, whence)
}

// TestBatchAheadSkips: read at offsets, pass 1's goroutine hands a dump's
// small heap dump records to the pool in batches that the pool finds
// (batchAhead), and seeks past them: it reads half the file at most
// (here 35 %: its buffer's first fill of 256 KiB, then 4 KiB after each
// seek), where reading the records inline it read all of it, and the BMD
// is that of reading every record inline.
func TestBatchAheadSkips(t *testing.T) {
	defer func(w readWay, sw func(bool) int, b int64) { testWay, segmentWorkers, splitBatchBytes = w, sw, b }(testWay, segmentWorkers, splitBatchBytes)
	testWay, segmentWorkers, splitBatchBytes = readAt, func(bool) int { return 2 }, 64<<10
	data := spansDump(8, 4<<10)
	want, err := crunchSegments(t, data, Options{}, 1, 0, 0, 1<<16, false)
	if err != nil {
		t.Fatal(err)
	}
	src := readsAtOffsets(t, writeTemp(t, "dump.hprof", data), want)
	if !src.rewind || src.n > int64(len(data))/2 {
		t.Errorf("pass 1's goroutine read %d bytes of the %d of the file (rewound: %v), want half at most", src.n, len(data), src.rewind)
	}
}
