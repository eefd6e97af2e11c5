package decrunch

import (
	"bytes"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestHugeArrayFixture: the real JDK dump of testdata/hugearray.hprof.gz,
// whose Object[200_000] crunch and decrunch convert in pieces, comes back
// from its default BMD with that array's length and the HPROF that
// decrunch wrote with the array held whole, byte for byte, each way of
// the second pass; scripts/roundtrip.sh checks it with VisualVM's heap
// library.
func TestHugeArrayFixture(t *testing.T) {
	dump := testutil.ReadAll(t, testutil.Fixture("hugearray.hprof.gz"))
	file := crunchBytes(t, dump, crunch.Options{})
	for _, pass := range allWays {
		_, whole, err := decrunchWhole(file, Options{}, pass, true)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := decrunchWhole(file, Options{}, pass, false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, whole) {
			t.Fatalf("way %v: %d bytes of HPROF in pieces, %d held whole", pass, len(got), len(whole))
		}
		if lens := readsWhole(t, got); !slices.Contains(lens, 200_000) {
			t.Fatalf("way %v: no array of 200,000 elements read back", pass)
		}
	}
}
