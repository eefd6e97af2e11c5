// Package testutil finds the shared corpus of real dumps and the project's
// own fixtures for tests, and reads them decompressed.
package testutil

import (
	"bytes"
	"io"
	"os"
	"os/exec"
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
	d, ok := corpusDir()
	if !ok {
		Skip(t, "shared corpus not found at %s: skipping tests on real third-party dumps", d)
	}
	return d
}

// corpusDir returns ../shared/corpus beside the module, and whether it
// exists.
func corpusDir() (string, bool) {
	d := filepath.Join(Root(), "..", "shared", "corpus")
	_, err := os.Stat(d)
	return d, err == nil
}

// Skip skips the test for want of something outside the repository (the
// shared corpus, a JDK, an analyzer), except in CI (CI=true), where a
// missing tool is a broken CI and the test fails.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("CI=true: "+format, args...)
	}
	t.Skipf(format, args...)
}

// inCI reports whether the tests run in CI (CI=true), where whatever
// they need outside the repository must be there.
func inCI() bool { return os.Getenv("CI") == "true" }

// SharedTool returns the path of a tool under ../shared/tools (e.g.
// "shark/shark-summary.sh"), or skips the test (fails in CI) when it or
// java is absent.
func SharedTool(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Root(), "..", "shared", "tools", rel)
	if _, err := os.Stat(p); err != nil {
		Skip(t, "%s not found", p)
	}
	if _, err := exec.LookPath("java"); err != nil {
		Skip(t, "java not found: %s needs it", rel)
	}
	return p
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
		if e.IsDir() {
			continue // e.g. a .hwcache folder that VisualVM left beside a dump
		}
		if strings.Contains(n, "hprof") || strings.HasSuffix(n, ".bin") {
			out = append(out, filepath.Join(d, n))
		}
	}
	return out
}

// SmallDumps reads the named fixtures and the corpus HPROF dumps under 64
// MiB, uncompressed, by base name: the inputs of the tests that compare two
// ways of doing the same. Without the corpus, the fixtures alone, and the
// test logs it (in CI, where the corpus must be, it fails).
func SmallDumps(t testing.TB, fixtures ...string) map[string][]byte {
	t.Helper()
	dumps := map[string][]byte{}
	for _, name := range fixtures {
		dumps[name] = ReadAll(t, Fixture(name))
	}
	if d, ok := corpusDir(); !ok {
		if inCI() {
			t.Fatalf("CI=true: shared corpus not found at %s", d)
		}
		t.Logf("shared corpus not found at %s: the fixtures alone", d)
		return dumps
	}
	for _, p := range CorpusHPROFs(t) {
		if d := ReadAll(t, p); len(d) < 64<<20 {
			dumps[filepath.Base(p)] = d
		}
	}
	return dumps
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

// BenchDumpEnv names the variable that gives benchmarks a dump of one's
// own: an uncompressed HPROF, e.g. from scripts/genbig.sh.
const BenchDumpEnv = "HEAPCRUNCH_BENCH_DUMP"

// BenchDump returns the dump a benchmark reads, in memory: the file
// $HEAPCRUNCH_BENCH_DUMP names when it is set, else the sample fixture.
func BenchDump(tb testing.TB) []byte {
	tb.Helper()
	if p := os.Getenv(BenchDumpEnv); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		return data
	}
	return ReadAll(tb, Fixture("sample.hprof.gz"))
}
