package cliutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"golang.org/x/term"
)

// Output is where a command writes its result. What it is depends on the
// destination:
//
//   - "-" (or /dev/stdout, see IsStdout): standard output, written as it
//     goes (refused when it is a terminal);
//   - a new or (with force) existing regular file: a temporary file in the
//     destination's folder, renamed over the destination by Commit and
//     removed by Abort or by a termination signal. A symbolic link is
//     followed: the file it points to is replaced, the link stays;
//   - an existing character device or FIFO (/dev/null, a named pipe):
//     opened and written in place, without force, since nothing is
//     overwritten; a block device too, but only with force.
//
// Output counts the bytes written and keeps the first write error, so that
// a failure says "writing X: ..." rather than blaming the input.
type Output struct {
	f       *os.File
	dest    string // as given
	path    string // the file written: dest with symbolic links followed
	tmp     string // the temporary file, for a regular file
	written atomic.Int64
	flushed int64       // bytes whose writing to disk was started (Write's)
	began   atomic.Bool // a write was started (it may still be blocked)
	// syncing is set while a sync ahead (syncAhead) runs, synced is
	// done when none runs, and syncErr is the first error of one;
	// noSyncAhead is set while writeback steps start none (SyncAhead).
	syncing     atomic.Bool
	noSyncAhead atomic.Bool
	synced      sync.WaitGroup
	syncErr     atomic.Pointer[error]
	mu          sync.Mutex
	werr        error
	state       outState
	stop        func()
	// cut is, for standard output that is a regular file written at its
	// end (a shell's > or >> redirection), its size before the first
	// write: Abort cuts it back to that size, so that a failed run leaves
	// no partial output there either; -1 for any other output.
	cut int64
}

type outState int32

const (
	outOpen outState = iota
	outCommitted
	outAborted
)

// IsStdout reports whether dest names standard output: "-", or one of the
// names the system gives it (/dev/stdout, /dev/fd/1, /proc/self/fd/1),
// which is written as it is, not replaced: a shell's "> file" redirection
// keeps its file.
func IsStdout(dest string) bool {
	switch dest {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// IsTerminal reports whether f is a terminal (isatty), not merely a
// character device such as /dev/null.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// outputTarget is what a destination names, symbolic links followed.
type outputTarget struct {
	info  fs.FileInfo // of the file the destination leads to; nil if none
	path  string      // where a regular file is created or replaced
	dir   string      // its folder, where the temporary file goes
	link  bool        // dest is a symbolic link
	inode bool        // written in place (device, FIFO)
}

// resolveOutput finds what dest names. The kernel's view (os.Stat) decides
// what exists and of which kind, so that magic links such as /dev/stdout
// lead where the kernel says; the path of a regular file to create or
// replace follows the symbolic links one by one.
func resolveOutput(dest string) (outputTarget, error) {
	var t outputTarget
	base := filepath.Base(dest)
	if dest == "" {
		return t, Usagef("output name is empty; give a file name")
	}
	if strings.HasSuffix(dest, "/") || base == "." || base == ".." {
		return t, Usagef("output %s names a directory; give a file name", dest)
	}
	if lfi, err := os.Lstat(dest); err == nil && lfi.Mode()&fs.ModeSymlink != 0 {
		t.link = true
	}
	fi, err := os.Stat(dest)
	switch {
	case err == nil:
		t.info = fi
		if !fi.Mode().IsRegular() {
			t.inode = true
			return t, nil
		}
		p, err := filepath.EvalSymlinks(dest)
		if err != nil {
			return t, fmt.Errorf("output %s: %w", dest, unwrapPath(err))
		}
		t.path, t.dir = p, filepath.Dir(p)
		return t, nil
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, syscall.ENOTDIR):
		return t, fmt.Errorf("cannot create %s: %s is not a folder", dest, firstNonDir(dest))
	default:
		return t, fmt.Errorf("output %s: %w", dest, unwrapPath(err))
	}
	// Nothing there: a new file, at the end of a dangling link if dest is
	// one.
	p := dest
	if t.link {
		if p, err = danglingTarget(dest); err != nil {
			return t, err
		}
	}
	dir := filepath.Dir(p)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		if t.link {
			return t, fmt.Errorf("cannot create %s (where the symbolic link %s points): folder %s does not exist", p, dest, dir)
		}
		return t, fmt.Errorf("cannot create %s: folder %s does not exist", dest, dir)
	case err != nil:
		return t, fmt.Errorf("cannot create %s: %w", dest, unwrapPath(err))
	case !st.IsDir():
		return t, fmt.Errorf("cannot create %s: %s is not a folder", dest, dir)
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	t.path, t.dir = filepath.Join(dir, filepath.Base(p)), dir
	return t, nil
}

// danglingTarget returns the path where the dangling symbolic link dest
// ends, through any links it points to.
func danglingTarget(dest string) (string, error) {
	p := dest
	for range 40 {
		lfi, err := os.Lstat(p)
		if err != nil || lfi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		l, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("output %s: %w", dest, unwrapPath(err))
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(p), l)
		}
		p = l
	}
	return "", fmt.Errorf("output %s: too many levels of symbolic links", dest)
}

