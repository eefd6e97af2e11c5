package cliutil

import (
	"os"
	"path/filepath"
	"time"

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

// openUnnamed opens a new file in dir that never has a name (open(2)'s
// O_TMPFILE): not even SIGKILL at the moment it is made can leave it
// behind. It returns nil if dir's file system or the kernel cannot make
// such a file (O_TMPFILE needs Linux 3.11 and the file system's support,
// which overlayfs long lacked); the caller then makes a named one and
// removes its name. The *os.File's name says where it is, for messages;
// no file has that name.
func openUnnamed(dir string, perm os.FileMode) *os.File {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)"))
}

// ProcessorTime returns the processor time the process has taken, user
// and system, all its threads (getrusage(2), RUSAGE_SELF), and whether
// the system told it.
func ProcessorTime() (time.Duration, bool) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
