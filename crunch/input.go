package crunch

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/cacheread"
	"github.com/heapcrunch/heapcrunch/internal/cores"
)

// input is the dump crunch reads twice: a file mapped in memory, read in
// place (no copy from the page cache), or else any ReadSeeker, read
// through a buffer; a file read through a buffer may also be read at
// offsets (at), by the goroutines a pass splits its work with.
type input struct {
	src      io.ReadSeeker
	mapped   []byte // the mapped file, or nil
	unmap    func()
	released int64 // the bytes of mapped given back (release)
	// last is the Reader of the pass before, whose buffer the next pass
	// reuses (reader).
	last *hprof.Reader
	// at, when set, reads the file, not mapped, at any offset (readAt);
	// size is the file's size when it was opened.
	at   io.ReaderAt
	size int64
	// bufs are buffers of parts of the file read at offsets that a pass
	// has given back, for the next to reuse (buffer, giveBack): memory
	// the process touches for the first time costs a page fault per 4 KiB.
	bufs   [][]byte
	bufsMu sync.Mutex
	// fromStart: src was at its start when crunch got it, so that the
	// offsets the passes read are its own (openInput).
	fromStart bool
}

// texts returns where the end of pass 1 reads back the texts of the
// STRING records it keeps, at their offsets, or nil where pass 1 must keep
// them as it reads (a source that is not at its start or cannot be read at
// offsets): the mapped file, the file read at offsets, or src itself.
func (in *input) texts() io.ReaderAt {
	switch {
	case in.mapped != nil:
		return bytes.NewReader(in.mapped)
	case in.at != nil:
		return in.at
	}
	if r, ok := in.src.(io.ReaderAt); ok && in.fromStart {
		return r
	}
	return nil
}

// split reports whether other goroutines can read parts of the input
// themselves, at any offset: mapped, or a file read at offsets (at).
func (in *input) split() bool { return in.mapped != nil || in.at != nil }

// whole reports whether the file holds the bytes up to offset end, as far
// as reading it mapped or at offsets knows (false for other inputs).
func (in *input) whole(end int64) bool {
	if in.mapped != nil {
		return end <= int64(len(in.mapped))
	}
	return in.at != nil && end <= in.size
}

// readAt reads the n bytes of the file from offset off into a buffer,
// *buf, reused while large enough and else replaced by a larger one, and
// returns them, or an error if the file no longer holds them. Only a file
// read at offsets (in.at) has them.
func (in *input) readAt(buf *[]byte, off, n int64) ([]byte, error) {
	if n < 0 || n > math.MaxInt {
		return nil, fmt.Errorf("crunch: %d bytes at offset %d", n, off)
	}
	if int64(cap(*buf)) < n {
		in.giveBack(*buf)
		*buf = in.buffer(int(n))
	}
	b := (*buf)[:n]
	if k, err := in.at.ReadAt(b, off); int64(k) < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("crunch: the input file changed while it was read: %d bytes at offset %d: %w", n, off, err)
	}
	return b, nil
}

// minReadBuffer is the least size of a buffer that readAt makes: twice
// a span's (atSpanBytes), so that spans a little larger (a piece ends at
// the first sub-record boundary after its mark) fit the same ones.
// Pass 1's records of a JDK's 1 MB take larger ones, which pass 2 reuses.
const minReadBuffer = 512 << 10

// buffer returns a buffer of n bytes or more (n > 0): one given back, or
// a new one.
func (in *input) buffer(n int) []byte {
	in.bufsMu.Lock()
	defer in.bufsMu.Unlock()
	for i, b := range in.bufs {
		if cap(b) >= n {
			in.bufs = slices.Delete(in.bufs, i, i+1)
			return b
		}
	}
	// A multiple of minReadBuffer: records of about the same size (a
	// JDK's 1 MB segments) fit the same buffer.
	return make([]byte, (n+minReadBuffer-1)/minReadBuffer*minReadBuffer)
}

// giveBack keeps buffer b, if any, for buffer to hand out again.
func (in *input) giveBack(b []byte) {
	if cap(b) > 0 {
		in.bufsMu.Lock()
		in.bufs = append(in.bufs, b)
		in.bufsMu.Unlock()
	}
}

// readWay is how crunch reads its input.
type readWay int