// firstNonDir returns the first ancestor of path that exists and is not a
// folder, for "x is not a folder" messages.
func firstNonDir(path string) string {
	parts := strings.Split(filepath.Clean(path), string(filepath.Separator))
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], string(filepath.Separator))
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return filepath.Dir(path)
}

// unwrapPath drops the *fs.PathError around an error whose message already
// names the file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckOutput reports, before any work is done, what CreateOutput would
// refuse: a terminal as standard output, writing over one of inputs (by
// name, through links, or as standard output redirected to one; "-" is
// standard input, redirected from a file), even with force; onto a folder
// or a socket, or over an existing regular file (or block device) without
// force.
func CheckOutput(dest string, force bool, inputs ...string) error {
	_, err := checkOutput(dest, force, inputs)
	return err
}

func checkOutput(dest string, force bool, inputs []string) (outputTarget, error) {
	if IsStdout(dest) {
		if IsTerminal(os.Stdout) {
			return outputTarget{}, Usagef("standard output is a terminal; binary output is not written to a terminal: give an output file or redirect standard output")
		}
		// A shell's "> in.hprof" or ">> in.hprof" makes standard output
		// an input file.
		if fi, err := os.Stdout.Stat(); err == nil && fi.Mode().IsRegular() {
			if in, ok := sameInput(fi, inputs); ok {
				return outputTarget{}, Usagef("standard output is the input file %s; refusing to write over it", inputName(in))
			}
		}
		return outputTarget{}, nil
	}
	t, err := resolveOutput(dest)
	if err != nil || t.info == nil {
		return t, err
	}
	// A file that would be overwritten: a character device or a FIFO is
	// written in place, overwriting nothing (--mapping /dev/null -o
	// /dev/null), and a folder is refused below as one.
	m := t.info.Mode()
	overwritten := m.IsRegular() || m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0
	if in, ok := sameInput(t.info, inputs); ok && overwritten {
		switch {
		case t.link:
			return t, Usagef("output %s is the input file %s (through a symbolic link); refusing to overwrite it", dest, inputName(in))
		case in == dest:
			return t, Usagef("output %s is the input file; refusing to overwrite it", dest)
		}
		return t, Usagef("output %s is the input file %s; refusing to overwrite it", dest, inputName(in))
	}
	switch {
	case m.IsDir():
		return t, Usagef("output %s is a directory; give a file name", dest)
	case m&fs.ModeSocket != 0:
		return t, Usagef("output %s is a socket; write to a file, a FIFO or a device", dest)
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0:
		if !force {
			return t, Usagef("output %s is a block device; use --force to write over its content", dest)
		}
	case m&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		// Written in place: nothing is overwritten.
	case !m.IsRegular():
		return t, Usagef("output %s is not a file, a FIFO or a device (%v)", dest, m.Type())
	case !force && t.link:
		return t, Usagef("output %s exists (a symbolic link to %s); use --force to replace %s", dest, t.path, t.path)
	case !force:
		return t, Usagef("output %s exists; use --force to overwrite it", dest)
	}
	return t, nil
}

