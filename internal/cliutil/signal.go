package cliutil

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// ExitSignal is added to a signal's number to make the exit code of a
// process that the signal ended: 130 for SIGINT, 143 for SIGTERM, 129 for
// SIGHUP, 131 for SIGQUIT, 141 for SIGPIPE (a reader that went away).
const ExitSignal = 128

// ExitBrokenPipe is the exit code when the reader of the output (a pipe or
// FIFO) went away before the end.
const ExitBrokenPipe = ExitSignal + int(syscall.SIGPIPE)

// TermSignals are the signals that end a command after it has removed its
// temporary and spool files.
var TermSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

var interrupt struct {
	sync.Mutex
	once     sync.Once
	name     string // the command, for the message
	next     int
	cleanups map[int]func()
	outputs  map[int]*Output
	// started is set when a signal arrived: the handler is removing files
	// and will exit, whatever the work in progress then fails with.
	started atomic.Bool
}

// signalName returns "SIGINT" and the like.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return s.String()
}

// installHandler starts, once, the goroutine that handles the termination
// signals: it runs every registered cleanup (removing temporary and spool
// files), says on stderr what became of the output, and exits with
// ExitSignal plus the signal's number. SIGPIPE is caught too, and ignored:
// a write to a pipe whose reader has gone then fails with EPIPE, which the
// command reports (see BrokenPipeError), instead of killing the process
// before it removes its files.
func installHandler() {
	interrupt.once.Do(func() {
		interrupt.cleanups = map[int]func(){}
		interrupt.outputs = map[int]*Output{}
		sig := make(chan os.Signal, 1)
		catch := []os.Signal{syscall.SIGPIPE}
		for _, s := range TermSignals {
			// A signal ignored from the start stays ignored: nohup's
			// SIGHUP, the SIGINT of a shell's background job.
			if !signal.Ignored(s) {
				catch = append(catch, s)
			}
		}
		signal.Notify(sig, catch...)
		go func() {
			var s os.Signal
			for s = range sig {
				if s != syscall.SIGPIPE {
					break
				}
			}
			interrupt.Lock()
			interrupt.started.Store(true)
			fs := make([]func(), 0, len(interrupt.cleanups))
			for _, f := range interrupt.cleanups {
				fs = append(fs, f)
			}
			outs := make([]*Output, 0, len(interrupt.outputs))
			for _, o := range interrupt.outputs {
				outs = append(outs, o)
			}
			name := interrupt.name
			interrupt.Unlock()
			for _, f := range fs {
				f()
			}
			what := "no output written"
			if len(outs) > 0 {
				var ds []string
				for _, o := range outs {
					ds = append(ds, o.describe())
				}
				what = strings.Join(ds, "; ")
			}
			if name != "" {
				name += ": "
			}
			fmt.Fprintf(os.Stderr, "%sinterrupted (%s): %s\n", name, signalName(s), what)
			code := ExitSignal + 2
			if n, ok := s.(syscall.Signal); ok {
				code = ExitSignal + int(n)
			}
			os.Exit(code)
		}()
	})
}

// OnInterrupt registers f to run if a termination signal (TermSignals)
// ends the process; see installHandler. The function returned unregisters
// f. If the handler is already at work, f runs at once.
func OnInterrupt(f func()) (cancel func()) {
	return register(nil, f)
}

// watchOutput registers an output, for the handler's message, and its
// cleanup (nil for none).
func watchOutput(o *Output, cleanup func()) (cancel func()) {
	return register(o, cleanup)
}

func register(o *Output, f func()) (cancel func()) {
	installHandler()
	interrupt.Lock()
	if interrupt.started.Load() {
		interrupt.Unlock()
		if f != nil {
			f()
		}
		return func() {}
	}
	defer interrupt.Unlock()
	return registerLocked(o, f)
}

// registerLocked is register with interrupt locked and no signal yet.
func registerLocked(o *Output, f func()) (cancel func()) {
	id := interrupt.next
	interrupt.next++
	if f != nil {
		interrupt.cleanups[id] = f
	}
	if o != nil {
		interrupt.outputs[id] = o
	}
	return func() {
		interrupt.Lock()
		delete(interrupt.cleanups, id)
		// The output stays known: the message says what became of it.
		interrupt.Unlock()
	}
}

// errSignalled is returned when a file was to be made while the signal
// handler is at work; the process is about to exit.
var errSignalled = errors.New("ended by a signal")

// createTemp makes a temporary file (openTemp) and registers the cleanup
// that cleanup(f) returns, with nothing in between that the signal handler
// could see: a signal cannot leave the file behind unregistered. o, when
// not nil, is registered for the handler's message too. An unnamed file
// has no name once createTemp returns: where the system can, it never has
// one (openUnnamed); elsewhere its name is removed at once.
func createTemp(dir, prefix string, perm os.FileMode, unnamed bool, o *Output, cleanup func(f *os.File) func()) (f *os.File, cancel func(), err error) {
	installHandler()
	interrupt.Lock()
	defer interrupt.Unlock()
	if interrupt.started.Load() {
		return nil, nil, errSignalled
	}
	if dir == "" {
		dir = os.TempDir()
	}
	if unnamed {
		f = openUnnamed(dir, perm)
	}
	if f == nil {
		if f, err = openTemp(dir, prefix, perm); err != nil {
			return nil, nil, err
		}
		if unnamed {
			os.Remove(f.Name())
		}
	}
	return f, registerLocked(o, cleanup(f)), nil
}

// openTemp creates a new file in dir, named prefix
// and a random number, as os.CreateTemp does, but with permissions perm
// less the umask, where os.CreateTemp gives 0600 whatever the umask.
func openTemp(dir, prefix string, perm os.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}