// The ways of reading the input.
const (
	readBuffered readWay = iota // through a buffer
	readMapped                  // mapped in memory, in place
	// readAt: through a buffer on the passes' goroutines, and at
	// offsets (ReadAt) on the goroutines they split their work with,
	// each part read into a buffer of its own: where mapped pages cost
	// much (mappedPays; until the twenty-first session, 2026-12-04,
	// also where the cores were far apart: wayOf), and since the
	// twenty-second (2026-12-05) where the cores are near and the
	// file's pages are not mapped 2 MiB at a time (faultsCheaper). On
	// the VM of 2026-12-02, whose mapped pages cost three times as
	// much to read as a buffer filled from the page cache and whose
	// cores were 440 ns apart, crunch of the 134 MB dump took 0.275 s
	// (median of 10 alternating runs) against 0.356 s on one
	// goroutine, and of the 1.3 GB JDK 17 dump 1.37 s against 2.03 s:
	// docs/measurements.md, "Read at offsets".
	readAt
)

// wayOf says how crunch reads its input src: a large file whose passes
// may split their work with another core (cores.SplitCores: the other
// core answered the probe, near or far) mapped where reading the file
// mapped pays (mapPays: with the cores far, mapped pages cost at most
// half as much again as a buffer's; with them near, their page faults
// at most a quarter of a buffer's copy), else at offsets, also where the
// probe of the cores got no answer (the other core busy a moment, or
// stopped a while: pass 2's goroutine takes over what the other is slow
// to write, splitter.take); other inputs, and a file whose passes run on
// one core, through a buffer.
// HEAPCRUNCH_SPLIT=on maps it without asking mapPays. Tests change it.
//
// Until the twenty-first session (2026-12-04) a file was mapped only
// where the cores were near. On the Zen 4 VM of that day, whose probe
// finds its cores far (about 330 ns) in some minutes and near (about 50
// ns) in others, its mapped pages cheap in both, mapping where the probe
// found them far took 138.2 against 155.2 ms at offsets on the 134 MB
// dump (medians of 91 pairs of runs, faster in 89) and 1,006.7 against
// 1,110.4 ms on big-1300m.hprof (43 pairs, faster in 42):
// docs/measurements.md, "Mapped where the cores are far". Until the
// twenty-second (2026-12-05) a file was mapped where the cores were near
// if its mapped pages cost up to half as much again as a buffer's, as
// where they are far; on that VM, where they cost 1.00 to 1.53 times as
// much, reading at offsets was as fast or faster with the cores near, but
// for a page cache of 2 MiB folios (faultsCheaper). From the twenty-fourth
// session to the fortieth (2026-12-07) an Android dump (JAVA PROFILE
// 1.0.3) was mapped wherever the cores were near, since read at offsets
// pass 1 read its 4 KiB records on its own goroutine; it hands them over
// in batches there too since (pass1.batchAhead), and with the cores near
// the Android-shaped dump of 134 MB took 164.3 ms at offsets against 187.4
// mapped, its page cache in large folios, and 222.4 against 323.3 ms in
// small ones (medians of 21 alternating runs): docs/measurements.md, "Pass
// 1 of an Android dump read at offsets in batches".
var wayOf = func(src io.ReadSeeker) readWay {
	forced := os.Getenv(cores.SplitEnv) == "on"
	f, size := largeFile(src)
	if f == nil && !forced { // no probe of the cores for a file not split
		endLinger()
		return readBuffered
	}
	switch probed := cores.SplitCores(); probed {
	case cores.NoSplit:
		endLinger()
		return readBuffered
	case cores.Unanswered:
		return readAt
	case cores.Near, cores.Far:
		near := probed == cores.Near
		if forced || mapPays(f, size, near) {
			return readMapped
		}
	}
	return readAt
}

// endLinger tells a thread kept running for the probe of the cores
// (cmd/crunch, cores.Linger) that no probe comes: wayOf reads its input
// through a buffer without one. Tests change it.
var endLinger = cores.EndLinger

// mapPays is mappedPays; tests change it.
var mapPays = mappedPays

// minMapBytes is the size under which a dump is read through a buffer
// without a probe: its pass 2 is not split (a dump of 16 MiB holds about
// 400,000 objects, and a split needs 262,144), and the time either way is
// a few milliseconds.
const minMapBytes = 16 << 20

// largeFile returns src and its size if it is a regular file of
// minMapBytes or more (and no more than an int counts), one that crunch
// may map (on a system that maps files) or read at offsets; else nil:
// such a dump is read through a buffer, its pass 2 on two goroutines
// where those pay.
func largeFile(src io.ReadSeeker) (*os.File, int64) {
	if f, size := regularFile(src); f != nil && size >= minMapBytes {
		return f, size
	}
	return nil, 0
}

