package cliutil

import (
	"bytes"
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
//
// Before it spools anything, the first HeadSize bytes decompressed (all
// of them, for a shorter input) go to check, if not nil, which returns an
// error when they cannot start the kind of file the tool reads: a
// gigabyte of gzipped zeros, or a file of the wrong kind, is refused at
// once rather than once copied. check must refuse only what it is sure
// of: a header cut short by HeadSize is for the tool to read.
func SeekableInput(name string, check func(head []byte) error) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), err error) {
	f, size, kind, cleanup, _, err = seekableInput(name, false, nil, check)
	return f, size, kind, cleanup, err
}

// HeadSize is how many bytes of a spooled input SeekableInput gives its
// check: more than the header of an HPROF dump (at most 45 bytes) or of
// a BMD file as crunch writes it.
const HeadSize = 64 << 10

// SeekableInputPartial is SeekableInput for a reader that can use what
// precedes damage (decrunch --salvage): an input whose compressed data is
// truncated or damaged gives the bytes decompressed before the damage, and
// the damage as a separate error. A spooled input stops at limit, when it
// is not nil: limit(n) is the most bytes the input may decompress to once
// n bytes of it are read, and beyond it the error is a *SpoolLimitError.
// (A file that is neither compressed nor a stream is used in place, and
// not bounded.) check is SeekableInput's; damage within its head leaves
// the head unchecked.
func SeekableInputPartial(name string, limit func(read int64) int64, check func(head []byte) error) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), damage, err error) {
	return seekableInput(name, true, limit, check)
}

// SpoolLimitError reports an input that decompresses to more than the
// limit given to SeekableInputPartial: a few bytes of compressed data can
// stand for terabytes.
type SpoolLimitError struct {
	Name  string
	Kind  compress.Kind
	Limit int64 // the bound crossed
	Read  int64 // the input's bytes read then
}

// Error returns the message of a SpoolLimitError.
func (e *SpoolLimitError) Error() string {
	if e.Kind == compress.None {
		return fmt.Sprintf("%s: larger than %s", e.Name, FormatSize(e.Limit))
	}
	return fmt.Sprintf("%s: decompresses to more than %s (from %s of %s data)", e.Name, FormatSize(e.Limit), FormatSize(e.Read), e.Kind)
}

