// Package cliutil holds what the crunch and decrunch commands share: flags
// after positional arguments, outputs (a temporary file renamed only when
// complete, or a device, FIFO or standard output written in place), input
// spooling, termination signals, exit codes and progress on stderr.
package cliutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Exit codes shared by the commands.
const (
	ExitOK      = 0
	ExitInput   = 1 // bad input or failed conversion
	ExitUsage   = 2
	ExitPartial = 3 // a partial output was written (decrunch --salvage of a damaged file)
)

// PartialError reports that the command wrote a partial output on
// purpose: Run prints it and returns ExitPartial.
type PartialError struct{ Msg string }

// Error returns the message of a PartialError.
func (e *PartialError) Error() string { return e.Msg }

// UsageError marks an error in how the command was called.
type UsageError struct{ Msg string }

// Error returns the message of an UsageError.
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

// CheckInput reports, before anything else is looked at, a named input
// that is missing, unreadable or a folder, so that the first message is
// about the input the user gave.
func CheckInput(name string) error {
	if name == "-" {
		return nil
	}
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", name)
	case err != nil:
		return fmt.Errorf("%s: %w", name, unwrapPath(err))
	case st.IsDir():
		return fmt.Errorf("%s: is a directory", name)
	case st.Mode()&fs.ModeSocket != 0:
		return fmt.Errorf("%s: is a socket, not a file: send the dump through a pipe or give a file", name)
	}
	return nil
}

// OpenInput opens a named input file, or standard input for "-", with a
// clear error for a missing or unreadable file or a directory.
func OpenInput(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	if err := CheckInput(name); err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, unwrapPath(err))
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

// Printable returns s as it is if it holds only printable characters,
// spaces and joiners, else quoted as a Go string ("\x1b[2J"): text from an input file
// printed on a terminal must not carry escape sequences to it (nor bytes
// that are not UTF-8, which some terminals read as C1 controls).
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		// Spaces of every script (a no-break space) and the joiners of
		// emoji sequences and Persian or Indic text are text too; other
		// format characters (bidirectional overrides) are not.
		if !unicode.IsPrint(r) && !unicode.Is(unicode.Zs, r) && r != '\u200c' && r != '\u200d' {
			return strconv.Quote(s)
		}
	}
	return s
}

// Plural returns "1 argument", "2 arguments" and the like.
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Run runs a cli.App with reordered arguments and maps errors to exit
// codes and one-line messages prefixed with the command name: ExitUsage
// for a UsageError or a bad flag, ExitBrokenPipe (141) for a broken pipe,
// ExitInput for any other error. A termination signal ends the process
// from its handler (see installHandler).
func Run(app *cli.App, args []string) int {
	app.ExitErrHandler = func(*cli.Context, error) {}
	// A bad flag is reported in one line on stderr (below), not with the
	// whole help text on standard output, which may be the output file.
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return &UsageError{err.Error()} }
	// Handle the signals from the start: temporary files are registered as
	// they are made.
	installHandler()
	interrupt.Lock()
	interrupt.name = app.Name
	interrupt.Unlock()
	err := app.Run(ReorderArgs(args, ValueFlags(app.Flags)))
	if interrupt.started.Load() {
		// The work failed or ended because the handler removed its files:
		// the handler exits once it is done.
		select {}
	}
	if err == nil {
		return ExitOK
	}
	var ue *UsageError
	var bp *BrokenPipeError
	var pe *PartialError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintf(os.Stderr, "%s: %v\n", app.Name, pe)
		return ExitPartial
	case errors.As(err, &bp):
		fmt.Fprintf(os.Stderr, "%s: %v\n", app.Name, bp)
		return ExitBrokenPipe
	case errors.As(err, &ue) || strings.Contains(err.Error(), "flag provided but not defined") || strings.Contains(err.Error(), "invalid value"):
		fmt.Fprintf(os.Stderr, "%s: %v\nRun '%s --help' for usage.\n", app.Name, err, app.Name)
		return ExitUsage
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", app.Name, err)
	return ExitInput
}