// sameInput returns the one of inputs that is the file fi, and whether
// there is one: "-" is standard input, when it is a regular file (a
// shell's "< in.hprof").
func sameInput(fi fs.FileInfo, inputs []string) (string, bool) {
	for _, in := range inputs {
		var ist fs.FileInfo
		var err error
		if in == "-" {
			if ist, err = os.Stdin.Stat(); err == nil && !ist.Mode().IsRegular() {
				continue
			}
		} else {
			ist, err = os.Stat(in)
		}
		if err == nil && os.SameFile(fi, ist) {
			return in, true
		}
	}
	return "", false
}

// inputName is how messages call input in: "standard input" or its name.
func inputName(in string) string {
	if in == "-" {
		return "standard input"
	}
	return in
}

// CreateOutput opens dest for writing, as Output describes. It refuses what
// CheckOutput refuses.
func CreateOutput(dest string, force bool, inputs ...string) (*Output, error) {
	t, err := checkOutput(dest, force, inputs)
	if err != nil {
		return nil, err
	}
	o := &Output{dest: dest, cut: -1}
	if IsStdout(dest) {
		o.dest = "-"
		o.f = os.Stdout
		var cleanup func()
		if o.cut = stdoutStart(os.Stdout); o.cut >= 0 {
			cleanup = o.Abort // a signal cuts the file back too
		}
		stop := watchOutput(o, cleanup)
		o.mu.Lock() // a signal's handler may be calling Abort already
		o.stop = stop
		o.mu.Unlock()
		return o, nil
	}
	if t.inode {
		// A FIFO blocks here until a reader opens it; a signal meanwhile
		// ends the process as usual.
		f, err := os.OpenFile(dest, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("cannot open output %s: %w", dest, unwrapPath(err))
		}
		o.f, o.path = f, dest
		o.stop = watchOutput(o, nil)
		return o, nil
	}
	o.path = t.path
	// A new file gets what the umask leaves of 0666, as a shell's
	// redirection gives; a replaced one keeps its permissions.
	perm := os.FileMode(0o666)
	if t.info != nil {
		perm = 0o600
	}
	f, stop, err := createTemp(t.dir, tempPrefix(t.path), perm, false, o, func(f *os.File) func() {
		o.f, o.tmp = f, f.Name()
		return o.Abort
	})
	if err != nil {
		return nil, createError(dest, t.dir, err)
	}
	o.mu.Lock() // a signal's handler may be calling Abort already
	o.stop = stop
	o.mu.Unlock()
	if t.info != nil {
		f.Chmod(t.info.Mode().Perm())
	}
	return o, nil
}

// stdoutStart returns where the bytes written to f, standard output, go
// if it is a regular file written at its end: its size, when it was
// opened to append or its offset is its end; else -1 (not a file, or one
// written over from within).
func stdoutStart(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	if appendMode(f) {
		return fi.Size()
	}
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != fi.Size() {
		return -1
	}
	return fi.Size()
}

// tempPrefix returns the start of the name of the temporary file that
// becomes path: ".NAME.tmp-", before a number of up to 10 digits, with NAME
// cut to 200 bytes (on a UTF-8 boundary), so that the name stays within
// the 255 bytes that file systems allow when path's own name does.
func tempPrefix(path string) string {
	name := filepath.Base(path)
	if len(name) > 200 {
		n := 200
		for n > 0 && !utf8.RuneStart(name[n]) {
			n--
		}
		name = name[:n]
	}
	return "." + name + ".tmp-"
}

