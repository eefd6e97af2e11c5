package decrunch

import (
	"bytes"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestBeforeObjectsRecords: a BMD file that crunch wrote before OBJECTS
// records (testdata/bmd/sample-73007bb.bmd.gz, the sample dump crunched at
// commit 73007bb), whose first pass decodes every object, decrunches to
// the same HPROF, byte for byte, as today's BMD of the same dump, whose
// objects OBJECTS records frame.
func TestBeforeObjectsRecords(t *testing.T) {
	old := testutil.ReadAll(t, testutil.Fixture("bmd/sample-73007bb.bmd.gz"))
	now := crunchBytes(t, testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz")), crunch.Options{})
	for name, file := range map[string][]byte{"before": old, "today": now} {
		runs := 0
		bmdtest.Records(t, file, true, func(rec *bmd.Record) {
			if rec.Kind == bmd.KindObjects {
				runs++
			}
		})
		if (runs > 0) != (name == "today") {
			t.Fatalf("%s: %d OBJECTS records", name, runs)
		}
	}
	oldOut, _ := decrunchBytes(t, old, Options{})
	nowOut, _ := decrunchBytes(t, now, Options{})
	if !bytes.Equal(oldOut, nowOut) {
		t.Errorf("the BMD written before OBJECTS records gives %d bytes of HPROF, today's %d, not the same", len(oldOut), len(nowOut))
	}
}
