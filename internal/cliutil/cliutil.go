// Package cliutil holds what the crunch and decrunch commands share: flags
// after positional arguments, output written to a temporary file and renamed
// only when complete, input spooling, exit codes and progress on stderr.
package cliutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Exit codes shared by the commands.
const (
	ExitOK    = 0
	ExitInput = 1 // bad input or failed conversion
	ExitUsage = 2
)

// UsageError marks an error in how the command was called.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// ReorderArgs moves flags that follow positional arguments in front of them,
// so that "decrunch in.bmd --apk app.apk -o out.hprof" parses as the user
// means (urfave/cli v2 stops parsing flags at the first positional).
// valueFlags names the flags that take a value (without dashes). A lone "-"
// is a positional (standard input or output); "--" ends flag parsing.
func ReorderArgs(args []string, valueFlags map[string]bool) []string {
	if len(args) == 0 {
		return args
	}
	out := []string{args[0]}
	var pos []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			out = append(out, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && valueFlags[name] {
				if i+1 == len(args) {
					// The value is missing: leave the flag last, so that
					// the parser says so instead of taking "--" for it.
					return out
				}
				i++
				out = append(out, args[i])
			}
			continue
		}
		pos = append(pos, a)
	}
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}

// ValueFlags returns the names (and aliases) of an app's flags that take a
// value.
func ValueFlags(flags []cli.Flag) map[string]bool {
	m := map[string]bool{}
	for _, f := range flags {
		if _, isBool := f.(*cli.BoolFlag); isBool {
			continue
		}
		for _, n := range f.Names() {
			m[n] = true
		}
	}
	return m
}

// Output is a file being written: a temporary file in the destination's
// folder, renamed over the destination by Commit and removed by Abort (or
// by an interrupt signal). The destination "-" means standard output.
type Output struct {
	*os.File
	dest string
	tmp  string
	mu   sync.Mutex
	done bool
	stop func()
}

// CheckOutput reports, before any work is done, what CreateOutput would
// refuse: writing over one of inputs, onto a directory, or over an
// existing file without force.
func CheckOutput(dest string, force bool, inputs ...string) error {
	if dest == "-" {
		return nil
	}
	if st, err := os.Stat(dest); err == nil {
		for _, in := range inputs {
			if in == "-" {
				continue
			}
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				return Usagef("output %s is the input file; refusing to overwrite it", dest)
			}
		}
		if st.IsDir() {
			return Usagef("output %s is a directory", dest)
		}
		if !force {
			return Usagef("output %s exists; use --force to overwrite it", dest)
		}
	}
	return nil
}

// CreateOutput opens a temporary file for dest. It refuses to overwrite an
// existing dest unless force, and never writes over any of inputs.
func CreateOutput(dest string, force bool, inputs ...string) (*Output, error) {
	if dest == "-" {
		return &Output{File: os.Stdout, dest: dest}, nil
	}
	if err := CheckOutput(dest, force, inputs...); err != nil {
		return nil, err
	}
	dir := filepath.Dir(dest)
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot create %s: folder %s does not exist", dest, dir)
		}
		return nil, fmt.Errorf("cannot create output in %s: %w", dir, err)
	}
	f.Chmod(0o644)
	o := &Output{File: f, dest: dest, tmp: f.Name()}
	o.stop = OnInterrupt(o.Abort)
	return o, nil
}

// Commit syncs, closes and renames the temporary file to its destination.
func (o *Output) Commit() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dest == "-" || o.done {
		return nil
	}
	o.done = true
	defer o.stop()
	if err := o.File.Sync(); err != nil {
		o.File.Close()
		os.Remove(o.tmp)
		return err
	}
	if err := o.File.Close(); err != nil {
		os.Remove(o.tmp)
		return err
	}
	if err := os.Rename(o.tmp, o.dest); err != nil {
		os.Remove(o.tmp)
		return err
	}
	return nil
}

