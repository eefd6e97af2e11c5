package apkstrings

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// jmodMagic starts a JDK .jmod file; a zip archive follows it.
const jmodMagic = "JM\x01\x00"

// ReadAPK emits the strings of every classes*.dex entry of an APK, as
// [ReadDEX] does, in multi-dex order (classes.dex, classes2.dex, ...).
// Entries named <module>/dex/classes*.dex, as in an Android App Bundle, are
// read too. An archive without any DEX entry yields nothing and no error; a
// file that is not a zip archive is a *FormatError.
//
// A malformed DEX entry does not stop the others from being read: ReadAPK
// returns the number of strings emitted from all entries together with the
// first error met, whose Entry names the entry.
func ReadAPK(path string, emit func(string)) (int, error) {
	f, a, _, err := openZip(path, false)
	if err != nil {
		return 0, err
	}
	defer f.Close()

	type dexEntry struct {
		f   *zip.File
		dir string
		num int
	}
	var dexes []dexEntry
	for _, e := range a.zr.File {
		if dir, num, ok := dexEntryName(e.Name); ok {
			dexes = append(dexes, dexEntry{e, dir, num})
		}
	}
	sort.SliceStable(dexes, func(i, j int) bool {
		if dexes[i].dir != dexes[j].dir {
			return dexes[i].dir < dexes[j].dir
		}
		return dexes[i].num < dexes[j].num
	})

	r := &reader{path: path, emit: emit, inflateMax: inflateBound(a.size)}
	for _, d := range dexes {
		data, err := r.readEntry(a, d.f, d.f.Name, r.buf)
		r.buf = data[:0]
		if err != nil {
			r.fail(err)
			continue
		}
		n, err := readDEX(data, emit)
		r.count += n
		if err != nil {
			r.fail(withLocation(err, path, d.f.Name))
		}
	}
	return r.count, r.err
}

// dexEntryName reports whether an APK entry is a DEX file of the app, and
// gives its directory and its number in multi-dex order (classes.dex is 1).
func dexEntryName(name string) (dir string, num int, ok bool) {
	i := strings.LastIndexByte(name, '/')
	dir, base := name[:i+1], name[i+1:]
	if dir != "" {
		// <module>/dex/ of an app bundle.
		m, rest, found := strings.Cut(dir, "/")
		if !found || m == "" || rest != "dex/" {
			return "", 0, false
		}
	}
	digits, found := strings.CutPrefix(base, "classes")
	if !found {
		return "", 0, false
	}
	digits, found = strings.CutSuffix(digits, ".dex")
	if !found {
		return "", 0, false
	}
	if digits == "" {
		return dir, 1, true
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return "", 0, false
		}
	}
	num, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, false
	}
	return dir, num, true
}

// ReadJAR emits the CONSTANT_Utf8 strings (see [ReadClass]) of every .class
// entry of a JAR file, of an Android AAR (through its inner classes.jar and
// libs/*.jar, which any archive may have), of a JDK .jmod (a zip archive after
// the 4-byte magic "JM\x01\x00", whose classes are under classes/), or of a
// directory tree of .class files. A single .class file is accepted too.
//
// For each .class entry it also emits the class name derived from the entry's
// path, such as "com/a/B" for "com/a/B.class"; the prefixes of multi-release
// JARs (META-INF/versions/N/), Spring Boot (BOOT-INF/classes/), WARs
// (WEB-INF/classes/) and jmods (classes/) are left out.
//
// A malformed entry does not stop the others from being read: ReadJAR returns
// the number of strings emitted from all entries together with the first
// error met. A file that is neither a zip archive, a jmod nor a class file is
// a *FormatError.
func ReadJAR(path string, emit func(string)) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	r := &reader{path: path, emit: emit}
	if fi.IsDir() {
		r.readClassDir(path)
		return r.count, r.err
	}

	f, a, jmod, err := openZip(path, true)
	if err != nil {
		return 0, err
	}
	if a != nil {
		r.inflateMax = inflateBound(a.size)
	}
	defer f.Close()
	if a == nil {
		// A single class file.
		data, err := r.readFile(f, "")
		if err != nil {
			return 0, err
		}
		n, err := ReadClass(data, emit)
		return n, withLocation(err, path, "")
	}
	r.readJarZip(a, jmod, "", true)
	return r.count, r.err
}

