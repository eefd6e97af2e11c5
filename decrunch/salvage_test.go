package decrunch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestSalvage: a BMD cut short is an error by default; with Salvage it
// gives a valid HPROF of what came before the cut, and says what was lost.
func TestSalvage(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	full := crunchBytes(t, src, crunch.Options{})
	whole, _ := decrunchBytes(t, full, Options{})
	want, err := heapstat.Summarize(whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(full) * 9 / 10, len(full) - 1} {
		if _, err := Decrunch(bytes.NewReader(full[:cut]), io.Discard, Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d without salvage: got %v, want a truncation error", cut, err)
		}
		var out bytes.Buffer
		st, err := Decrunch(bytes.NewReader(full[:cut]), &out, Options{Salvage: true})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if st.Salvaged == nil {
			t.Fatalf("cut at %d: salvage did not report the damage", cut)
		}
		got, err := heapstat.Summarize(out.Bytes())
		if err != nil {
			t.Fatalf("cut at %d: salvaged HPROF does not read back: %v", cut, err)
		}
		if got.Objects == 0 || got.Objects > want.Objects || int64(st.Objects) < got.Objects {
			t.Fatalf("cut at %d: salvaged %d objects (reported %d) of %d", cut, got.Objects, st.Objects, want.Objects)
		}
	}
}

// objectEnds returns the file offset at which each object record of a BMD
// file (instances and arrays, the records decrunch writes as objects) ends,
// and the file offsets at which its blocks start.
func objectEnds(t *testing.T, file []byte) (ends, blocks []int64) {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case bmd.KindInstance, bmd.KindObjectArray, bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
			ends = append(ends, r.Offset())
		}
	}
	// The blocks follow the header: walk their lengths.
	pos := int64(headerSize(t, file))
	for pos < int64(len(file)) {
		blocks = append(blocks, pos)
		n, k := protowire.ConsumeVarint(file[pos:])
		pos += int64(k) + int64(n) + 8
	}
	return ends, blocks
}

// headerSize returns the size of a BMD file's header.
func headerSize(t *testing.T, file []byte) int {
	t.Helper()
	_, k := protowire.ConsumeVarint(file)
	n, m := protowire.ConsumeVarint(file[k:])
	return k + m + int(n) + 8
}

// wholeBefore returns how many object records end in the blocks that lie
// wholly before offset cut: what a salvage of the file cut there must keep.
// A record's end is the offset of the byte after it: for a record that
// ends with its block, the first payload byte of the next block, just
// after that block's length.
func wholeBefore(file []byte, ends, blocks []int64, cut int64) int64 {
	limit := cut
	for _, b := range blocks {
		if b <= cut {
			limit = b // the block that holds the cut, or starts at it
		}
	}
	if limit < int64(len(file)) {
		_, k := protowire.ConsumeVarint(file[limit:])
		limit += int64(k)
	}
	n := int64(0)
	for _, e := range ends {
		if e <= limit {
			n++
		}
	}
	return n
}

