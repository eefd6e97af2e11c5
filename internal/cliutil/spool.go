package cliutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/heapcrunch/heapcrunch/internal/compress"
)

// SeekableInput returns the decompressed content of the named input (or of
// standard input for "-") as a seekable file, for tools that read their
// input twice. A plain regular file is used as it is, also as standard
// input read from its start ("< dump.hprof"); other standard input, pipes,
// FIFOs, devices and compressed files are spooled to a temporary
// file, which has no name once made on Linux and Android and once written
// on other systems but Windows, where cleanup removes it (as does a
// termination signal).
func SeekableInput(name string) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), err error) {
	f, size, kind, cleanup, _, err = seekableInput(name, false)
	return f, size, kind, cleanup, err
}

// SeekableInputPartial is SeekableInput for a reader that can use what
// precedes damage (decrunch --salvage): an input whose compressed data is
// truncated or damaged gives the bytes decompressed before the damage, and
// the damage as a separate error.
func SeekableInputPartial(name string) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), damage, err error) {
	return seekableInput(name, true)
}

func seekableInput(name string, partial bool) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), damage, err error) {
	if name == "-" && stdinIsFile() {
		// "< dump.hprof": read in place, as the file itself. Closing
		// it is left to the process's end: a closed descriptor 0 would be
		// the next file opened.
		return seekableFile(name, os.Stdin, func() {}, partial)
	}
	in, err := OpenInput(name)
	if err != nil {
		return nil, 0, "", nil, nil, err
	}
	return seekableFile(name, in, func() { in.Close() }, partial)
}

// stdinIsFile reports whether standard input is a regular file read from
// its start (a shell's "< dump.hprof"), which can be read twice.
func stdinIsFile() bool {
	st, err := os.Stdin.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	off, err := os.Stdin.Seek(0, io.SeekCurrent)
	return err == nil && off == 0
}

// seekableFile is seekableInput of the opened input in, which closeIn
// closes.
func seekableFile(name string, in io.Reader, closeIn func(), partial bool) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), damage, err error) {
	dec, kind, err := compress.NewReader(in)
	if err != nil {
		closeIn()
		return nil, 0, kind, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if file, ok := in.(*os.File); ok && kind == compress.None {
		st, err := file.Stat()
		if err != nil {
			closeIn()
			return nil, 0, kind, nil, nil, fmt.Errorf("%s: %w", name, unwrapPath(err))
		}
		if st.Mode().IsRegular() {
			if _, err := file.Seek(0, io.SeekStart); err != nil {
				closeIn()
				return nil, 0, kind, nil, nil, fmt.Errorf("%s: %w", name, unwrapPath(err))
			}
			return file, st.Size(), kind, closeIn, nil, nil
		}
		// A pipe (<(zcat dump.gz)) or a device cannot be read twice: the
		// bytes already read by the detection are in dec, spooled below.
	}
	var remove func()
	tmp, cancel, err := createTemp("", "heapcrunch-spool-", 0o600, nil, func(f *os.File) func() {
		remove = func() { f.Close(); os.Remove(f.Name()) }
		return remove
	})
	if err != nil {
		dec.Close()
		closeIn()
		return nil, 0, kind, nil, nil, fmt.Errorf("%s: cannot make a temporary copy to read it twice (set TMPDIR to a folder with room): %w", name, err)
	}
	if unnamedSpool {
		// Read and written through tmp alone: with no name, not even
		// SIGKILL or a phone's low-memory killer can leave this copy of
		// the dump behind.
		os.Remove(tmp.Name())
	}
	clean := func() { cancel(); remove() }
	sw := &spoolWriter{f: tmp}
	n, err := io.Copy(sw, dec)
	dec.Close()
	closeIn()
	if sw.err != nil {
		clean()
		return nil, 0, kind, nil, nil, fmt.Errorf("%s: cannot make a temporary copy to read it twice: writing %s: %v (set TMPDIR to a folder with room)", name, filepath.Dir(tmp.Name()), unwrapPath(sw.err))
	}
	if err != nil {
		switch {
		case kind == compress.None:
			damage = fmt.Errorf("%s: reading at offset %d: %w", name, n, err)
		case errors.Is(err, compress.ErrTrailingData):
			// All of it decompressed: what follows is not gzip.
			damage = fmt.Errorf("%s: %w", name, err)
		default:
			damage = fmt.Errorf("%s: truncated or damaged %s data after %d uncompressed bytes: %w", name, kind, n, err)
		}
		if !partial {
			clean()
			return nil, 0, kind, nil, nil, damage
		}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		clean()
		return nil, 0, kind, nil, nil, err
	}
	// Elsewhere the name goes once the copy is written (Windows cannot
	// remove an open file: there clean does it).
	if !unnamedSpool && runtime.GOOS != "windows" {
		os.Remove(tmp.Name())
	}
	return tmp, n, kind, clean, damage, nil
}

// unnamedSpool says whether a spool file loses its name as soon as it is
// made: on Linux and Android, where tests see it through /proc (other
// systems remove it once written, Windows at the end).
var unnamedSpool = runtime.GOOS == "linux" || runtime.GOOS == "android"

// spoolWriter keeps the error of writing the spool file, to tell it from
// an error reading the input.
type spoolWriter struct {
	f   *os.File
	err error
}

func (w *spoolWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}
