package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/internal/clitest"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestNamesWanted: with name sources, decrunch keeps only the candidates
// whose hash the file holds (wantedNames), as --stats says, and writes
// what a table of every candidate gives, byte for byte: the libuser
// fixture crunched with default options, its names from the library's
// and the program's JARs, plain and from standard input (spooled), and
// the same with no name source.
func TestNamesWanted(t *testing.T) {
	dir := testutil.Fixture("libuser")
	jars := []string{filepath.Join(dir, "lib.jar"), filepath.Join(dir, "libuser-app.jar")}
	b := crunchBytes(t, testutil.ReadAll(t, filepath.Join(dir, "libuser.hprof.gz")), crunch.Options{})
	all := decrunch.NewNameTable()
	builtin := all.Source("built-in names")
	for _, n := range decrunch.BuiltinNames() {
		apkstrings.Spellings(n, builtin)
	}
	for _, p := range jars {
		add := all.Source(p)
		if _, err := apkstrings.ReadJAR(p, func(s string) { apkstrings.Spellings(s, add) }); err != nil {
			t.Fatal(err)
		}
	}
	var want bytes.Buffer
	st, err := decrunch.Decrunch(bytes.NewReader(b), &want, decrunch.Options{Names: all})
	if err != nil {
		t.Fatal(err)
	}
	hashed, err := decrunch.NamesWanted(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}

	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", b)
	stats := regexp.MustCompile(`candidates: (\d+) read, (\d+) of them names the file hashed, 0 hash collisions`)
	for _, c := range []struct {
		name  string
		stdin []byte
		in    string
	}{{"file", nil, "in.bmd"}, {"standard input", b, "-"}} {
		args := []string{c.in, "--stats", "-o", "out.hprof", "--force"}
		for _, p := range jars {
			args = append(args, "--jar", p)
		}
		r := d.Run(t, c.stdin, decrunchBin, args...)
		clitest.ExpectOK(t, r)
		if !bytes.Equal(d.Read(t, "out.hprof"), want.Bytes()) {
			t.Errorf("%s: the HPROF differs from the one decrunched with every candidate", c.name)
		}
		m := stats.FindStringSubmatch(r.Stderr)
		if m == nil {
			t.Fatalf("%s: --stats: %q", c.name, r.Stderr)
		}
		read, kept := atoi(t, m[1]), atoi(t, m[2])
		if read != all.Candidates || kept == 0 || kept > len(hashed) || kept >= all.Len() {
			t.Errorf("%s: %d candidates read, %d kept; want %d read, 1 to %d kept (%d distinct)", c.name, read, kept, all.Candidates, len(hashed), all.Len())
		}
		if missing := strconv.FormatUint(st.Missing, 10) + " not recovered"; !strings.Contains(r.Stderr, missing) {
			t.Errorf("%s: --stats: %q, want %q", c.name, r.Stderr, missing)
		}
	}
	r := d.Run(t, nil, decrunchBin, "in.bmd", "--stats", "-o", "bare.hprof")
	clitest.ExpectOK(t, r)
	if !regexp.MustCompile(`candidates: \d+ read, \d+ distinct, `).MatchString(r.Stderr) {
		t.Errorf("no name source, --stats: %q", r.Stderr)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
