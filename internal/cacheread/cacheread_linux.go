//go:build linux

package cacheread

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setup keeps the file's raw connection, or sets c to read the ordinary
// way where the file has none.
func (c *File) setup() {
	rc, err := c.f.SyscallConn()
	if err != nil {
		c.plain.Store(true)
		return
	}
	c.rc = rc
}

// wordBits is the size of a system call's argument in bits.
const wordBits = 8 * unsafe.Sizeof(uintptr(0))

// cached reads into p, at offset off, the bytes the page cache holds,
// with preadv2(RWF_NOWAIT) as a raw system call. It reports false where
// that call failed, and n 0 where it read nothing: at the file's end, or
// where the page cache holds no byte at off (EAGAIN). A call the system
// refuses (no preadv2, no RWF_NOWAIT for this file) makes c read the
// ordinary way from then on. The raw call is made through the file's
// RawConn, so that a Close on another goroutine cannot close the
// descriptor during it.
func (c *File) cached(p []byte, off int64) (n int, ok bool) {
	var errno syscall.Errno
	err := c.rc.Control(func(fd uintptr) {
		iov := unix.Iovec{Base: unsafe.SliceData(p)}
		iov.SetLen(len(p))
		// The offset goes as two words, low and high, as the kernel's
		// pos_from_hilo takes them (the high one 0 on a 64-bit system).
		r, _, e := unix.RawSyscall6(unix.SYS_PREADV2, fd, uintptr(unsafe.Pointer(&iov)), 1,
			uintptr(off), uintptr(uint64(off)>>(wordBits-1)>>1), unix.RWF_NOWAIT)
		n, errno = int(r), e
	})
	switch {
	case err != nil:
		return 0, false
	case errno == 0:
		return n, true
	case errno == unix.EAGAIN:
		return 0, true
	case errno == unix.EINTR:
		return 0, false
	}
	// ENOSYS (no preadv2), EOPNOTSUPP (no RWF_NOWAIT for this file system),
	// EINVAL (a kernel that knows no RWF_NOWAIT), or any other: the
	// ordinary read says what is wrong, if anything.
	c.plain.Store(true)
	return 0, false
}
