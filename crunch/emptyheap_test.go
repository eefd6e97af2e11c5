package crunch_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// TestEmptyHeapDumpRoundTrip: empty heap dump records followed by other
// top-level records keep the dump's heap dumps through a round trip. An
// empty HEAP DUMP followed by an UNLOAD CLASS used to come back as a HEAP
// DUMP END, an empty heap dump the input did not have (found by
// FuzzCrunch).
func TestEmptyHeapDumpRoundTrip(t *testing.T) {
	enc := hprof.BodyEncoder{IDSize: 4}
	unload := enc.AppendSerial(nil, 1)
	type rec struct {
		tag  hprof.Tag
		body []byte
	}
	hd, seg, end := rec{hprof.TagHeapDump, nil}, rec{hprof.TagHeapDumpSegment, nil}, rec{hprof.TagHeapDumpEnd, nil}
	un := rec{hprof.TagUnloadClass, unload}
	for name, recs := range map[string][]rec{
		"HEAP DUMP, UNLOAD CLASS":                         {hd, un},
		"HEAP DUMP, UNLOAD CLASS, HEAP DUMP":              {hd, un, hd},
		"HEAP DUMP SEGMENT, UNLOAD CLASS, END":            {seg, un, end},
		"HEAP DUMP, UNLOAD CLASS, HEAP DUMP END":          {hd, un, end},
		"HEAP DUMP END, HEAP DUMP, UNLOAD CLASS":          {end, hd, un},
		"HEAP DUMP, HEAP DUMP SEGMENT, UNLOAD CLASS, END": {hd, seg, un, end},
		"HEAP DUMP SEGMENT, HEAP DUMP, 2 UNLOAD CLASS":    {seg, hd, un, un},
	} {
		t.Run(name, func(t *testing.T) {
			var in bytes.Buffer
			w := newDumpWriter(t, &in, 4)
			for _, r := range recs {
				must(t, w.WriteRecord(r.tag, 0, r.body))
			}
			must(t, w.Flush())
			rt := keepStringsRoundTrip(t, in.Bytes())
			want, got := rt.want, rt.got
			if !slices.Equal(got, want) {
				t.Errorf("heap dumps: %q, want %q", got, want)
			}
		})
	}
	// Segments that no HEAP DUMP END closes at the end of the file, or no
	// record at all: the dump was cut short after a record (or its
	// header), an error at the file's end.
	for name, recs := range map[string][]rec{
		"HEAP DUMP SEGMENT, UNLOAD CLASS":            {seg, un},
		"HEAP DUMP, HEAP DUMP SEGMENT, UNLOAD CLASS": {hd, seg, un},
		"HEAP DUMP SEGMENT, END, HEAP DUMP SEGMENT":  {seg, end, seg},
		"no record after the header":                 nil,
	} {
		var in bytes.Buffer
		w := newDumpWriter(t, &in, 4)
		for _, r := range recs {
			must(t, w.WriteRecord(r.tag, 0, r.body))
		}
		must(t, w.Flush())
		_, err := crunch.Crunch(bytes.NewReader(in.Bytes()), io.Discard, crunch.Options{})
		var fe *hprof.FormatError
		want := "no HEAP DUMP END"
		if recs == nil {
			want = "no record after the header"
		}
		if !errors.As(err, &fe) || fe.Offset != int64(in.Len()) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one of segments not closed at offset %d", name, err, in.Len())
		}
	}
}