// reader carries the state of one ReadAPK or ReadJAR call.
type reader struct {
	path  string
	emit  func(string)
	count int
	err   error  // first error met
	buf   []byte // reused for entries that are done with before the next
	// inflated counts the bytes of the entries read, nested archives'
	// included, which inflateMax bounds.
	inflated, inflateMax int64
}

// A zip entry of a few hundred KiB can inflate to maxEntrySize, and the
// strings of a DEX file stay in the name table: a 1 MB APK with a 300 MB
// DEX file of distinct strings took 1.4 GB, and an APK can hold many.
// The entries read from an archive may inflate to at most
// maxInflateRatio times its size plus maxInflateBase: real archives
// inflate to at most 2.4 times (the corpus APKs and JAR, java.base.jmod),
// their entries to at most 8.2.
const (
	maxInflateRatio = 32
	maxInflateBase  = 64 << 20
)

// inflateBound returns the bytes the entries of an archive of size bytes
// may inflate to.
func inflateBound(size int64) int64 { return maxInflateRatio*max(size, 0) + maxInflateBase }

// entryHint is how much to allocate up front for a zip entry in an archive of
// zipSize bytes. The sizes in the entry's header are trusted only as far as
// the archive could hold the compressed bytes and they could plausibly
// expand, so that a corrupted header cannot make us allocate much; the buffer
// grows if the data really is larger.
func entryHint(e *zip.File, zipSize int64) int {
	avail := min(e.CompressedSize64, uint64(max(zipSize, 0)))
	return int(min(e.UncompressedSize64, avail*8+64<<10, maxEntrySize))
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// zipArchive is an open zip archive.
type zipArchive struct {
	zr   *zip.Reader
	ra   io.ReaderAt // the bytes of the archive
	size int64
	// spent adds up the compressed sizes of the entries read. Entries of a
	// well-formed archive do not overlap, so it stays below size; entries
	// that all point at the same compressed bytes (a zip bomb) do not.
	spent uint64
}

// charge accounts for reading entry e, and fails when the entries read so
// far need more compressed bytes than the archive has.
func (r *reader) charge(a *zipArchive, e *zip.File, name string) error {
	a.spent += min(e.CompressedSize64, 1<<62)
	if a.spent > uint64(a.size) {
		return &FormatError{Path: r.path, Entry: name, Offset: -1,
			Msg: fmt.Sprintf("entries overlap: %d compressed bytes read from an archive of %d", a.spent, a.size)}
	}
	return nil
}

// openZip opens the zip archive at path and returns the file and the
// archive. With forJAR, the magic of a jmod is skipped first, and a class
// file yields a nil archive instead of an error.
func openZip(path string, forJAR bool) (f *os.File, a *zipArchive, jmod bool, err error) {
	f, err = os.Open(path)
	if err != nil {
		return nil, nil, false, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, false, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, false, &FormatError{Path: path, Offset: -1, Msg: "is a directory, not a zip archive"}
	}
	size := fi.Size()
	var ra io.ReaderAt = f
	if forJAR {
		var magic [4]byte
		n, _ := f.ReadAt(magic[:], 0)
		switch {
		case n == 4 && string(magic[:]) == "\xCA\xFE\xBA\xBE":
			return f, nil, false, nil
		case n == 4 && string(magic[:]) == jmodMagic:
			jmod = true
			size -= int64(len(jmodMagic))
			ra = io.NewSectionReader(f, int64(len(jmodMagic)), size)
		}
	}
	zr, err := newZipReader(ra, size)
	if err != nil {
		f.Close()
		return nil, nil, false, zipError(err, path, "")
	}
	return f, &zipArchive{zr: zr, ra: ra, size: size}, jmod, nil
}

// newZipReader is zip.NewReader, ignoring that some entry name is not a safe
// path (nothing is written to disk here).
func newZipReader(ra io.ReaderAt, size int64) (*zip.Reader, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil && errors.Is(err, zip.ErrInsecurePath) && zr != nil {
		err = nil
	}
	return zr, err
}

// zipError turns an error of archive/zip into a *FormatError; errors of the
// file system are returned as they are.
func zipError(err error, path, entry string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &FormatError{Path: path, Entry: entry, Offset: -1, Msg: "not a zip archive: " + err.Error()}
}

// readEntry reads an entry of archive a into buf (reusing its storage) and
// returns it.
func (r *reader) readEntry(a *zipArchive, e *zip.File, name string, buf []byte) ([]byte, error) {
	if err := r.charge(a, e, name); err != nil {
		return buf[:0], err
	}
	if e.UncompressedSize64 > maxEntrySize {
		return buf[:0], &FormatError{Path: r.path, Entry: name, Offset: -1,
			Msg: fmt.Sprintf("entry of %d bytes is larger than the %d MiB limit", e.UncompressedSize64, maxEntrySize>>20)}
	}
	rc, err := e.Open()
	if err != nil {
		return buf[:0], &FormatError{Path: r.path, Entry: name, Offset: -1, Msg: "cannot open entry: " + err.Error()}
	}
	defer rc.Close()
	if hint := entryHint(e, a.size); cap(buf) < hint {
		buf = make([]byte, 0, hint)
	}
	left := r.inflateMax - r.inflated
	buf, err = readAllLimit(rc, buf[:0], int(min(maxEntrySize, left)))
	r.inflated += int64(len(buf))
	if err != nil && left < maxEntrySize && int64(len(buf)) > left {
		return buf[:0], &FormatError{Path: r.path, Entry: name, Offset: -1,
			Msg: fmt.Sprintf("the entries read inflate to more than %d bytes (%d times the archive's size and 64 MiB): a zip bomb", r.inflateMax, maxInflateRatio)}
	}
	if err != nil {
		// The offset would be within the entry's uncompressed content,
		// which the user cannot look up: say how far the reading went.
		return buf[:0], &FormatError{Path: r.path, Entry: name, Offset: -1,
			Msg: fmt.Sprintf("damaged entry: %v, after %d bytes of its content", err, len(buf))}
	}
	return buf, nil
}

// readAllLimit appends everything rd yields to buf, failing beyond limit bytes.
func readAllLimit(rd io.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return buf, fmt.Errorf("more than %d MiB", limit>>20)
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if len(buf) > limit {
				return buf, fmt.Errorf("more than %d MiB", limit>>20)
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// readFile reads an open file into r.buf, at most maxEntrySize bytes.
func (r *reader) readFile(f *os.File, entry string) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxEntrySize {
		return nil, &FormatError{Path: r.path, Entry: entry, Offset: -1,
			Msg: fmt.Sprintf("file of %d bytes is larger than the %d MiB limit", fi.Size(), maxEntrySize>>20)}
	}
	if int64(cap(r.buf)) < fi.Size()+1 {
		r.buf = make([]byte, 0, fi.Size()+1)
	}
	data, err := readAllLimit(f, r.buf[:0], maxEntrySize)
	r.buf = data[:0]
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, &FormatError{Path: r.path, Entry: entry, Offset: -1, Msg: err.Error()}
	}
	return data, nil
}

// readJarZip reads the classes of a JAR, AAR or jmod. prefix is put before
// entry names in errors (for a nested archive); nested archives are followed
// only when nested is set, so one level deep.
func (r *reader) readJarZip(a *zipArchive, jmod bool, prefix string, nested bool) {
	for _, e := range a.zr.File {
		name := e.Name
		if strings.HasSuffix(name, "/") {
			continue
		}
		if nested && !jmod && isNestedJar(name) {
			r.readNestedJar(a, e, prefix+name)
			continue
		}
		cls, ok := classNameOf(name, jmod)
		if !ok {
			continue
		}
		r.emit(cls)
		r.count++
		data, err := r.readEntry(a, e, prefix+name, r.buf)
		r.buf = data[:0]
		if err != nil {
			r.fail(err)
			continue
		}
		n, err := ReadClass(data, r.emit)
		r.count += n
		if err != nil {
			r.fail(withLocation(err, r.path, prefix+name))
		}
	}
}

// isNestedJar reports whether an entry is one of the JARs an AAR carries.
func isNestedJar(name string) bool {
	if name == "classes.jar" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "libs/")
	return ok && !strings.Contains(rest, "/") && len(rest) > len(".jar") && strings.HasSuffix(rest, ".jar")
}

