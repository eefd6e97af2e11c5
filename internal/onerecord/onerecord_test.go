package onerecord

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestRewrite: the fixture dumps (JDK 17, many HEAP DUMP SEGMENTs, 4- and
// 8-byte IDs) come out as version 1.0.1 with one HEAP DUMP record and no
// HEAP DUMP END, holding the same heap, record for record.
func TestRewrite(t *testing.T) {
	for _, name := range []string{"sample.hprof.gz", "sample32.hprof.gz"} {
		t.Run(name, func(t *testing.T) {
			src := testutil.ReadAll(t, testutil.Fixture(name))
			var out bytes.Buffer
			if err := Rewrite(bytes.NewReader(src), &out, nil); err != nil {
				t.Fatal(err)
			}
			got := out.Bytes()
			if !strings.HasPrefix(string(got), hprof.Version101+"\x00") {
				t.Fatalf("version %q, want %s", got[:18], hprof.Version101)
			}
			heaps, ends := map[int64]hprof.Tag{}, 0 // heap dump records by offset
			err := heapstat.Walk(got, func(rec hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
				if s != nil {
					heaps[rec.Offset] = rec.Tag
				} else if rec.Tag == hprof.TagHeapDumpEnd {
					ends++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(heaps) != 1 || ends != 0 {
				t.Errorf("%d heap dump records and %d HEAP DUMP ENDs, want one and none", len(heaps), ends)
			}
			for _, tag := range heaps {
				if tag != hprof.TagHeapDump {
					t.Errorf("heap dump record of tag %v, want HEAP DUMP", tag)
				}
			}
			want, err := heapstat.Canonical(src)
			if err != nil {
				t.Fatal(err)
			}
			have, err := heapstat.Canonical(got)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(want, have) {
				t.Error("the heap differs from the input's")
			}
		})
	}
}

// TestRewriteExtra: sub-records given as extra end the one HEAP DUMP
// record, whose length counts them, and the records after it are the
// input's that follow its heap dump, in order.
func TestRewriteExtra(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample32.hprof.gz"))
	extra := []byte{byte(hprof.SubRootUnknown), 0, 0, 0, 0x42}
	var plain, out bytes.Buffer
	if err := Rewrite(bytes.NewReader(src), &plain, nil); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(bytes.NewReader(src), &out, extra); err != nil {
		t.Fatal(err)
	}
	recs := func(data []byte) (heap []byte, tags []hprof.Tag) {
		err := heapstat.Walk(data, func(rec hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
			if s == nil {
				tags = append(tags, rec.Tag)
			} else if heap == nil {
				heap = data[rec.Body():rec.End()]
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return heap, tags
	}
	wantHeap, wantTags := recs(plain.Bytes())
	heap, tags := recs(out.Bytes())
	if !bytes.Equal(heap, append(bytes.Clone(wantHeap), extra...)) {
		t.Errorf("heap dump record of %d bytes, want the %d of the input's and the %d given", len(heap), len(wantHeap), len(extra))
	}
	if !slices.Equal(tags, wantTags) {
		t.Errorf("records %v, want %v", tags, wantTags)
	}
}

// TestRewriteCut: a dump cut inside a record is an error.
func TestRewriteCut(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample32.hprof.gz"))
	err := Rewrite(bytes.NewReader(src[:len(src)-3]), &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("error %v, want a record cut short", err)
	}
}