// createError explains why no file could be made in dir.
func createError(dest, dir string, err error) error {
	e := unwrapPath(err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			// /proc, /sys: the folder exists but takes no new files.
			return fmt.Errorf("cannot create %s: folder %s does not accept new files (%v)", dest, dir, e)
		}
		return fmt.Errorf("cannot create %s: folder %s does not exist", dest, dir)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot create %s: no permission to create files in folder %s (%v)", dest, dir, e)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("cannot create %s: folder %s is on a read-only file system", dest, dir)
	}
	return fmt.Errorf("cannot create %s in folder %s: %v", dest, dir, e)
}

// Name is how messages call the output: "standard output" or its path.
func (o *Output) Name() string {
	if o.dest == "-" {
		return "standard output"
	}
	return o.dest
}

// Written returns the number of bytes written so far.
func (o *Output) Written() int64 { return o.written.Load() }

// Write writes to the output, counting the bytes and keeping the first
// error (see Err).
func (o *Output) Write(p []byte) (int, error) {
	if len(p) > 0 {
		o.began.Store(true)
	}
	var n int
	var err error
	if o.cut >= 0 {
		// Abort, which cuts the file back, waits for the write, and no
		// write comes after it.
		o.mu.Lock()
		if o.state == outOpen {
			n, err = o.f.Write(p)
		} else {
			err = errors.New("output given up")
		}
		o.mu.Unlock()
	} else {
		n, err = o.f.Write(p)
	}
	w := o.written.Add(int64(n))
	if err != nil {
		err = o.fail(err)
	}
	if o.tmp != "" && w-o.flushed >= writebackStep {
		// A temporary file, which Commit syncs before renaming it: its
		// disk writes start now, beside the conversion, rather than
		// all in Commit's fsync (40 ms of decrunch's 250 for a 134 MB
		// HPROF).
		startWriteback(o.f, o.flushed, w-o.flushed)
		o.flushed = w
		if !o.noSyncAhead.Load() {
			o.syncAhead()
		}
	}
	return n, err
}

// writebackStep is how many bytes written start their writing to disk.
const writebackStep = 4 << 20

// syncAhead syncs the temporary file on a goroutine of its own, unless a
// sync ahead runs already, so that Commit's fsync finds most of the file,
// and the file's creation, on disk: there the fsync of a new ext4 file
// waits for a journal commit, 15 to 18 ms for crunch's 20 MB BMD on the
// VM of 2026-12-02 whatever was written before, and 5.5 to 6.2 ms after a
// sync ahead (strace; 2.3 to 2.8 ms in a standalone program). Commit
// waits for the sync ahead and fails on its error: the system reports a
// write error to one fsync only.
func (o *Output) syncAhead() {
	if !o.syncing.CompareAndSwap(false, true) {
		return
	}
	o.synced.Add(1)
	go func() {
		defer o.synced.Done()
		if err := syncFile(o.f); err != nil {
			o.syncErr.CompareAndSwap(nil, &err)
		}
		o.syncing.Store(false)
	}()
}

// SyncAhead sets whether the writeback steps from now on also sync the
// file ahead (syncAhead), as they do from the start. A goroutine blocked
// in fsync holds one of Go's processors until the runtime's monitor takes
// it back, and a conversion that keeps two goroutines busy (crunch's
// second pass) waits for it: crunch of the 134 MB dump took 157 ms in its
// second pass with a sync ahead every 4 MiB against 145.5 without
// (medians of 12 alternating runs) and gained nothing in all, where
// decrunch, which mostly runs one goroutine, gained 44 to 63 ms.
func (o *Output) SyncAhead(on bool) { o.noSyncAhead.Store(!on) }

// syncFile syncs f to its disk (fsync); tests replace it.
var syncFile = (*os.File).Sync

