// Package cacheread reads a regular file without handing the processor
// back to Go's scheduler where the page cache holds the bytes asked for.
//
// A read system call made the usual way (os.File.Read, ReadAt) tells the
// scheduler that the goroutine may block: if the call takes longer than a
// tick of the runtime's monitor (sysmon, 20 µs and more), and every other
// processor (P) is busy, the monitor hands the goroutine's P to another
// thread, which it wakes to look for work, and the goroutine, once the
// call returns, has to get a P back. A read of 256 KiB from the page cache
// takes about that long, so a program that reads a file at that size on
// every core, as crunch does, wakes and parks threads hundreds of times a
// run (on the 134 MB dump of the README: 549 calls of nanosleep, 190 of
// futex and 1,068 context switches a run, against 180, 88 and 300 with
// the reads made here; docs/measurements.md).
//
// On Linux, File first asks for the bytes with preadv2(RWF_NOWAIT), a
// call that returns at once with what the page cache holds and never
// waits for the disk, made as a raw system call (the goroutine keeps its
// P, as for any other short work); what it does not return comes from an
// ordinary read, which may block and lets the scheduler know. A kernel or
// file system without RWF_NOWAIT (Linux before 4.14, some FUSE and
// network file systems) answers the first call with an error, and File
// then reads the ordinary way only. Elsewhere File is its os.File.
package cacheread

import (
	"io"
	"os"
	"sync/atomic"
	"syscall"
)

// File reads a regular file, its bytes in the page cache with a raw
// system call that cannot block, the rest the ordinary way (see the
// package comment). Read and Seek move the file's offset as os.File's do;
// ReadAt does not, and may be called from several goroutines at once.
type File struct {
	f  *os.File
	rc syscall.RawConn // the raw calls' way to f's descriptor
	// plain: reads are made the ordinary way only (the system has no
	// RWF_NOWAIT for the file, or no raw read was possible).
	plain atomic.Bool
}

// New returns a File that reads f, which must be a regular file opened for
// reading, and which the File does not close.
func New(f *os.File) *File {
	c := &File{f: f}
	c.init()
	return c
}

// Read reads up to len(p) bytes at the file's offset, as os.File.Read
// does: the bytes the page cache holds without waiting, or if it holds
// none there, what an ordinary read returns.
func (c *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !c.plain.Load() {
		if n, ok := c.cached(p, -1); ok && n > 0 {
			return n, nil
		}
	}
	return c.f.Read(p)
}

// ReadAt reads len(p) bytes at offset off, as os.File.ReadAt does: first
// what the page cache holds without waiting, then the rest, if any, with
// an ordinary read.
func (c *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return c.f.ReadAt(p, off) // its error
	}
	done := 0
	if !c.plain.Load() {
		for done < len(p) {
			n, ok := c.cached(p[done:], off+int64(done))
			if !ok || n == 0 {
				break
			}
			done += n
		}
	}
	if done == len(p) {
		return done, nil
	}
	n, err := c.f.ReadAt(p[done:], off+int64(done))
	return done + n, err
}

// Seek sets the offset of the next Read, as os.File.Seek does.
func (c *File) Seek(offset int64, whence int) (int64, error) {
	return c.f.Seek(offset, whence)
}

// File returns the os.File that c reads.
func (c *File) File() *os.File { return c.f }

var _ interface {
	io.ReadSeeker
	io.ReaderAt
} = (*File)(nil)