// readNestedJar reads the classes of a JAR stored inside another archive. A
// JAR stored without compression is read in place; a compressed one is read
// into memory.
func (r *reader) readNestedJar(outer *zipArchive, e *zip.File, name string) {
	var ra io.ReaderAt
	var size int64
	if e.Method == zip.Store && e.Flags&0x1 == 0 && e.CompressedSize64 == e.UncompressedSize64 && e.CompressedSize64 < 1<<62 {
		if err := r.charge(outer, e, name); err != nil {
			r.fail(err)
			return
		}
		off, err := e.DataOffset()
		if err != nil {
			r.fail(&FormatError{Path: r.path, Entry: name, Offset: -1, Msg: "cannot open entry: " + err.Error()})
			return
		}
		size = int64(e.CompressedSize64)
		ra = io.NewSectionReader(outer.ra, off, size)
	} else {
		data, err := r.readEntry(outer, e, name, nil)
		if err != nil {
			r.fail(err)
			return
		}
		size = int64(len(data))
		ra = bytes.NewReader(data)
	}
	zr, err := newZipReader(ra, size)
	if err != nil {
		r.fail(zipError(err, r.path, name))
		return
	}
	r.readJarZip(&zipArchive{zr: zr, ra: ra, size: size}, false, name+"!/", false)
}

