package cliutil

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing the bytes [off,
// off+n) of f to its disk, and returns at once: Commit's fsync then
// waits only for what was written last (sync_file_range(2),
// SYNC_FILE_RANGE_WRITE). Through SyscallConn, so that a concurrent
// Close (the signal handler's Abort) cannot close the descriptor during
// the call. Errors are left to fsync.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}

// appendMode reports whether f was opened to append (O_APPEND), where its
// offset says nothing of where the next write goes.
func appendMode(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	flags := 0
	rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	return err == nil && flags&unix.O_APPEND != 0
}
