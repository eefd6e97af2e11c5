package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestRewriteCut: a dump cut inside a record is an error that names the
// input, and leaves no output.
func TestRewriteCut(t *testing.T) {
	dir := t.TempDir()
	src := testutil.ReadAll(t, testutil.Fixture("sample32.hprof.gz"))
	in, out := filepath.Join(dir, "in.hprof"), filepath.Join(dir, "out.hprof")
	if err := os.WriteFile(in, src[:len(src)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewrite(in, out); err == nil || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), in) {
		t.Errorf("error %v, want a record of %s cut short", err, in)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output left behind: %v", err)
	}
}
