package decrunch

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// objectOrder returns the kinds of the object sub-records of a dump in file
// order: 'C' for a class dump, 'o' for any other object.
func objectOrder(t *testing.T, data []byte) []byte {
	t.Helper()
	var order []byte
	err := heapstat.Walk(data, func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		switch {
		case s == nil:
		case s.Tag == hprof.SubClassDump:
			order = append(order, 'C')
		case !s.Tag.IsRoot() && s.Tag != hprof.SubHeapDumpInfo:
			order = append(order, 'o')
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return order
}

// TestClassDumpsKeepTheirPlace: the Android dialer dump interleaves class
// dumps with the other objects (VisualVM counts class dumps lying among
// instances as java.lang.Class instances); after a round trip every class
// dump must be where it was among the objects.
func TestClassDumpsKeepTheirPlace(t *testing.T) {
	src := testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof"))
	out, _ := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{})
	want, got := objectOrder(t, src), objectOrder(t, out)
	if !bytes.Equal(want, got) {
		i := 0
		for i < len(want) && i < len(got) && want[i] == got[i] {
			i++
		}
		t.Fatalf("class dumps moved: first difference at object %d of %d (%d in the output)", i, len(want), len(got))
	}
	if bytes.IndexByte(want, 'o') > bytes.LastIndexByte(want, 'C') {
		t.Fatal("test premise: the dump does not interleave class dumps with objects")
	}
}
