// Package testutil finds the shared corpus of real dumps and the project's
// own fixtures for tests, and reads them decompressed.
package testutil

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/compress"
)

// Root returns the module's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CorpusDir returns ../shared/corpus beside the module, or skips the test
// when it is absent (a fresh clone outside the workplace has none).
func CorpusDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(Root(), "..", "shared", "corpus")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("shared corpus not found at %s: skipping tests on real third-party dumps", d)
	}
	return d
}

// CorpusHPROFs lists the HPROF dumps of the shared corpus (skipping when
// absent).
func CorpusHPROFs(t testing.TB) []string {
	t.Helper()
	d := CorpusDir(t)
	ents, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.Contains(n, "hprof") || strings.HasSuffix(n, ".bin") {
			out = append(out, filepath.Join(d, n))
		}
	}
	return out
}

// Fixture returns the path of a file under testdata/ at the module root.
func Fixture(name string) string { return filepath.Join(Root(), "testdata", name) }

// ReadAll reads a whole file, undoing gzip, bzip2 or zstd compression.
func ReadAll(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _, err := compress.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return buf.Bytes()
}
