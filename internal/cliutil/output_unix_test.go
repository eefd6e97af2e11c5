//go:build unix

package cliutil

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// TestOutputPermissions: a new output gets what the umask leaves of 0666,
// as a shell's redirection would give it; a replaced one keeps its
// permissions, whatever the umask.
func TestOutputPermissions(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	d := t.TempDir()
	write := func(path string, force bool) fs.FileMode {
		t.Helper()
		o, err := CreateOutput(path, force)
		if err != nil {
			t.Fatal(err)
		}
		o.Write([]byte("data"))
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	for _, c := range []struct {
		umask int
		want  fs.FileMode
	}{{0o077, 0o600}, {0o022, 0o644}, {0o002, 0o664}, {0o027, 0o640}} {
		syscall.Umask(c.umask)
		if got := write(filepath.Join(d, fmt.Sprintf("new-%03o.bmd", c.umask)), false); got != c.want {
			t.Errorf("umask %03o: new output has mode %v, want %v", c.umask, got, c.want)
		}
	}
	kept := filepath.Join(d, "kept.bmd")
	if err := os.WriteFile(kept, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o640); err != nil {
		t.Fatal(err)
	}
	syscall.Umask(0o077)
	if got := write(kept, true); got != 0o640 {
		t.Errorf("replaced output has mode %v, want its old 0640", got)
	}
}

// TestOutputLongName: an output whose name is as long as file names may be
// (255 bytes) can be written: its temporary file's name is cut to fit.
func TestOutputLongName(t *testing.T) {
	d := t.TempDir()
	for _, name := range []string{
		strings.Repeat("a", 251) + ".bmd",
		"x" + strings.Repeat("é", 120) + strings.Repeat("b", 10) + ".bmd", // 255 bytes; byte 200 is inside an é
	} {
		path := filepath.Join(d, name)
		o, err := CreateOutput(path, false)
		if err != nil {
			t.Fatalf("%d-byte name: %v", len(name), err)
		}
		if base := filepath.Base(o.tmp); len(base) > 255 || !strings.HasPrefix(base, ".") || !strings.Contains(base, ".tmp-") || !utf8.ValidString(base) {
			t.Errorf("temporary file %q (%d bytes)", base, len(base))
		}
		o.Write([]byte("data"))
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "data" {
			t.Fatalf("%d-byte name: read back %q, %v", len(name), b, err)
		}
	}
}

// stdoutOutput makes f standard output until the test ends and returns
// the Output that writes to it ("-").
func stdoutOutput(t *testing.T, f *os.File) *Output {
	t.Helper()
	saved := os.Stdout
	os.Stdout = f
	t.Cleanup(func() { os.Stdout = saved })
	o, err := CreateOutput("-", false)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestStdoutFileCutBack: standard output redirected to a regular file (a
// shell's > or >>) is cut back, when the run fails, to the size it had
// before, so that no partial output is left there, and takes no write
// after; written over from within, it is left as it is; committed, it
// keeps what was written.
func TestStdoutFileCutBack(t *testing.T) {
	d := t.TempDir()
	for _, c := range []struct {
		name       string
		before     string
		flag       int
		seek       int64
		commit     bool
		incomplete string // in Incomplete's text, before Abort
		want       string // the file, after a write past Abort (before a message)
	}{
		{"new file (>)", "", os.O_WRONLY | os.O_TRUNC, 0, false, "cut back to its 0 bytes from before (the 14 bytes written removed)", ""},
		{"appended (>>)", "prefix\n", os.O_WRONLY | os.O_APPEND, 0, false, "cut back to its 7 bytes from before", "prefix\n"},
		{"after what a shell wrote", "header\n", os.O_WRONLY, 7, false, "cut back to its 7 bytes from before", "header\n"},
		{"written over from within", "0123456789", os.O_WRONLY, 2, false, "is incomplete (14 bytes written)", "01partial outputmore"},
		{"committed", "", os.O_WRONLY | os.O_TRUNC, 0, true, "", "partial output"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(d, "out")
			if err := os.WriteFile(path, []byte(c.before), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, c.flag, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Seek(c.seek, 0); err != nil {
				t.Fatal(err)
			}
			o := stdoutOutput(t, f)
			o.Write([]byte("partial output"))
			if c.commit {
				if err := o.Commit(); err != nil {
					t.Fatal(err)
				}
			} else if inc := o.Incomplete(); !strings.Contains(inc, c.incomplete) {
				t.Errorf("Incomplete() = %q, want %q in it", inc, c.incomplete)
			}
			o.Abort()
			o.Write([]byte("more"))
			// What shares the descriptor (stderr after 2>&1) writes
			// where the output began, with no hole of zeros before.
			f.Write([]byte("|msg"))
			if got, err := os.ReadFile(path); err != nil || string(got) != c.want+"|msg" {
				t.Errorf("the file holds %q (%v), want %q", got, err, c.want+"|msg")
			}
		})
	}
}

// TestStdoutFileCutBackOnSignal: standard output redirected to a regular
// file is cut back by what a termination signal's handler runs (its
// registered cleanups, run here without the handler's exit), and the
// handler's message says so.
func TestStdoutFileCutBackOnSignal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := stdoutOutput(t, f)
	defer o.Abort()
	o.Write([]byte("partial output"))
	interrupt.Lock()
	var fs []func()
	for _, c := range interrupt.cleanups {
		fs = append(fs, c)
	}
	interrupt.Unlock()
	for _, c := range fs {
		c()
	}
	if got, err := os.ReadFile(path); err != nil || len(got) != 0 {
		t.Errorf("after the signal's cleanups the file holds %q (%v), want nothing", got, err)
	}
	if d := o.describe(); !strings.Contains(d, "cut back") {
		t.Errorf("the handler would say %q, want the file cut back", d)
	}
}
