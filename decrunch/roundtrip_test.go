package decrunch

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

func crunchBytes(t testing.TB, src []byte, opt crunch.Options) []byte {
	t.Helper()
	var out bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &out, opt); err != nil {
		t.Fatalf("crunch: %v", err)
	}
	return out.Bytes()
}

func decrunchBytes(t testing.TB, b []byte, opt Options) ([]byte, *Stats) {
	t.Helper()
	var out bytes.Buffer
	st, err := Decrunch(bytes.NewReader(b), &out, opt)
	if err != nil {
		t.Fatalf("decrunch: %v", err)
	}
	return out.Bytes(), st
}

func roundTripInputs(t *testing.T) []string {
	var in []string
	for _, f := range []string{"sample.hprof.gz", "secrets.hprof.gz"} {
		if _, err := os.Stat(testutil.Fixture(f)); err == nil {
			in = append(in, testutil.Fixture(f))
		}
	}
	if d := filepath.Join(testutil.Root(), "..", "shared", "corpus"); dirExists(d) {
		in = append(in, testutil.CorpusHPROFs(t)...)
	}
	if len(in) == 0 {
		t.Skip("no dumps")
	}
	return in
}

func dirExists(d string) bool { st, err := os.Stat(d); return err == nil && st.IsDir() }

// TestRoundTripKeepStrings: crunch --keep-strings then decrunch must give a
// dump with the same classes, instances per class, array lengths,
// references, payload sizes and roots by kind.
func TestRoundTripKeepStrings(t *testing.T) {
	for _, p := range roundTripInputs(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := testutil.ReadAll(t, p)
			b := crunchBytes(t, src, crunch.Options{KeepStrings: true})
			out, _ := decrunchBytes(t, b, Options{})
			want, err := heapstat.Summarize(src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := heapstat.Summarize(out)
			if err != nil {
				t.Fatalf("output does not read back: %v", err)
			}
			if d := heapstat.Diff(want, got); len(d) > 0 {
				if len(d) > 20 {
					d = d[:20]
				}
				t.Fatalf("round trip differs:\n%s", strings.Join(d, "\n"))
			}
			t.Logf("%d bytes -> %d BMD -> %d HPROF, %d objects", len(src), len(b), len(out), got.Objects)
		})
	}
}
