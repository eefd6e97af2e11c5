// Package clitest runs the crunch and decrunch binaries in tests: it builds
// them, runs them in a folder with a private TMPDIR, and checks what a
// failure must look like (exit code, a message naming the file, no Go
// panic trace, nothing left behind). It also makes the special outputs the
// tests write to: FIFOs, a null device, a pseudo-terminal.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// Build compiles the command in the module folder pkg (e.g. "cmd/crunch")
// into dir and returns the binary's path. When the tests run under the
// race detector, so does the binary (its signal handling and output
// goroutines are checked too); when they measure coverage, the binary is
// built with -cover over the module's packages, and its runs write their
// coverage data to $CLITEST_GOCOVERDIR if it is set (scripts/cover.sh
// reads it), or to a temporary folder.
func Build(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if testing.CoverMode() != "" {
		args = append(args, "-cover", "-coverpkg=github.com/heapcrunch/heapcrunch/...")
	}
	cmd := exec.Command("go", append(args, "./"+pkg)...)
	cmd.Dir = testutil.Root()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", errors.New("go build ./" + pkg + ": " + err.Error() + "\n" + string(out))
	}
	return bin, nil
}

// Result is what a run of a command did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Dir is a work folder for one test: the command runs in it, with TMPDIR
// set to a sibling folder so that spool files can be checked for.
type Dir struct {
	Path string
	Tmp  string
}