// Abort closes and removes the temporary file; it is safe after Commit.
func (o *Output) Abort() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dest == "-" || o.done {
		return
	}
	o.done = true
	o.File.Close()
	os.Remove(o.tmp)
	if o.stop != nil {
		o.stop()
	}
}

var interrupt struct {
	sync.Mutex
	once     sync.Once
	next     int
	cleanups map[int]func()
	// started is set when a signal arrived: the handler is removing files
	// and will exit with 130, whatever the work in progress then fails with.
	started atomic.Bool
}

// OnInterrupt registers f to run if the process receives SIGINT or SIGTERM,
// after which the process says so on stderr and exits with code 130. The
// function returned unregisters f.
func OnInterrupt(f func()) (cancel func()) {
	interrupt.once.Do(func() {
		interrupt.cleanups = map[int]func(){}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			s := <-sig
			interrupt.started.Store(true)
			interrupt.Lock()
			fs := make([]func(), 0, len(interrupt.cleanups))
			for _, f := range interrupt.cleanups {
				fs = append(fs, f)
			}
			interrupt.Unlock()
			for _, f := range fs {
				f()
			}
			fmt.Fprintf(os.Stderr, "interrupted (%v): no output written\n", s)
			os.Exit(130)
		}()
	})
	interrupt.Lock()
	defer interrupt.Unlock()
	id := interrupt.next
	interrupt.next++
	interrupt.cleanups[id] = f
	return func() {
		interrupt.Lock()
		delete(interrupt.cleanups, id)
		interrupt.Unlock()
	}
}

// OpenInput opens a named input file, or standard input for "-", with a
// clear error for a missing or unreadable file or a directory.
func OpenInput(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory", name)
	}
	return f, nil
}

// Progress draws a one-line progress indicator on stderr when stderr is a
// terminal; otherwise it does nothing.
type Progress struct {
	on    bool
	total int64
	label string
}

// NewProgress returns a Progress for total bytes (0 if unknown), silent when
// quiet or when stderr is not a terminal.
func NewProgress(quiet bool, total int64) *Progress {
	return &Progress{on: !quiet && term.IsTerminal(int(os.Stderr.Fd())), total: total}
}

// Update shows the progress of a step.
func (p *Progress) Update(step string, done int64) {
	if !p.on {
		return
	}
	if p.total > 0 {
		pct := float64(done) * 100 / float64(p.total)
		if pct > 100 {
			pct = 100
		}
		bar := strings.Repeat("#", int(pct/4)) + strings.Repeat(".", 25-int(pct/4))
		fmt.Fprintf(os.Stderr, "\r%-8s [%s] %5.1f%% %6d MB", step, bar, pct, done>>20)
	} else {
		fmt.Fprintf(os.Stderr, "\r%-8s %6d MB", step, done>>20)
	}
}

// Done clears the progress line.
func (p *Progress) Done() {
	if p.on {
		fmt.Fprintf(os.Stderr, "\r%s\r", strings.Repeat(" ", 60))
	}
}

// Run runs a cli.App with reordered arguments and maps errors to exit
// codes and one-line messages prefixed with the command name.
func Run(app *cli.App, args []string) int {
	app.ExitErrHandler = func(*cli.Context, error) {}
	// A bad flag is reported in one line on stderr (below), not with the
	// whole help text on standard output, which may be the output file.
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return &UsageError{err.Error()} }
	OnInterrupt(func() {})() // handle Ctrl-C from the start: temporary files are registered as made
	err := app.Run(ReorderArgs(args, ValueFlags(app.Flags)))
	if interrupt.started.Load() {
		// The work failed or ended because the handler removed its files:
		// the handler exits with 130 once it is done.
		select {}
	}
	if err == nil {
		return ExitOK
	}
	var ue *UsageError
	if errors.As(err, &ue) || strings.Contains(err.Error(), "flag provided but not defined") || strings.Contains(err.Error(), "invalid value") {
		fmt.Fprintf(os.Stderr, "%s: %v\nRun '%s --help' for usage.\n", app.Name, err, app.Name)
		return ExitUsage
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", app.Name, err)
	return ExitInput
}
