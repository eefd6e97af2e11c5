package hprof_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// iterDumps are the dumps the iterator tests read: hand-built ones with
// both ID sizes and the sample fixture.
func iterDumps(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"handbuilt4": fuzzseed.HandBuilt(4, hprof.Version102),
		"handbuilt8": fuzzseed.HandBuilt(8, hprof.Version103),
		"sample":     testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz")),
	}
}

// event describes one record or sub-record read, or the error that ended
// the reading.
func recEvent(rec hprof.Record) string {
	return fmt.Sprintf("%s@%d+%d", rec.Tag, rec.Offset, rec.Length)
}

func subEvent(s *hprof.SubRecord) string {
	return fmt.Sprintf("  %s@%d id=%x class=%x n=%d data=%d elems=%d", s.Tag, s.Offset, s.ID, s.ClassID, s.Length, len(s.Data), len(s.Elements))
}

func errEvent(err error) string { return "error: " + err.Error() }

// walkNext reads data with Next and NextSub, as the hand-written loops did.
func walkNext(data []byte) []string {
	var ev []string
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		return []string{errEvent(err)}
	}
	var s hprof.SubRecord
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return ev
		}
		if err != nil {
			return append(ev, errEvent(err))
		}
		ev = append(ev, recEvent(rec))
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for {
			err := r.NextSub(&s)
			if err == io.EOF {
				break
			}
			if err != nil {
				return append(ev, errEvent(err))
			}
			ev = append(ev, subEvent(&s))
		}
	}
}

// walkIter reads data with Records and SubRecords. It goes on after an
// error, to check that the iterator itself stops.
func walkIter(t *testing.T, data []byte) []string {
	var ev []string
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		return []string{errEvent(err)}
	}
	failed := false
	for rec, err := range r.Records() {
		if failed {
			t.Fatal("Records yielded after an error")
		}
		if err != nil {
			if rec != (hprof.Record{}) {
				t.Errorf("Records yielded %v with its error", rec)
			}
			ev, failed = append(ev, errEvent(err)), true
			continue
		}
		ev = append(ev, recEvent(rec))
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for s, err := range r.SubRecords() {
			if failed {
				t.Fatal("SubRecords yielded after an error")
			}
			if err != nil {
				if s != nil {
					t.Errorf("SubRecords yielded a sub-record with its error")
				}
				ev, failed = append(ev, errEvent(err)), true
				continue
			}
			ev = append(ev, subEvent(s))
		}
		if failed {
			break // as a caller returns the error
		}
	}
	return ev
}

// TestIteratorsMatchNext: the iterators yield what Next and NextSub return,
// on whole dumps and on dumps cut anywhere: the error that ends the loop is
// yielded once, and nothing after it.
func TestIteratorsMatchNext(t *testing.T) {
	for name, data := range iterDumps(t) {
		// About 300 cuts of the small dumps, 16 of the sample.
		step := len(data) / 150
		if len(data) > 1<<16 {
			step = len(data) / 8
		}
		cuts := []int{len(data)}
		for cut := 0; cut < len(data); cut += step {
			cuts = append(cuts, cut, min(cut+step/2+3, len(data)))
		}
		for _, cut := range cuts {
			want, got := walkNext(data[:cut]), walkIter(t, data[:cut])
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s cut at %d: the iterators read\n%s\nNext and NextSub\n%s", name, cut, tail(got), tail(want))
			}
			if cut == len(data) && strings.HasPrefix(got[len(got)-1], "error: ") {
				t.Errorf("%s: %s", name, got[len(got)-1])
			}
		}
	}
}

func tail(ev []string) string {
	if len(ev) > 5 {
		ev = ev[len(ev)-5:]
	}
	return strings.Join(ev, "\n")
}

// TestIteratorsEarlyBreak: breaking out of SubRecords leaves the rest of
// the record to Next; breaking out of Records leaves the Reader where it
// was, and ranging again goes on with the next record.
func TestIteratorsEarlyBreak(t *testing.T) {
	data := iterDumps(t)["sample"]
	var all []string // records only
	for _, e := range walkNext(data) {
		if !strings.HasPrefix(e, " ") {
			all = append(all, e)
		}
	}
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var subs int
	for len(got) < len(all) {
		n := 0
		for rec, err := range r.Records() {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, recEvent(rec))
			if rec.Tag.IsHeapDump() {
				for s, err := range r.SubRecords() {
					if err != nil {
						t.Fatal(err)
					}
					if subs++; s.Tag == hprof.SubInstanceDump || subs%3 == 0 {
						break
					}
				}
			}
			if n++; n == 7 {
				break
			}
		}
		if n == 0 {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(all, "\n") {
		t.Fatalf("with breaks: %d records, want %d", len(got), len(all))
	}
	for _, err := range r.Records() {
		t.Fatalf("Records after the end yielded %v", err)
	}
}

// TestSubRecordsOutsideHeapDump: SubRecords outside a heap dump record
// yields an error, as NextSub returns one.
func TestSubRecordsOutsideHeapDump(t *testing.T) {
	r, err := hprof.NewReader(bytes.NewReader(fuzzseed.HandBuilt(4, hprof.Version102)))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{"before the first record", "in a STRING record"} {
		n := 0
		for s, err := range r.SubRecords() {
			if n++; s != nil || err == nil || !strings.HasPrefix(err.Error(), "hprof: ") {
				t.Errorf("%s: SubRecords yielded %v, %v", at, s, err)
			}
		}
		if n != 1 {
			t.Errorf("%s: SubRecords yielded %d times", at, n)
		}
		if rec, err := r.Next(); err != nil || rec.Tag != hprof.TagString {
			t.Fatalf("first record: %v, %v", rec, err)
		}
	}
}

// TestIteratorsAllocations: walking a dump with the iterators allocates
// no more than with Next and NextSub: nothing per record or sub-record.
func TestIteratorsAllocations(t *testing.T) {
	data := iterDumps(t)["sample"]
	loop := testing.AllocsPerRun(3, func() {
		r, _ := hprof.NewReader(bytes.NewReader(data))
		var s hprof.SubRecord
		for rec, err := r.Next(); err == nil; rec, err = r.Next() {
			if rec.Tag.IsHeapDump() {
				for r.NextSub(&s) == nil {
				}
			}
		}
	})
	iter := testing.AllocsPerRun(3, func() {
		r, _ := hprof.NewReader(bytes.NewReader(data))
		for rec, err := range r.Records() {
			if err == nil && rec.Tag.IsHeapDump() {
				for range r.SubRecords() {
				}
			}
		}
	})
	t.Logf("allocations: %v with the iterators, %v with Next and NextSub", iter, loop)
	if iter > loop+2 {
		t.Errorf("a walk of the sample allocates %v times with the iterators, %v with Next and NextSub", iter, loop)
	}
}

// TestIteratorError: the error an iterator yields is the Reader's, with
// its offset and type.
func TestIteratorError(t *testing.T) {
	data := fuzzseed.HandBuilt(4, hprof.Version102)
	r, err := hprof.NewReader(bytes.NewReader(data[:len(data)-3]))
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for _, err := range r.Records() {
		last = err
	}
	var fe *hprof.FormatError
	if !errors.As(last, &fe) || !errors.Is(last, io.ErrUnexpectedEOF) {
		t.Fatalf("cut dump: last error %v, want a *FormatError for truncation", last)
	}
}