// fail records and returns the error for a failed write.
func (o *Output) fail(err error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.werr == nil {
		if errors.Is(err, syscall.EPIPE) {
			o.werr = &BrokenPipeError{Output: o.Name(), Written: o.Written()}
		} else {
			o.werr = fmt.Errorf("writing %s: %w", o.Name(), unwrapPath(err))
		}
	}
	return o.werr
}

// Err returns the first error met writing the output, or nil. A command
// whose conversion failed returns it in place of the conversion's error,
// which is then only a consequence.
func (o *Output) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.werr
}

// BrokenPipeError is a write to a pipe or FIFO whose reader has gone.
type BrokenPipeError struct {
	Output  string
	Written int64
}

// Error returns the message of a BrokenPipeError.
func (e *BrokenPipeError) Error() string {
	return fmt.Sprintf("%s was closed by its reader before the end (broken pipe): the output is incomplete (%s written)", e.Output, bytesText(e.Written))
}

func bytesText(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// Commit completes the output: a temporary file is synced, closed and
// renamed to its destination; a device or FIFO is closed.
func (o *Output) Commit() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != outOpen {
		return o.werr
	}
	if o.werr != nil {
		return o.werr
	}
	if o.tmp == "" {
		o.state = outCommitted
		o.stop()
		if o.dest == "-" {
			return nil
		}
		if err := o.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", o.Name(), unwrapPath(err))
		}
		return nil
	}
	fail := func(err error) error {
		o.f.Close()
		os.Remove(o.tmp)
		o.state = outAborted
		o.stop()
		return fmt.Errorf("writing %s: %w", o.Name(), unwrapPath(err))
	}
	o.synced.Wait()
	if err := o.syncErr.Load(); err != nil {
		return fail(*err)
	}
	if err := syncFile(o.f); err != nil {
		return fail(err)
	}
	if err := o.f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(o.tmp, o.path); err != nil {
		return fail(err)
	}
	o.state = outCommitted
	o.stop()
	return nil
}

// Abort gives up the output: a temporary file is closed and removed; a
// device or FIFO is closed (what was written stays written). It is safe
// after Commit and more than once.
func (o *Output) Abort() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != outOpen {
		return
	}
	o.state = outAborted
	if o.cut >= 0 {
		// Back to where the output began too: the descriptor's offset
		// may be shared (a shell's 2>&1), and a message written there
		// next would leave a hole of zeros before it.
		o.f.Truncate(o.cut)
		o.f.Seek(o.cut, io.SeekStart)
	}
	if o.dest != "-" {
		o.f.Close()
	}
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
	if o.stop != nil { // nil when a signal's handler was at work already
		o.stop()
	}
}

// Incomplete returns, for a failed run, what the reader of a device, FIFO
// or standard output must know: "; standard output is incomplete (N bytes
// written)". It returns "" for a file (Abort removes it) and when nothing
// was written.
func (o *Output) Incomplete() string {
	if o.tmp != "" || o.Written() == 0 {
		return ""
	}
	if o.cut >= 0 {
		return fmt.Sprintf("; %s, a file, is cut back to its %s from before (the %s written removed)", o.Name(), bytesText(o.cut), bytesText(o.Written()))
	}
	return fmt.Sprintf("; %s is incomplete (%s written)", o.Name(), bytesText(o.Written()))
}

// describe says what became of the output, for the message printed when a
// signal ends the process.
func (o *Output) describe() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.state == outCommitted:
		return o.Name() + " had been written in full"
	case o.tmp != "":
		return o.Name() + " not written"
	case o.cut >= 0:
		return o.Name() + ", a file, cut back to its size from before"
	case !o.began.Load():
		return "nothing written to " + o.Name()
	}
	// No count: a write may be blocked halfway (a pipe whose reader is
	// slow), its bytes partly delivered and not yet counted.
	return o.Name() + " is incomplete"
}