// TestSalvageCuts: a BMD cut at any of ten points, plain or zstd (what a
// phone uploads, cut short), salvages exactly the objects of the blocks
// before the cut: crunch writes names and class definitions just before
// the objects that need them, and decrunch keeps every whole block. On
// the dialer dump, the share of objects restored is logged: it follows
// where the object records are, after the definitions they need.
func TestSalvageCuts(t *testing.T) {
	for _, in := range []string{testutil.Fixture("sample.hprof.gz"),
		filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof")} {
		src := testutil.ReadAll(t, in)
		full := crunchBytes(t, src, crunch.Options{})
		ends, blocks := objectEnds(t, full)
		var z bytes.Buffer
		zw, err := compress.NewWriter(&z, compress.Zstd)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(full)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		for _, zst := range []bool{false, true} {
			var shares []string
			for i := 1; i <= 10; i++ {
				var cut []byte
				if zst {
					zr, _, err := compress.NewReader(bytes.NewReader(z.Bytes()[:z.Len()*i/10]))
					if err != nil {
						t.Fatal(err)
					}
					cut, _ = io.ReadAll(zr) // what decompresses before the cut
					if i < 10 && len(cut) >= len(full) {
						t.Fatalf("%s: zstd cut at %d0%% decompresses whole", filepath.Base(in), i)
					}
				} else {
					cut = full[:len(full)*i/10]
				}
				var out bytes.Buffer
				st, err := Decrunch(bytes.NewReader(cut), &out, Options{Salvage: true})
				if err != nil {
					t.Fatalf("%s zstd=%v cut %d0%%: %v", filepath.Base(in), zst, i, err)
				}
				if (st.Salvaged != nil) != (i < 10) {
					t.Errorf("%s zstd=%v cut %d0%%: salvage reports damage %v", filepath.Base(in), zst, i, st.Salvaged)
				}
				got, err := heapstat.Summarize(out.Bytes())
				if err != nil {
					t.Fatalf("%s zstd=%v cut %d0%%: the salvaged HPROF does not read back: %v", filepath.Base(in), zst, i, err)
				}
				want := int64(len(ends))
				if i < 10 {
					want = wholeBefore(full, ends, blocks, int64(len(cut)))
				}
				if got.Objects != want {
					t.Errorf("%s zstd=%v cut %d0%% (%d bytes): %d objects salvaged, %d in the whole blocks before the cut",
						filepath.Base(in), zst, i, len(cut), got.Objects, want)
				}
				shares = append(shares, fmt.Sprintf("%d0%%:%.0f%%", i, 100*float64(got.Objects)/float64(len(ends))))
			}
			t.Logf("%s zstd=%v: objects restored at each cut: %s", filepath.Base(in), zst, strings.Join(shares, " "))
		}
	}
}

// TestDamage: a byte changed at any of 20 places of a BMD makes decrunch
// fail with an error that says the file is damaged and where; with
// Salvage, the HPROF holds exactly the objects of the whole blocks before
// the damaged one.
func TestDamage(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	full := crunchBytes(t, src, crunch.Options{})
	ends, blocks := objectEnds(t, full)
	mismatches := 0
	for i := range 20 {
		at := int64(len(full)) * int64(i) / 20
		if i == 0 {
			at = 5 // in the header's metadata
		}
		bad := bytes.Clone(full)
		bad[at] ^= 0x5A
		_, err := Decrunch(bytes.NewReader(bad), io.Discard, Options{})
		var fe *bmd.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("byte %d changed: error %v, want a *bmd.FormatError", at, err)
		}
		if !errors.Is(err, bmd.ErrChecksum) && !errors.Is(err, io.ErrUnexpectedEOF) && fe.Record != "block" {
			t.Errorf("byte %d changed: %v: not a checksum, block or truncation error", at, err)
		}
		if at < int64(headerSize(t, full)) {
			if fe.Record != "header" {
				t.Errorf("byte %d of the header changed: %v", at, err)
			}
			continue // no salvage of a damaged header
		}
		if fe.Offset > at {
			t.Errorf("byte %d changed: the error is at offset %d, after it", at, fe.Offset)
		}
		// A checksum that does not match names the block's bytes, and
		// they hold the byte changed.
		var n, from, to int64
		if errors.Is(err, bmd.ErrChecksum) {
			if _, serr := fmt.Sscanf(fe.Msg, "block %d (bytes %d to %d)", &n, &from, &to); serr != nil || from != fe.Offset || at >= to {
				t.Errorf("byte %d changed: %v: want the bytes of its block", at, err)
			}
			mismatches++
		}
		var out bytes.Buffer
		st, err := Decrunch(bytes.NewReader(bad), &out, Options{Salvage: true})
		if err != nil || st.Salvaged == nil {
			t.Fatalf("byte %d changed: salvage: %v, %v", at, err, st)
		}
		got, err := heapstat.Summarize(out.Bytes())
		if err != nil {
			t.Fatalf("byte %d changed: the salvaged HPROF does not read back: %v", at, err)
		}
		if want := wholeBefore(full, ends, blocks, at); got.Objects != want {
			t.Errorf("byte %d changed: %d objects salvaged, %d in the whole blocks before", at, got.Objects, want)
		}
	}
	if mismatches < 10 {
		t.Errorf("%d of 19 changes in blocks found as a checksum mismatch, want most", mismatches)
	}
}

