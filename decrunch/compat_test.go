package decrunch

import (
	"regexp"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestBeforeObjectsRecords: a BMD file that crunch wrote before OBJECTS
// records (testdata/bmd/sample-73007bb.bmd.gz, the sample dump crunched at
// commit 73007bb), whose first pass decodes every object, decrunches to
// the same HPROF as today's BMD of the same dump, whose objects OBJECTS
// records frame: of the same length, with the same heap records, objects,
// references and values (heapstat.CanonicalValues), but for ArrayList.size,
// which today's crunch keeps (crunch.PlatformSizes) and 73007bb's dropped
// (0 in every list), and no more bytes differing than those sizes hold.
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
	if len(oldOut) != len(nowOut) {
		t.Errorf("the BMD written before OBJECTS records gives %d bytes of HPROF, today's %d", len(oldOut), len(nowOut))
	}
	oldLines, oldSizes := listSizesDropped(t, oldOut)
	nowLines, nowSizes := listSizesDropped(t, nowOut)
	if oldSizes != 0 || nowSizes == 0 {
		t.Errorf("%d ArrayLists of a size other than 0 before OBJECTS records (want none) and %d today (want some)", oldSizes, nowSizes)
	}
	if d := lineDiff(strings.Join(oldLines, "\n"), strings.Join(nowLines, "\n")); d != "" {
		t.Errorf("the BMD written before OBJECTS records gives another HPROF than today's:\n%s", d)
	}
	var n int
	for i := range oldOut[:min(len(oldOut), len(nowOut))] {
		if oldOut[i] != nowOut[i] {
			n++
		}
	}
	if n > 4*nowSizes {
		t.Errorf("%d bytes differ, more than the %d ArrayList sizes today's keeps hold", n, nowSizes)
	}
}

// listSizesDropped returns the lines of heapstat.CanonicalValues of the
// HPROF dump in data with the size of each java.util.ArrayList blanked,
// and how many of those sizes were not 0.
func listSizesDropped(t *testing.T, data []byte) ([]string, int) {
	t.Helper()
	lines, err := heapstat.CanonicalValues(data)
	if err != nil {
		t.Fatal(err)
	}
	list := ""
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "class" && f[2] == "java/util/ArrayList" {
			list = " of " + f[1] + ","
		}
	}
	if list == "" {
		t.Fatal("no class java/util/ArrayList")
	}
	sizes := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "instance ") || !strings.Contains(l, list) {
			continue
		}
		lines[i] = listSize.ReplaceAllStringFunc(l, func(m string) string {
			if m != " size:int=0x0" {
				sizes++
			}
			return " size:int=…"
		})
	}
	return lines, sizes
}

// listSize matches an instance's size field in heapstat.CanonicalValues'
// lines.
var listSize = regexp.MustCompile(` size:int=0x[0-9a-f]+`)