func seekableInput(name string, partial bool, limit func(int64) int64, check func([]byte) error) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), damage, err error) {
	if name == "-" && stdinIsFile() {
		// "< dump.hprof": read in place, as the file itself. Closing
		// it is left to the process's end: a closed descriptor 0 would be
		// the next file opened.
		return seekableFile(name, os.Stdin, func() {}, partial, limit, check)
	}
	in, err := OpenInput(name)
	if err != nil {
		return nil, 0, "", nil, nil, err
	}
	return seekableFile(name, in, func() { in.Close() }, partial, limit, check)
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
func seekableFile(name string, in io.Reader, closeIn func(), partial bool, limit func(int64) int64, check func([]byte) error) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), damage, err error) {
	raw := &countReader{r: in}
	dec, kind, err := compress.NewReader(raw)
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
	defer closeIn()
	defer dec.Close()
	from, err := checkHead(dec, check)
	if err != nil {
		return nil, 0, kind, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	bounded := &boundedReader{r: from, raw: raw, limit: limit}
	if limit != nil {
		from = bounded
	}
	tmp, n, clean, readErr, err := spool(name, from)
	switch {
	case err != nil:
		return nil, 0, kind, nil, nil, err
	case bounded.over > 0:
		clean()
		return nil, 0, kind, nil, nil, &SpoolLimitError{Name: name, Kind: kind, Limit: bounded.over, Read: raw.n}
	case readErr != nil:
		damage = readDamage(name, kind, n, readErr)
		if !partial {
			clean()
			return nil, 0, kind, nil, nil, damage
		}
	}
	return tmp, n, kind, clean, damage, nil
}

// checkHead reads the first HeadSize bytes of dec and gives them to
// check, if not nil; it returns check's error, or a reader of all of dec.
// A head that ends in damage is not checked: the spool reports the damage.
func checkHead(dec io.Reader, check func([]byte) error) (io.Reader, error) {
	if check == nil {
		return dec, nil
	}
	// Not io.ReadFull, which would make the io.ErrUnexpectedEOF of a
	// truncated gzip stream look like the input's end.
	head := make([]byte, HeadSize)
	n := 0
	var readErr error
	for n < len(head) && readErr == nil {
		var k int
		k, readErr = dec.Read(head[n:])
		n += k
	}
	head = head[:n]
	if readErr != nil && readErr != io.EOF {
		return io.MultiReader(bytes.NewReader(head), errReader{readErr}), nil
	}
	if err := check(head); err != nil {
		return nil, err
	}
	if readErr == io.EOF { // the whole input
		return bytes.NewReader(head), nil
	}
	return io.MultiReader(bytes.NewReader(head), dec), nil
}

// errReader returns its error: the one that ended a head's reading.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// spool copies from into a new temporary file, which it returns at its
// start with the bytes copied and the cleanup that removes it. readErr is
// the error that ended the reading of from, if any: the file then holds
// what was read before it. err is a failure to make, write or rewind the
// file, which is then removed.
func spool(name string, from io.Reader) (tmp *os.File, n int64, clean func(), readErr, err error) {
	var remove func()
	// On Linux and Android the copy is read and written through tmp
	// alone: with no name, not even SIGKILL or a phone's low-memory
	// killer can leave this copy of the dump behind.
	tmp, cancel, err := createTemp("", "heapcrunch-spool-", 0o600, unnamedSpool, nil, func(f *os.File) func() {
		remove = func() {
			f.Close()
			if !unnamedSpool {
				os.Remove(f.Name())
			}
		}
		return remove
	})
	if err != nil {
		return nil, 0, nil, nil, fmt.Errorf("%s: cannot make a temporary copy to read it twice (set TMPDIR to a folder with room): %w", name, err)
	}
	clean = func() { cancel(); remove() }
	sw := &spoolWriter{f: tmp}
	n, readErr = io.Copy(sw, from)
	if sw.err != nil {
		clean()
		return nil, 0, nil, nil, fmt.Errorf("%s: cannot make a temporary copy to read it twice: writing %s: %v (set TMPDIR to a folder with room)", name, filepath.Dir(tmp.Name()), unwrapPath(sw.err))
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		clean()
		return nil, 0, nil, nil, err
	}
	// Elsewhere the name goes once the copy is written (Windows cannot
	// remove an open file: there clean does it).
	if !unnamedSpool && runtime.GOOS != "windows" {
		os.Remove(tmp.Name())
	}
	return tmp, n, clean, readErr, nil
}

// readDamage words the error err that ended the reading of an input of
// the given kind after n bytes (decompressed).
func readDamage(name string, kind compress.Kind, n int64, err error) error {
	switch {
	case kind == compress.None:
		return fmt.Errorf("%s: reading at offset %d: %w", name, n, err)
	case errors.Is(err, compress.ErrTrailingData):
		// All of it decompressed: what follows is not gzip.
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%s: truncated or damaged %s data after %d uncompressed bytes: %w", name, kind, n, err)
}

// unnamedSpool says whether a spool file has no name once made: on Linux
// and Android, where it never has one if the file system allows
// (openUnnamed) and tests see it through /proc (other systems remove its
// name once it is written, Windows at the end).
var unnamedSpool = runtime.GOOS == "linux" || runtime.GOOS == "android"

// countReader counts the bytes read from r.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// boundedReader reads the decompressed input r until it goes beyond
// limit(the compressed bytes read), then fails, with over the limit.
type boundedReader struct {
	r     io.Reader
	raw   *countReader
	limit func(int64) int64
	n     int64
	over  int64 // the limit crossed, or 0
}

// errSpoolLimit stops the copy of an input that decompresses beyond its
// limit (boundedReader).
var errSpoolLimit = errors.New("input decompresses beyond its limit")

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if max := b.limit(b.raw.n); max > 0 && b.n > max {
		b.over = max
		return 0, errSpoolLimit
	}
	return n, err
}

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
