//go:build linux

package crunch

import (
	"io"
	"math"
	"os"
	"syscall"
)

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
	var data []byte
	if rc.Control(func(fd uintptr) {
		data, err = syscall.Mmap(int(fd), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	}) != nil || err != nil {
		return nil, nothing
	}
	return data, func() { syscall.Munmap(data) }
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