// NewDir makes a work folder and a private TMPDIR under t.TempDir().
func NewDir(t testing.TB) *Dir {
	t.Helper()
	base := t.TempDir()
	d := &Dir{Path: filepath.Join(base, "work"), Tmp: filepath.Join(base, "tmp")}
	for _, p := range []string{d.Path, d.Tmp} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// Write creates a file in the work folder and returns its name.
func (d *Dir) Write(t testing.TB, name string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(d.Path, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// Read returns a file of the work folder.
func (d *Dir) Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.Path, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Files lists the work folder (hidden files included) and the TMPDIR.
func (d *Dir) Files(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, p := range []string{d.Path, d.Tmp} {
		ents, err := os.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			out = append(out, filepath.Join(filepath.Base(p), e.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// Command returns an exec.Cmd for bin in the work folder.
func (d *Dir) Command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	unignoreSignals()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = d.Path
	cmd.Env = append(os.Environ(), "TMPDIR="+d.Tmp)
	if testing.CoverMode() != "" {
		// go test points GOCOVERDIR at its own folder, which it reads only
		// for the test binary: the commands' data go to CLITEST_GOCOVERDIR.
		cmd.Env = append(cmd.Env, "GOCOVERDIR="+coverDir())
	}
	return cmd
}

// unignoreSignals makes the commands started by the tests get SIGINT and
// SIGHUP with their default action even when the tests were started with
// them ignored (nohup, or "go test &" in a script without job control): a
// signal ignored stays ignored across exec, the commands then leave it
// ignored (cliutil's handler, as nohup asks), and TestSignals waited
// forever for a command its SIGINT or SIGHUP did not end. A signal this
// process catches is reset to its default in a child. Only signals
// ignored here are caught, so that ^C still ends the tests.
var unignoreSignals = sync.OnceFunc(func() {
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGHUP} {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
})

// coverDir is where binaries built with -cover write their coverage data:
// $CLITEST_GOCOVERDIR, or a temporary folder.
var coverDir = sync.OnceValue(func() string {
	if d := os.Getenv("CLITEST_GOCOVERDIR"); d != "" {
		return d
	}
	d, err := os.MkdirTemp("", "clitest-cover-")
	if err != nil {
		return os.TempDir()
	}
	return d
})

// Run runs bin with args in the work folder, stdin from in (nil: empty).
func (d *Dir) Run(t testing.TB, in []byte, bin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := d.Command(ctx, bin, args...)
	cmd.Stdin = bytes.NewReader(in)
	return run(t, cmd)
}

// run runs cmd, its standard output into the result unless it was set,
// and returns what it did.
func run(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &stdout
	}
	cmd.Stderr = &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v\nstderr: %s", filepath.Base(cmd.Path), cmd.Args[1:], err, r.Stderr)
	}
	NoPanic(t, r)
	return r
}

// RunRedirected runs bin as Run does, with standard input read from the
// file stdin of the work folder and standard output appended to its file
// stdout, as a shell's "< stdin >> stdout" does ("" for either: as Run).
func (d *Dir) RunRedirected(t testing.TB, stdin, stdout string, bin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := d.Command(ctx, bin, args...)
	cmd.Stdin = bytes.NewReader(nil)
	if stdin != "" {
		f, err := os.Open(filepath.Join(d.Path, stdin))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	if stdout != "" {
		f, err := os.OpenFile(filepath.Join(d.Path, stdout), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	return run(t, cmd)
}

// NoPanic fails the test if the command printed a Go panic or goroutine
// trace.
func NoPanic(t testing.TB, r Result) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "runtime error", ".go:"} {
		if strings.Contains(r.Stderr, s) || strings.Contains(r.Stdout, s) {
			t.Fatalf("output has %q (a Go trace?):\nstderr: %s", s, r.Stderr)
		}
	}
}

// ExpectOK fails the test unless the run succeeded.
func ExpectOK(t testing.TB, r Result) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr: %s", r.Code, r.Stderr)
	}
}

// ExpectFail checks a failed run: the exit code, a one-line-per-problem
// message on stderr prefixed with the command name that contains every
// string of mention, nothing on stdout, and the folders listing exactly
// before (no output, no temporary file).
func ExpectFail(t testing.TB, d *Dir, r Result, code int, name string, before []string, mention ...string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit code %d, want %d\nstderr: %s", r.Code, code, r.Stderr)
	}
	if !strings.HasPrefix(r.Stderr, name+": ") {
		t.Errorf("stderr does not start with %q: %q", name+": ", r.Stderr)
	}
	for _, m := range mention {
		if !strings.Contains(r.Stderr, m) {
			t.Errorf("stderr does not mention %q: %q", m, r.Stderr)
		}
	}
	if r.Stdout != "" {
		t.Errorf("stdout is not empty: %q", Head(r.Stdout))
	}
	if after := d.Files(t); !slices.Equal(after, before) {
		t.Errorf("files before: %v\nfiles after:  %v", before, after)
	}
}

// Head returns the start of s, for messages.
func Head(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// Copy copies a file.
func Copy(t testing.TB, dst, src string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// ExitCode returns the exit code of a finished command, failing the test if
// it did not run.
func ExitCode(t testing.TB, cmd *exec.Cmd, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", filepath.Base(cmd.Path), err)
	}
	return cmd.ProcessState.ExitCode()
}

// WaitFor polls cond every millisecond until it holds, for at most 90 s
// (then it fails the test), and reports true. exited, when not nil, closes
// when the process being watched has ended: WaitFor then reports false.
// The bound guards against a hang, not a slow run: at 20 s, CI's race step
// at d5dd399 failed TestSpoolUnnamed, whose crunch under the race detector,
// on a loaded machine, had not yet decompressed and read its 80 MB dump.
func WaitFor(t testing.TB, what string, cond func() bool, exited <-chan struct{}) bool {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		select {
		case <-exited:
			return false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// HasTemp reports whether the work folder or the TMPDIR holds a file whose
// name contains part (".out.bmd.tmp-", "heapcrunch-spool-").
func (d *Dir) HasTemp(part string) bool {
	for _, p := range []string{d.Path, d.Tmp} {
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			if strings.Contains(e.Name(), part) {
				return true
			}
		}
	}
	return false
}

// HasSpool reports whether the process pid has a spool file
// (heapcrunch-spool-…) in the work folder's TMPDIR, by its name or, where
// it has none (Linux), open (OpenInTmp).
func (d *Dir) HasSpool(pid int) bool {
	return d.HasTemp("heapcrunch-spool-") || len(d.OpenInTmp(pid)) > 0
}

// OpenInTmp returns the files the process pid has open in the work
// folder's TMPDIR, as /proc/PID/fd names them: "TMPDIR/NAME", with
// " (deleted)" once NAME is removed, or "TMPDIR/#INODE (deleted)" for a
// file that never had a name (O_TMPFILE). Nothing elsewhere than Linux.
func (d *Dir) OpenInTmp(pid int) []string {
	var open []string
	fds := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, _ := os.ReadDir(fds)
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && strings.HasPrefix(l, d.Tmp+string(filepath.Separator)) {
			open = append(open, l)
		}
	}
	return open
}

// NullDevice returns a character device that discards what is written to
// it, for tests of output to a device: as root, a private node of the null
// device in the work folder (so that a regression that replaces it by a
// file cannot replace the system's /dev/null); otherwise /dev/null, which
// only root could replace.
func NullDevice(t testing.TB, d *Dir) string {
	t.Helper()
	if os.Geteuid() == 0 {
		if p, ok := privateNull(d.Path); ok {
			return p
		}
		t.Logf("cannot make a private null device here: using /dev/null")
	}
	return "/dev/null"
}

// IsCharDevice fails the test unless path is (still) a character device.
func IsCharDevice(t testing.TB, path string) {
	t.Helper()
	if m := lstatMode(t, path); m&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v", path, m)
	}
}

// IsFIFO fails the test unless path is (still) a FIFO.
func IsFIFO(t testing.TB, path string) {
	t.Helper()
	if m := lstatMode(t, path); m&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v", path, m)
	}
}

// lstatMode returns the mode of path itself (a symlink not followed).
func lstatMode(t testing.TB, path string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

// StartPiped starts bin with its standard output a pipe that the caller
// reads and closes, and waits for its first n bytes, which it returns with
// the pipe and the standard error that the command writes.
func (d *Dir) StartPiped(t testing.TB, n int, bin string, args ...string) (cmd *exec.Cmd, out io.ReadCloser, head []byte, stderr *bytes.Buffer) {
	t.Helper()
	cmd = d.Command(t.Context(), bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	head = make([]byte, n)
	if _, err := io.ReadFull(out, head); err != nil {
		t.Fatalf("reading the standard output of %s: %v (stderr %q)", filepath.Base(bin), err, stderr.String())
	}
	return cmd, out, head, stderr
}

// RunClosingStdout runs bin with its standard output a pipe that is
// closed after its first n bytes (a reader that goes away), and returns
// the result and those bytes.
func (d *Dir) RunClosingStdout(t testing.TB, n int, bin string, args ...string) (Result, []byte) {
	t.Helper()
	cmd, out, head, stderr := d.StartPiped(t, n, bin, args...)
	out.Close()
	err := cmd.Wait()
	r := Result{Code: ExitCode(t, cmd, err), Stderr: stderr.String()}
	NoPanic(t, r)
	return r, head
}

// RunTo runs bin like Run, with its standard output going to out (a
// terminal, a device) instead of a pipe; Result.Stdout is then empty.
func (d *Dir) RunTo(t testing.TB, out *os.File, bin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := d.Command(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	err := cmd.Run()
	r := Result{Code: ExitCode(t, cmd, err), Stderr: stderr.String()}
	NoPanic(t, r)
	return r
}

// ExpectFiles fails the test unless the work folder and TMPDIR list
// exactly before plus added (names relative to the work folder, such as
// "real.bmd"): nothing else made, no temporary or spool file left.
func ExpectFiles(t testing.TB, d *Dir, before []string, added ...string) {
	t.Helper()
	want := slices.Clone(before)
	for _, a := range added {
		want = append(want, filepath.Join(filepath.Base(d.Path), a))
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if after := d.Files(t); !slices.Equal(after, want) {
		t.Errorf("files: %v\nwant:  %v", after, want)
	}
}

// CountWaits replaces *wait, a command's wait for the advice of the Go heap
// for huge pages (its heapAdvised), with a function that counts its calls
// and fails t where the file out exists when it is called: the advice
// must come before the command makes its output. It returns the count;
// the test's end puts *wait back.
func CountWaits(t testing.TB, wait *func(), out string) *int {
	t.Helper()
	old := *wait
	t.Cleanup(func() { *wait = old })
	waits := new(int)
	*wait = func() {
		*waits++
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("the output exists (or cannot be looked at: %v) when the command waits for the heap's advice", err)
		}
	}
	return waits
}
