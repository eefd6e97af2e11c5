package decrunch

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	canon "github.com/heapcrunch/heapcrunch/names"
)

// TestNamesWanted: a table that keeps only the names a file hashed
// (ReadFileNames, Want) decrunches it to the same HPROF, byte for byte, with
// the same names recovered from the same sources, as a table that keeps
// every candidate; it keeps fewer, each of them a hash of the file. The
// file is the libuser fixture crunched with default options, its names
// from the library's and the program's JARs, as TestNameRecoveryLibUser.
func TestNamesWanted(t *testing.T) {
	dir := testutil.Fixture("libuser")
	b := crunchBytes(t, testutil.ReadAll(t, filepath.Join(dir, "libuser.hprof.gz")), crunch.Options{})
	fn, err := ReadFileNames(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	want := fn.Hashed
	hashed, clear := 0, map[uint64]bool{}
	bmdtest.Records(t, b, false, func(rec *bmd.Record) {
		if rec.Kind == bmd.KindHashedString {
			hashed++
			if !want[rec.Hash] {
				t.Errorf("hashed name %#x at offset %d not wanted", rec.Hash, rec.Offset)
			}
		}
		if rec.Kind == bmd.KindString {
			clear[canon.Hash(rec.Text)] = true
			if !fn.Holds(string(rec.Text)) {
				t.Errorf("name %q at offset %d in the clear not held", rec.Text, rec.Offset)
			}
		}
	})
	if hashed == 0 || len(want) != hashed {
		t.Fatalf("%d hashes wanted, %d hashed names in the file (want as many, and some)", len(want), hashed)
	}
	if len(clear) == 0 || len(fn.Clear) != len(clear) {
		t.Fatalf("%d names in the clear held, %d in the file (want as many, and some)", len(fn.Clear), len(clear))
	}
	if fn.Holds("org.example.NotInTheDump") {
		t.Error("holds a name the dump does not have")
	}
	// HotSpot 17 names classes slashed; a mapping names them dotted. The
	// library's class is hashed in a default crunch, the JDK's in the
	// clear; a class the dump does not have is not held.
	for name, held := range map[string]bool{"org.example.lib.Node": true, "java.lang.String": true, "org.example.lib.Absent": false, "org": false} {
		if got := fn.HoldsClass(name); got != held {
			t.Errorf("HoldsClass(%q) = %v, want %v", name, got, held)
		}
	}
	if !fn.Hashed[canon.HashString("org/example/lib/Node")] || !fn.Clear[canon.HashString("java/lang/String")] {
		t.Error("test premise: Node hashed and String in the clear, slashed")
	}

	table := func(wanted map[uint64]bool) *NameTable {
		names := NewNameTable()
		names.Want(wanted)
		for _, p := range []string{filepath.Join(dir, "lib.jar"), filepath.Join(dir, "libuser-app.jar")} {
			add := names.Source(filepath.Base(p))
			if _, err := apkstrings.ReadJAR(p, func(s string) { apkstrings.Spellings(s, add) }); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		return names
	}
	all, some := table(nil), table(want)
	outAll, stAll := decrunchBytes(t, b, Options{Names: all})
	outSome, stSome := decrunchBytes(t, b, Options{Names: some})
	if !bytes.Equal(outAll, outSome) {
		t.Error("the HPROF decrunched with the wanted names differs from the one with every candidate")
	}
	if stAll.Recovered == 0 || stSome.Recovered != stAll.Recovered || stSome.Missing != stAll.Missing {
		t.Errorf("recovered %d, missing %d with the wanted names; %d and %d with every candidate", stSome.Recovered, stSome.Missing, stAll.Recovered, stAll.Missing)
	}
	for src, n := range all.RecoveredFrom() {
		if some.RecoveredFrom()[src] != n {
			t.Errorf("%s: %d names recovered with the wanted names, %d with every candidate", src, some.RecoveredFrom()[src], n)
		}
	}
	if some.Candidates != all.Candidates || some.Len() >= all.Len() || some.Len() > len(want) {
		t.Errorf("wanted: %d kept of %d candidates; every candidate: %d kept of %d; %d hashes wanted", some.Len(), some.Candidates, all.Len(), all.Candidates, len(want))
	}
	for h, e := range some.byHash {
		if !want[h] || canon.HashString(e.text) != h {
			t.Errorf("kept %q under %#x, which the file did not hash", e.text, h)
		}
	}
	t.Logf("%d candidates, %d kept of every one, %d of the %d wanted", all.Candidates, all.Len(), some.Len(), len(want))
}

// TestNamesWantedRefuses: ReadFileNames says what is wrong with a file that
// is not a whole version 2 BMD file.
func TestNamesWantedRefuses(t *testing.T) {
	b := crunchBytes(t, testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz")), crunch.Options{})
	for name, in := range map[string][]byte{"empty": nil, "not BMD": []byte("JAVA PROFILE 1.0.2\x00"), "cut": b[:len(b)/2]} {
		if _, err := ReadFileNames(bytes.NewReader(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestNamesWantedOtherHash: a version 2 file whose metadata names the Java
// hash, which ForHash searches with its Java-hash index, wants every
// candidate (nil): its hashes are not those Want compares.
func TestNamesWantedOtherHash(t *testing.T) {
	var buf bytes.Buffer
	w, err := bmd.NewWriter(&buf, &bmd.Metadata{IDSize: 4, Hash: bmd.HashJava})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.HashedString(7, 12345); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := ReadFileNames(bytes.NewReader(buf.Bytes()))
	if err != nil || want != nil {
		t.Errorf("a file hashed with %q: wanted %v, error %v; want nil, nil", bmd.HashJava, want, err)
	}
}
