package fuzzseed

import (
	"bytes"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// TestSeedsAreValid: every sample and hand-built dump reads back whole and
// crunches, so that the seeds reach deep into the readers.
func TestSeedsAreValid(t *testing.T) {
	for _, s := range Seeds(t, 4<<10) {
		sum, err := heapstat.Summarize(s.Data)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		var out bytes.Buffer
		if _, err := crunch.Crunch(bytes.NewReader(s.Data), &out, crunch.Options{}); err != nil {
			t.Errorf("%s: crunch: %v", s.Name, err)
			continue
		}
		t.Logf("%-50s %6d bytes, %3d objects, BMD %5d bytes", s.Name, len(s.Data), sum.Objects, out.Len())
		if len(s.Data) > 32<<10 {
			t.Errorf("%s: seed of %d bytes is too big", s.Name, len(s.Data))
		}
	}
}