// classNameOf derives the internal class name from the path of a .class entry
// ("com/a/B.class" gives "com/a/B").
func classNameOf(name string, jmod bool) (string, bool) {
	name, ok := strings.CutSuffix(name, ".class")
	if !ok {
		return "", false
	}
	if jmod {
		if name, ok = strings.CutPrefix(name, "classes/"); !ok {
			return "", false
		}
	} else if rest, ok := strings.CutPrefix(name, "META-INF/versions/"); ok {
		v, after, found := strings.Cut(rest, "/")
		if found && v != "" && strings.Trim(v, "0123456789") == "" {
			name = after
		}
	} else if rest, ok := strings.CutPrefix(name, "BOOT-INF/classes/"); ok {
		name = rest
	} else if rest, ok := strings.CutPrefix(name, "WEB-INF/classes/"); ok {
		name = rest
	}
	if name == "" || strings.HasSuffix(name, "/") {
		return "", false
	}
	return name, true
}

// readClassDir reads every .class file below root.
func (r *reader) readClassDir(root string) {
	walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			r.fail(err)
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".class") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			r.fail(err)
			return nil
		}
		rel = filepath.ToSlash(rel)
		cls, ok := classNameOf(rel, false)
		if !ok {
			return nil
		}
		r.emit(cls)
		r.count++
		f, err := os.Open(p)
		if err != nil {
			r.fail(err)
			return nil
		}
		data, err := r.readFile(f, rel)
		f.Close()
		if err != nil {
			r.fail(err)
			return nil
		}
		n, err := ReadClass(data, r.emit)
		r.count += n
		if err != nil {
			r.fail(withLocation(err, root, rel))
		}
		return nil
	})
	if walkErr != nil {
		r.fail(walkErr)
	}
}
