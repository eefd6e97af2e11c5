package decrunch

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestPrivacyDictionary: a default BMD of the planted-secrets dump gives a
// dictionary attack nothing. HotSpot writes the text of every string literal
// of the loaded code as a STRING record (the planted SECRET-STRING-7f3a9c
// among them); were its hash in the file, decrunch --strings secrets.txt
// would confirm the guess. Nothing refers to those records, so crunch
// leaves them out, and a name table of every planted value recovers none.
func TestPrivacyDictionary(t *testing.T) {
	f, err := os.Open(testutil.Fixture("gen/secrets.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := NewNameTable()
	add := names.Source("secrets")
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if c := strings.Split(sc.Text(), "\t"); len(c) >= 3 && !strings.HasPrefix(c[0], "#") {
			add(c[2])
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d secrets read", n)
	}
	src := testutil.ReadAll(t, testutil.Fixture("secrets.hprof.gz"))
	if !strings.Contains(string(src), "SECRET-STRING-7f3a9c") {
		t.Fatal("the planted string literal is not in the dump")
	}
	for _, opt := range []crunch.Options{{}, {HashPlatformNames: true}} {
		_, st := decrunchBytes(t, crunchBytes(t, src, opt), Options{Names: names})
		if st.Recovered != 0 {
			t.Errorf("%+v: a dictionary of the %d planted secrets recovered %d names", opt, n, st.Recovered)
		}
	}
}
