// Package cacheread reads a regular file without handing the processor
// back to Go's scheduler where the page cache holds the bytes asked for,
// and at offsets of its own, so that seeking costs no system call.
//
// A read system call made the usual way (os.File.Read, ReadAt) tells the
// scheduler that the goroutine may block: if the call takes longer than a
// tick of the runtime's monitor (sysmon, 20 µs and more), and every other
// processor (P) is busy, the monitor hands the goroutine's P to another
// thread, which it wakes to look for work, and the goroutine, once the
// call returns, has to get a P back. A read of 256 KiB from the page cache
// takes about that long, so a program that reads a file at that size on
// every core, as crunch does, wakes and parks threads hundreds of times a
// run: on the 134 MB dump of the README, 536 calls of nanosleep, 147 of
// futex and 1,015 context switches a run, against 181, 84 and 309 with
// the reads made here (docs/measurements.md, "Reads the scheduler does
// not hand over, and where a run's page faults lie").
//
// On Linux, File first asks for the bytes with preadv2(RWF_NOWAIT), a
// call that returns at once with what the page cache holds and never
// waits for the disk, made as a raw system call (the goroutine keeps its
// P, as for any other short work); what it does not return comes from an
// ordinary read, which may block and lets the scheduler know. A kernel or
// file system without RWF_NOWAIT (Linux before 4.14, some FUSE and
// network file systems) answers the first call with an error, and File
// then reads the ordinary way only, as it does on other systems.
//
// File reads at offsets whatever the call: Read at an offset of the
// File's own, which Seek sets with no system call (but from the file's
// end, whose size it asks). A reader that skips by seeking, as crunch's
// does past what other goroutines read, then skips for nothing: 2,931
// lseek calls a run on the 134 MB dump before, of 1.3 µs each on this
// project's VM.
package cacheread

import (
	"errors"
	"io"
	"math"
	"os"
	"sync/atomic"
	"syscall"
)

// File reads a regular file, its bytes in the page cache with a raw
// system call that cannot block, the rest the ordinary way (see the
// package comment), at offsets: ReadAt's, or the File's own offset, which
// Read moves and Seek sets, so that a skip costs no system call. The
// File's offset starts where the descriptor's was when New made it, and
// the descriptor's offset is never moved: while a File reads f, nothing
// else may use f's offset. ReadAt may be called from several goroutines
// at once, Read and Seek from one at a time.
type File struct {
	f  *os.File
	rc syscall.RawConn // the raw calls' way to f's descriptor
	// plain: reads are made the ordinary way only (the system has no
	// RWF_NOWAIT for the file, or no raw read was possible).
	plain atomic.Bool
	off   int64 // the offset of the next Read
}

// New returns a File that reads f, which must be a regular file opened for
// reading, from the offset f is at; the File does not close f.
func New(f *os.File) (*File, error) {
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	c := &File{f: f, off: off}
	c.setup()
	return c, nil
}

// Read reads up to len(p) bytes at the File's offset and moves it past
// them: the bytes the page cache holds there without waiting, or if it
// holds none, what an ordinary read returns.
func (c *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := c.read(p, c.off)
	c.off += int64(n)
	return n, err
}

// read reads up to len(p) bytes at offset off, as Read does.
func (c *File) read(p []byte, off int64) (int, error) {
	if !c.plain.Load() {
		if n, ok := c.cached(p, off); ok && n > 0 {
			return n, nil
		}
	}
	n, err := c.f.ReadAt(p, off)
	if n > 0 && err == io.EOF {
		err = nil // the next Read says so
	}
	return n, err
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

// Seek sets the File's offset, as os.File.Seek sets a file's, and returns
// it: from the end, it asks the file's size (a system call); else none.
func (c *File) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = c.off
	case io.SeekEnd:
		fi, err := c.f.Stat()
		if err != nil {
			return 0, err
		}
		base = fi.Size()
	default:
		return 0, &os.PathError{Op: "seek", Path: c.f.Name(), Err: errors.New("invalid whence")}
	}
	if offset > 0 && base > math.MaxInt64-offset || base+offset < 0 {
		return 0, &os.PathError{Op: "seek", Path: c.f.Name(), Err: errors.New("invalid offset")}
	}
	c.off = base + offset
	return c.off, nil
}

var _ interface {
	io.ReadSeeker
	io.ReaderAt
} = (*File)(nil)
