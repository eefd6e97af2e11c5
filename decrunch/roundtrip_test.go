package decrunch

import (
	"bytes"
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

// roundTripInputs returns the fixture dumps and the corpus dumps. Without
// the shared corpus, its subtest "shared corpus" skips (fails with
// CI=true), so that a round trip of the fixtures alone says so.
func roundTripInputs(t *testing.T) []string {
	in := []string{testutil.Fixture("sample.hprof.gz"), testutil.Fixture("secrets.hprof.gz")}
	t.Run("shared corpus", func(t *testing.T) {
		in = append(in, testutil.CorpusHPROFs(t)...)
	})
	return in
}

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

// layoutInputs returns roundTripInputs and the fixtures of other layouts
// and JVMs: 4-byte IDs, 8-byte IDs without compressed references, 16-byte
// alignment, ZGC and Shenandoah (objects not in address order), and JDK
// 25's dump by two dumper threads, with elements that name objects it
// leaves out.
func layoutInputs(t *testing.T) []string {
	return append(roundTripInputs(t), testutil.Fixture("sample32.hprof.gz"),
		testutil.Fixture("sample-nocoops.hprof.gz"), testutil.Fixture("sample-align16.hprof.gz"),
		testutil.Fixture("sample-zgc.hprof.gz"), testutil.Fixture("sample-shenandoah.hprof.gz"),
		testutil.Fixture("sample-jdk25.hprof.gz"))
}

// TestDefaultsAppNames is the user's flow on every real dump: crunched
// with defaults, decrunched with only the names the app's own files give
// (heapstat.AppNames: the names of the classes the boot class loader did
// not load, and of their fields and statics). The heap must be the
// original's, names included: every object, reference, array length,
// root, class and field (heapstat.Canonical).
func TestDefaultsAppNames(t *testing.T) {
	more := []string{testutil.Fixture("libuser/libuser.hprof.gz"), testutil.Fixture("obfuscated/obfuscated.hprof.gz"),
		testutil.Fixture("hugearray.hprof.gz")}
	for _, p := range append(layoutInputs(t), more...) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := testutil.ReadAll(t, p)
			out, st := userFlow(t, src, crunch.Options{})
			lines := sameHeap(t, heapstat.Canonical, src, out)
			// The names not recovered are no class's or field's: the
			// heap compared equal. On these inputs they are the method
			// names, signatures and source files of stack frames in
			// the app's classes (AppNames leaves them out; the app's
			// classes.dex or JAR has them), and in the old hprof
			// agent's dumps the names of threads and thread groups of
			// START THREAD records, hashed by default (by hand, the
			// twenty-ninth session).
			t.Logf("%d hashed names recovered, %d not; %d lines", st.Recovered, st.Missing, lines)
		})
	}
}

// TestRoundTripValues: crunch --keep-strings --keep-primitives then
// decrunch must give the same objects, references and primitive field
// values as the original, up to the numbering of IDs, on every layout of
// IDs: 4-byte, 8-byte with compressed references, without (decrunch's
// IDs then have a stride of 2³¹), and with 16-byte alignment; and from
// ZGC and Shenandoah, whose objects are not in address order, and JDK 25
// (layoutInputs).
func TestRoundTripValues(t *testing.T) {
	for _, p := range layoutInputs(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := testutil.ReadAll(t, p)
			out, _ := decrunchBytes(t, crunchBytes(t, src, crunch.Options{KeepStrings: true, KeepPrimitives: true}), Options{})
			t.Logf("%d lines", sameHeap(t, heapstat.CanonicalValues, src, out))
		})
	}
}

// sameHeap fails t unless canon (heapstat.Canonical or CanonicalValues)
// gives the round trip out the lines of the original src, and returns how
// many lines that is.
func sameHeap(t *testing.T, canon func([]byte) ([]string, error), src, out []byte) int {
	t.Helper()
	want, err := canon(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := canon(out)
	if err != nil {
		t.Fatalf("output does not read back: %v", err)
	}
	if d := lineDiff(joinLines(want), joinLines(got)); d != "" {
		t.Fatalf("round trip differs (- original, + round trip):\n%.3000s", d)
	}
	return len(got)
}
