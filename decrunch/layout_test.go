package decrunch

import (
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestMATLayout: Eclipse MAT infers whether references are compressed and
// the object alignment from a dump's object IDs; a default round trip
// gives it the same answers as the original, on every real dump we have:
// JDK 17 with compressed references (sample), without (sample-nocoops),
// with 16-byte alignment (sample-align16), 4-byte IDs (sample32), JDK 25
// (sample-jdk25; its compact object headers, -XX:+UseCompactObjectHeaders,
// gave the same answers by hand) and the corpus (JDK 5 to 11, Android).
func TestMATLayout(t *testing.T) {
	inputs := []string{testutil.Fixture("sample.hprof.gz"), testutil.Fixture("sample32.hprof.gz"),
		testutil.Fixture("sample-nocoops.hprof.gz"), testutil.Fixture("sample-align16.hprof.gz"),
		testutil.Fixture("sample-jdk25.hprof.gz")}
	inputs = append(inputs, testutil.CorpusHPROFs(t)...)
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src := testutil.ReadAll(t, in)
			wantC, wantA, err := heapstat.MATLayout(src)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{})
			gotC, gotA, err := heapstat.MATLayout(out)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("compressed references %v, alignment %d", wantC, wantA)
			if gotC != wantC || gotA != wantA {
				t.Errorf("MAT would see compressed references %v, alignment %d; the original %v, %d", gotC, gotA, wantC, wantA)
			}
		})
	}
}
