package clitest

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// privateNull makes a node of the null device (1, 3) in dir and checks
// that it can be written (a folder on a nodev mount cannot).
func privateNull(dir string) (string, bool) {
	p := filepath.Join(dir, "null")
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		return "", false
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		os.Remove(p)
		return "", false
	}
	f.Close()
	return p, true
}

// OpenPTY opens a pseudo-terminal and returns its two ends: a command
// given tty as its standard output writes to a terminal (isatty), and
// what it writes can be read from ptm. The test is skipped where no
// pseudo-terminal can be made.
func OpenPTY(t testing.TB) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		ptm.Close()
		t.Skipf("no pseudo-terminal: unlock: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		ptm.Close()
		t.Skipf("no pseudo-terminal: TIOCGPTN: %v", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptm.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close(); tty.Close() })
	return ptm, tty
}

// Pending returns what can be read from ptm without waiting.
func Pending(t testing.TB, ptm *os.File) []byte {
	t.Helper()
	fd := int(ptm.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	defer unix.SetNonblock(fd, false)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// MakeFIFO makes a named pipe.
func MakeFIFO(t testing.TB, path string) {
	t.Helper()
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFIFO reads the FIFO at path in the background, to the end (limit <
// 0) or limit bytes after which it closes its end. The function returned
// waits for the reader and returns what it read; if no writer ever opened
// the FIFO, it opens and closes one so that the reader does not wait
// forever.
func ReadFIFO(path string, limit int) (wait func() []byte) {
	done := make(chan []byte, 1)
	opened := make(chan struct{})
	go func() {
		f, err := os.Open(path)
		close(opened)
		if err != nil {
			done <- nil
			return
		}
		defer f.Close()
		var b []byte
		if limit < 0 {
			b, _ = io.ReadAll(f)
		} else {
			b = make([]byte, limit)
			n, _ := io.ReadFull(f, b)
			b = b[:n]
		}
		done <- b
	}()
	return func() []byte {
		for {
			select {
			case <-opened:
				return <-done
			case <-time.After(100 * time.Millisecond):
				// The command did not open the FIFO: a writer opened and
				// closed here ends the reader's open with end of file.
				// Until the reader's goroutine is in its open there is no
				// reader, and this open fails (ENXIO): try again.
				if w, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					w.Close()
					return <-done
				}
			}
		}
	}
}

// UnnamedFiles reports whether files without a name (open(2)'s O_TMPFILE)
// can be made in dir. It asks the kernel itself, not cliutil's
// openUnnamed: a cliutil that stopped making such files must fail
// TestSpoolUnnamed, not lead it to expect a named file.
func UnnamedFiles(dir string) bool {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
