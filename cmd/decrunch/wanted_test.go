package main

import (
	"bytes"
	"fmt"
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
	all := tableOf(t, jars)
	var want bytes.Buffer
	st, err := decrunch.Decrunch(bytes.NewReader(b), &want, decrunch.Options{Names: all})
	if err != nil {
		t.Fatal(err)
	}
	fn, err := decrunch.ReadFileNames(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	hashed := fn.Hashed

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
		m, stderr := runStats(t, d, c.stdin, args, want.Bytes(), stats, "every candidate ("+c.name+")")
		read, kept := atoi(t, m[1]), atoi(t, m[2])
		if read != all.Candidates || kept == 0 || kept > len(hashed) || kept >= all.Len() {
			t.Errorf("%s: %d candidates read, %d kept; want %d read, 1 to %d kept (%d distinct)", c.name, read, kept, all.Candidates, len(hashed), all.Len())
		}
		if missing := strconv.FormatUint(st.Missing, 10) + " not recovered"; !strings.Contains(stderr, missing) {
			t.Errorf("%s: --stats: %q, want %q", c.name, stderr, missing)
		}
	}
	r := d.Run(t, nil, decrunchBin, "in.bmd", "--stats", "-o", "bare.hprof")
	clitest.ExpectOK(t, r)
	if !regexp.MustCompile(`candidates: \d+ read, \d+ distinct, `).MatchString(r.Stderr) {
		t.Errorf("no name source, --stats: %q", r.Stderr)
	}
}

// tableOf returns a table of every candidate decrunch reads with the
// JARs as name sources: the built-in names and the JARs' names, spelled
// every way.
func tableOf(t *testing.T, jars []string) *decrunch.NameTable {
	t.Helper()
	names := decrunch.NewNameTable()
	builtin := names.Source("built-in names")
	for _, n := range decrunch.BuiltinNames() {
		apkstrings.Spellings(n, builtin)
	}
	for _, p := range jars {
		add := names.Source(p)
		if _, err := apkstrings.ReadJAR(p, func(s string) { apkstrings.Spellings(s, add) }); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// runStats runs decrunch in d with args (which hold --stats and -o
// out.hprof) and stdin, checks that it writes want, decrunched with what
// says, and returns the submatches of stats in its standard error, and
// that standard error.
func runStats(t *testing.T, d *clitest.Dir, stdin []byte, args []string, want []byte, stats *regexp.Regexp, what string) ([]string, string) {
	t.Helper()
	r := d.Run(t, stdin, decrunchBin, args...)
	clitest.ExpectOK(t, r)
	if !bytes.Equal(d.Read(t, "out.hprof"), want) {
		t.Errorf("the HPROF differs from the one decrunched with %s", what)
	}
	m := stats.FindStringSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("%s: --stats: %q", what, r.Stderr)
	}
	return m, r.Stderr
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMappingWanted: with --mapping, decrunch keeps only the mapping's
// classes whose names the file holds (loadMapping), as --stats says, and
// writes what the whole mapping gives, byte for byte. The libuser fixture
// is crunched with default options, so that the library's names are
// hashed and the JDK's in the clear; its names come from its JARs. The
// mapping renames its class org.example.lib.Node (hashed) and
// java.lang.Thread (in the clear), and names 500 classes the dump does
// not have. Without name sources the hashed class is kept all the same
// (its hash is the file's), but not recovered, so not renamed. A file cut
// short and salvaged keeps the whole mapping.
func TestMappingWanted(t *testing.T) {
	dir := testutil.Fixture("libuser")
	jars := []string{filepath.Join(dir, "lib.jar"), filepath.Join(dir, "libuser-app.jar")}
	b := crunchBytes(t, testutil.ReadAll(t, filepath.Join(dir, "libuser.hprof.gz")), crunch.Options{})
	var text strings.Builder
	text.WriteString("# compiler: R8\ncom.example.Graph -> org.example.lib.Node:\n    java.lang.String title -> label\n    com.example.Graph successor -> next\n    12:14:void visit(int) -> a\n")
	text.WriteString("com.example.Worker -> java.lang.Thread:\n    java.lang.String label -> name\n")
	for i := range 500 {
		fmt.Fprintf(&text, "com.example.Absent%d -> a.b%d:\n    int count -> a\n    1:2:void run():3:4 -> b\n", i, i)
	}
	whole, err := apkstrings.ParseMapping(strings.NewReader(text.String()))
	if err != nil {
		t.Fatal(err)
	}
	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", b)
	d.Write(t, "mapping.txt", []byte(text.String()))
	stats := regexp.MustCompile(`mapping: (\d+) class lines read, (\d+) classes kept, renamed (\d+) class`)
	for _, c := range []struct {
		name string
		jars []string
	}{{"with the JARs", jars}, {"without name sources", nil}} {
		args := []string{"in.bmd", "--mapping", "mapping.txt", "--stats", "-o", "out.hprof", "--force"}
		for _, p := range c.jars {
			args = append(args, "--jar", p)
		}
		var want bytes.Buffer
		st, err := decrunch.Decrunch(bytes.NewReader(b), &want, decrunch.Options{Names: tableOf(t, c.jars), Mapping: whole})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := runStats(t, d, nil, args, want.Bytes(), stats, "the whole mapping ("+c.name+")")
		if lines, kept, renamed := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3]); lines != 502 || kept != 2 || uint64(renamed) != st.RenamedClasses {
			t.Errorf("%s: %d class lines, %d classes kept, %d class names renamed; want 502, 2, %d", c.name, lines, kept, renamed, st.RenamedClasses)
		}
		if c.jars != nil && st.RenamedClasses <= 3 || c.jars == nil && st.RenamedClasses != 3 {
			t.Errorf("%s: %d class names renamed by the whole mapping; want 3 (the Thread class), and more with the Node class recovered", c.name, st.RenamedClasses)
		}
	}

	// A file cut short, with --salvage: its names cannot be read to its
	// end, so every class of the mapping is kept, and every candidate.
	cut := b[:len(b)*3/4]
	d.Write(t, "cut.bmd", cut)
	var want bytes.Buffer
	st, err := decrunch.Decrunch(bytes.NewReader(cut), &want, decrunch.Options{Names: tableOf(t, jars), Mapping: whole, Salvage: true})
	if err != nil || st.Salvaged == nil {
		t.Fatalf("test premise: the cut file salvaged: %v, %v", st.Salvaged, err)
	}
	args := []string{"--salvage", "cut.bmd", "--mapping", "mapping.txt", "--stats", "-o", "salvaged.hprof"}
	for _, p := range jars {
		args = append(args, "--jar", p)
	}
	r := d.Run(t, nil, decrunchBin, args...)
	if r.Code != 3 || !bytes.Equal(d.Read(t, "salvaged.hprof"), want.Bytes()) {
		t.Errorf("cut file, --salvage: exit %d (want 3), or the HPROF differs from the one salvaged with the whole mapping: %s", r.Code, r.Stderr)
	}
	if m := stats.FindStringSubmatch(r.Stderr); m == nil || m[1] != "502" || m[2] != "502" {
		t.Errorf("cut file, --salvage: --stats %q, want 502 class lines read and 502 classes kept", r.Stderr)
	}
}
