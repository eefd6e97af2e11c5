//go:build linux

package crunch

import (
	"io"
	"math"
	"os"
	"syscall"
	"time"
)

// canMap says that this system maps files (mapFile).
const canMap = true

// mapFile maps src, if it is a regular file that the system maps, and
// returns its bytes and the function that unmaps them; else nil.
func mapFile(src io.ReadSeeker) ([]byte, func()) {
	nothing := func() {}
	f, ok := src.(*os.File)
	if !ok {
		return nil, nothing
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || fi.Size() > math.MaxInt {
		return nil, nothing
	}
	// Control, not Fd: it holds the descriptor against a Close on another
	// goroutine (the CLI's signal handler closes its input).
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nothing
	}
	data := mapRange(rc, 0, int(fi.Size()))
	if data == nil {
		return nil, nothing
	}
	return data, func() { syscall.Munmap(data) }
}

// mapRange maps n bytes of the file of rc from offset off (a multiple of
// the page size), or returns nil.
func mapRange(rc syscall.RawConn, off int64, n int) []byte {
	var data []byte
	var err error
	if rc.Control(func(fd uintptr) {
		data, err = syscall.Mmap(int(fd), off, n, syscall.PROT_READ, syscall.MAP_SHARED)
	}) != nil || err != nil {
		return nil
	}
	return data
}

// mappedPays reports whether reading f, a regular file of size bytes
// (largeFile), mapped in memory pays against reading it through a
// buffer, where the probe found the cores near (near) or far, by reading
// some bytes from the middle of the file both ways, in turns, the page
// cache warmed first: into a buffer (pread), a byte per cache line, and
// through a new mapping of them. It takes under 2 ms (0.1 to 1.8 ms on
// the Zen 4 VM of 2026-12-05).
//
// With the cores far, it reads mapProbeBytes mapped a byte per cache line
// too (mapCheaper). Where page faults cost much, as on the VM of
// 2026-12-02 (docs/measurements.md, "Mapped or read"), a mapped dump's
// first touch of each page costs more than the kernel's copy: the same
// probe in a standalone program, 2 MiB at a time, took 0.7 to 1.3 ms
// mapped and 0.14 to 0.36 ms read, the least of three each.
//
// With them near, it reads the hugeProbeBytes that start at a multiple
// of them in the file's middle, mapped a byte per page: the page faults
// alone (faultsCheaper). Where the kernel places the mapping on a 2 MiB
// boundary too, as it did on the Zen 4 VM of 2026-12-05, a folio of 2 MiB
// in the page cache takes one page fault, and small ones one every 64 KiB
// (docs/measurements.md, "Mapped or at offsets, near and far").
func mappedPays(f *os.File, size int64, near bool) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	n, touch := int64(mapProbeBytes), touchLines
	if near {
		n, touch = hugeProbeBytes, touchPages
	}
	off := size / 2 &^ (n - 1) // at a multiple of n, a power of two
	buf := make([]byte, mapProbeBytes)
	readAll := func() (byte, error) {
		var s byte
		for o := off; o < off+n; o += int64(len(buf)) {
			if _, err := f.ReadAt(buf, o); err != nil {
				return 0, err
			}
			s += touchLines(buf)
		}
		return s, nil
	}
	if _, err := readAll(); err != nil { // the page cache and buf warmed
		return false
	}
	read, mapped := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	var sum byte
	for range mapProbeRounds {
		start := time.Now()
		s, err := readAll()
		if err != nil {
			return false
		}
		sum += s
		read = min(read, time.Since(start))
		start = time.Now()
		m := mapRange(rc, off, int(n))
		if m == nil {
			return false
		}
		sum += touch(m)
		mapped = min(mapped, time.Since(start))
		syscall.Munmap(m)
	}
	probeSink.Store(uint32(sum))
	if near {
		return faultsCheaper(read, mapped)
	}
	return mapCheaper(read, mapped)
}

// pageSize is the size of the pages release gives back.
var pageSize = os.Getpagesize()

// dropPages gives back the pages of b, part of a mapped file, which must
// start at a page boundary; they stay in the page cache.
func dropPages(b []byte) {
	if len(b) > 0 {
		syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
}
