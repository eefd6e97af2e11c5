package main

import (
	"os"
	"path/filepath"
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
			dir := t.TempDir()
			in := filepath.Join(dir, "in.hprof")
			src := testutil.ReadAll(t, testutil.Fixture(name))
			if err := os.WriteFile(in, src, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.hprof")
			if err := rewrite(in, out); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(got), hprof.Version101+"\x00") {
				t.Fatalf("version %q, want %s", got[:18], hprof.Version101)
			}
			heaps, ends := map[int64]hprof.Tag{}, 0 // heap dump records by offset
			err = heapstat.Walk(got, func(rec hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
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

// TestRewriteCut: a dump cut inside a record is an error, and leaves no
// output.
func TestRewriteCut(t *testing.T) {
	dir := t.TempDir()
	src := testutil.ReadAll(t, testutil.Fixture("sample32.hprof.gz"))
	in, out := filepath.Join(dir, "in.hprof"), filepath.Join(dir, "out.hprof")
	if err := os.WriteFile(in, src[:len(src)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewrite(in, out); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("error %v, want a record cut short", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output left behind: %v", err)
	}
}