// regularFile returns src and its size if it is a regular file (of no
// more bytes than an int counts), else nil.
func regularFile(src io.ReadSeeker) (*os.File, int64) {
	f, ok := src.(*os.File)
	if !ok {
		return nil, 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > math.MaxInt {
		return nil, 0
	}
	return f, fi.Size()
}

// mapProbeBytes is how much of the file mappedPays reads each way with
// the cores far, and the size of its buffer (with them near it reads
// hugeProbeBytes through it, a piece at a time), and mapProbeRounds how
// many times: the least time of each counts, as a read now and then
// takes ten times the others (3 ms for 2 MiB where the others took 0.15
// to 0.35 ms; 2026-12-02). 256 KiB since 2026-12-04: with 1 MiB,
// mappedPays took about 6 ms of each run whose cores were near (its
// fresh buffer 0.3 to 4.9 ms, median 4.7, its rounds 1.3 to 1.7 ms; 6
// runs of crunch on the 134 MB dump, the probe's answer set to near),
// with 256 KiB 1.7 ms (0.2 to 1.5 and 0.4 to 0.5 ms), and it answered
// the same: read 8 to 12 µs against 68 to 101 µs mapped, where 1 MiB
// read in 33 to 45 µs against 269 to 392 µs mapped.
const (
	mapProbeBytes  = 256 << 10
	mapProbeRounds = 3
)

// mapCheaper reports whether reading some bytes mapped, in time mapped,
// is cheap enough against reading them through a buffer, in time read,
// for crunch to map its input where the probe found the cores far: at
// most half as long again. Where the mapped dump took 0.42 to 0.45 s with
// one core and the buffer 0.29 to 0.30 s, the same probe (a standalone
// program, 2 MiB at a time) took 3.7 to 6.5 times as long mapped. Where
// it took 1.00 to 1.53 times as long (the Zen 4 VM of 2026-12-05), the
// mapped dump was the faster with the cores far, the page cache in small
// folios or more than half in large ones: 952.0 to 1,017.6 ms against
// 1,094.7 to 1,119.6 ms read at offsets on big-1300m.hprof and a copy of
// it, with 1.83 to 1.95 s of processor time against 2.08 to 2.12 s
// (medians of pairs of runs; docs/measurements.md, "Mapped or at offsets,
// near and far").
func mapCheaper(read, mapped time.Duration) bool { return mapped <= read+read/2 }

// faultsCheaper reports whether touching a byte of each page of some
// bytes mapped, in time touched (their page faults), costs at most a
// quarter of reading them through a buffer, in time read: how crunch
// decides where the probe found the cores near. There, on the Zen 4 VM
// of 2026-12-05, reading at offsets was as fast as mapped or faster, but
// where the file lay in the page cache in folios of 2 MiB, each mapped
// with one page fault: the probe's touch took 0.07 to 0.10 of the read's
// time there, and 0.58 to 0.86 in small folios (a page fault every 64
// KiB; 30 probes each). Read at offsets, a copy of big-1300m.hprof in
// small folios took 827.8 against 903.0 ms mapped, and big-1300m.hprof
// with half of its pages in large folios 807.9 against 820.0 ms; mapped,
// big-1300m.hprof in 2 MiB folios took 773.9 against 789.5 ms, and the
// 134 MB dump 113.8 against 117.6 ms (medians of pairs of runs;
// docs/measurements.md, "Mapped or at offsets, near and far").
func faultsCheaper(read, touched time.Duration) bool { return touched <= read/4 }

// hugeProbeBytes is how much of the file mappedPays maps with the cores
// near: a folio of the largest size the kernel maps with one page fault
// (a PMD on amd64 and arm64 with 4 KiB pages), on such a boundary in the
// file.
const hugeProbeBytes = 2 << 20

// probeSink keeps what mappedPays reads from being optimized away.
var probeSink atomic.Uint32

// touchLines reads a byte of each 64-byte line of b.
func touchLines(b []byte) byte {
	var s byte
	for i := 0; i < len(b); i += 64 {
		s += b[i]
	}
	return s
}

// touchPages reads a byte of each 4 KiB of b.
func touchPages(b []byte) byte {
	var s byte
	for i := 0; i < len(b); i += 4096 {
		s += b[i]
	}
	return s
}

// openInput maps src when it is a regular file read from its start, the
// system can map it and wayOf says so.
func openInput(src io.ReadSeeker) *input {
	in := &input{src: src, unmap: func() {}}
	if pos, err := src.Seek(0, io.SeekCurrent); err == nil && pos == 0 {
		in.fromStart = true
		way := wayOf(src)
		if way == readMapped {
			in.mapped, in.unmap = mapFile(src)
		}
		if way == readAt || way == readMapped && in.mapped == nil { // or a system that maps no files
			if f, size := regularFile(src); f != nil {
				in.at, in.size = f, size
			}
		}
	}
	if f, _ := regularFile(src); f != nil {
		// Its reads, through a buffer or at offsets, made so that the
		// scheduler does not hand the goroutine's processor to another
		// thread where the page cache holds the bytes, and its skips
		// without a system call (cacheread).
		if c, err := cacheread.New(f); err == nil {
			in.src = c
			if in.at != nil {
				in.at = c
			}
		}
	}
	return in
}

// reader returns a Reader of the dump from its start, for pass 1 or 2.
func (in *input) reader(pass int) (*hprof.Reader, error) {
	if in.mapped != nil {
		in.dropRange(0, int64(len(in.mapped))) // what the pass before read
		in.released = 0
		return hprof.NewReaderBytes(in.mapped)
	}
	if pass > 1 {
		if _, err := in.src.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	if r := in.last; r != nil { // the pass before's buffer: no new pages to fault in
		in.last = nil
		if err := r.Reset(in.src); err != nil {
			return nil, err
		}
		return r, nil
	}
	size := 1 << 20
	if in.at != nil {
		size = atBufferBytes
	}
	r, err := hprof.NewReaderSize(in.src, size)
	in.last = r
	return r, err
}

// atBufferBytes is the buffer of the passes' Reader where the dump is read
// at offsets (input.at): there the passes' goroutine reads atReadAhead
// bytes at a time and skips what other goroutines read, and uses little
// more of its buffer than that. Each 4 KiB of a new buffer costs a page
// fault when it is zeroed, used or not: 256 for hprof.NewReader's 1 MiB,
// on pass 1's goroutine at its start, about 2.8 ms on this project's VM
// (11 µs a fault, go run ./internal/cmd/faultcost, 2026-12-04). Elsewhere
// the buffer is 1 MiB, a quarter of the system calls of 256 KiB for a
// dump read through it whole.
const atBufferBytes = 256 << 10

// releaseStep is how far the reading goes on before release gives back
// the pages it has read.
const releaseStep = 8 << 20

// release gives back the pages of the mapped file before offset off, which
// no goroutine reads any more, so that the pages read do not add up in
// the process's memory (they stay in the page cache). Pass 1 calls it
// from its main goroutine, pass 2 from its reader (or, with one core,
// from its only goroutine: pass2.single).
func (in *input) release(off int64) {
	if off-in.released >= releaseStep {
		in.released = in.dropRange(in.released, off)
	}
}

// dropRange gives back the whole pages of the mapped file between offsets
// from and to, which no other goroutine reads, and returns where the next
// range starts: to, down to a page boundary (or from).
func (in *input) dropRange(from, to int64) int64 {
	if in.mapped == nil {
		return to
	}
	page := int64(pageSize)
	start, end := (from+page-1)&^(page-1), to&^(page-1)
	if start < end {
		dropPages(in.mapped[start:end])
	}
	return max(from, end)
}

// catchFault is deferred, after debug.SetPanicOnFault(true), by each
// goroutine that reads the mapped file: a file cut short while crunch
// reads it faults where its pages are gone, and that fault becomes the
// error *err instead of a crash. Other panics go on.
func (in *input) catchFault(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok && len(in.mapped) > 0 {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(in.mapped)))
		if a := f.Addr(); a >= base && a-base < uintptr(len(in.mapped)) {
			*err = fmt.Errorf("crunch: the input file changed while it was read: byte %d of its %d is gone", a-base, len(in.mapped))
			return
		}
	}
	panic(r)
}

// guard makes a fault reading the mapped file, in the calling goroutine,
// a panic that catchFault can turn into an error; the returned function
// restores what was before.
func guard() func() {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

// progress calls Options.Progress with the input offset every 16 MiB.
type progress struct {
	f    func(pass int, done int64)
	pass int
	next int64
}

// at reports offset off, if it is 16 MiB past the last one reported (or
// the first).
func (p *progress) at(off int64) {
	if p.f != nil && off >= p.next {
		p.f(p.pass, off)
		p.next = off + 16<<20
	}
}