// TestSalvageMalformedRun: an OBJECTS record that miscounts its run, in
// sound blocks (only a faulty writer makes one), is an error: END's count,
// in the first pass, for a run the first pass skips; salvaged, where the
// second pass stops at the run, the HPROF reads back with the objects
// before the run, and with every STRING record of the whole file, which
// the first pass, skipping the run unread, still writes (spec/bmd.md
// §8.4). A run that holds an enum constant, its name String or the
// String's array, which the first pass decodes (enumnames.go), stops the
// first pass itself, at the run.
func TestSalvageMalformedRun(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	full := crunchBytes(t, src, crunch.Options{})
	whole, _ := decrunchBytes(t, full, Options{})
	r, err := bmd.NewReader(bytes.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	r.SkipObjects = true
	var runs []int64
	for rec, err := r.Next(); err != io.EOF; rec, err = r.Next() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == bmd.KindObjects {
			runs = append(runs, rec.Offset)
		}
	}
	skipped, decoded := 0, 0
	for _, at := range runs {
		bad := miscountRun(t, full, at)
		var fe *bmd.FormatError
		_, err := Decrunch(bytes.NewReader(bad), io.Discard, Options{})
		switch {
		case !errors.As(err, &fe):
			t.Fatalf("run at %d miscounted: %v, want a format error", at, err)
		case fe.Record == "OBJECTS":
			// Decoded by the first pass: it stops there.
			decoded++
			continue
		case fe.Record != "END":
			t.Fatalf("run at %d miscounted: %v, want an END or OBJECTS error", at, err)
		}
		skipped++
		if skipped > 1 {
			continue
		}
		var out bytes.Buffer
		st, err := Decrunch(bytes.NewReader(bad), &out, Options{Salvage: true})
		if err != nil || !errors.As(st.Salvaged, &fe) || fe.Record != "OBJECTS" {
			t.Fatalf("salvage: %v, salvaged %v, want the second pass's OBJECTS error", err, st.Salvaged)
		}
		got, err := heapstat.Summarize(out.Bytes())
		if err != nil {
			t.Fatalf("salvaged HPROF does not read back: %v", err)
		}
		want, err := heapstat.Summarize(whole)
		if err != nil {
			t.Fatal(err)
		}
		if got.Objects == 0 || got.Objects >= want.Objects {
			t.Errorf("salvaged %d objects of %d", got.Objects, want.Objects)
		}
		if g, w := countStrings(t, out.Bytes()), countStrings(t, whole); g != w {
			t.Errorf("salvaged HPROF has %d STRING records, the whole one %d", g, w)
		}
		// The second pass's error, on one goroutine as on two.
		sameSecondPassWays(t, bad, Options{Salvage: true})
		sameSecondPassWays(t, bad, Options{})
	}
	if skipped == 0 || decoded == 0 {
		t.Errorf("of %d runs miscounted, %d met at END, %d by the first pass: want both", len(runs), skipped, decoded)
	}
}

// miscountRun returns file with the count of its OBJECTS record at offset
// at one more, the checksum of its block made again.
func miscountRun(t *testing.T, file []byte, at int64) []byte {
	t.Helper()
	bad := bytes.Clone(file)
	_, k := protowire.ConsumeVarint(bad[at+1:]) // the length
	count := at + 1 + int64(k)
	if bad[count]&0x7f == 0x7f {
		t.Fatalf("count byte %#x: its low bits would carry", bad[count])
	}
	bad[count]++ // the count's lowest seven bits, one more
	_, blocks := objectEnds(t, file)
	for i := len(blocks) - 1; i >= 0; i-- {
		if b := blocks[i]; b < at {
			n, k := protowire.ConsumeVarint(bad[b:])
			end := b + int64(k) + int64(n)
			binary.LittleEndian.PutUint64(bad[end:], xxhash.Sum64(bad[b:end]))
			break
		}
	}
	return bad
}

// countStrings returns the number of STRING records of an HPROF file.
func countStrings(t *testing.T, file []byte) int {
	t.Helper()
	r, err := hprof.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag == hprof.TagString {
			n++
		}
	}
	return n
}
