package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// small is a dump of a few MiB with several segments; with 4-byte IDs, some
// arrays are larger than a segment.
func small(idSize int) genOptions {
	o := genOptions{Size: 3 << 20, IDSize: idSize, SegmentSize: 256 << 10, MaxArray: 256 << 10, Seed: 7}
	if idSize == 4 {
		o.MaxArray, o.HugeArray = 384<<10, 1<<20
	}
	return o
}

func countsText(t *testing.T, c *counts, withFile bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.write(&b); err != nil {
		t.Fatal(err)
	}
	if withFile {
		return b.String()
	}
	var keep []string
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if !strings.HasPrefix(l, "file.") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

func genFile(t *testing.T, opt genOptions) (string, *counts) {
	t.Helper()
	var b bytes.Buffer
	c, err := generate(&b, opt)
	if err != nil {
		t.Fatal(err)
	}
	if int64(b.Len()) != c.file.bytes {
		t.Fatalf("generator counted %d bytes, wrote %d", c.file.bytes, b.Len())
	}
	p := filepath.Join(t.TempDir(), "gen.hprof")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, c
}

func TestGenerateVerify(t *testing.T) {
	for _, id := range []int{4, 8} {
		opt := small(id)
		p, c := genFile(t, opt)
		if c.file.bytes < opt.Size || c.file.bytes > opt.Size+opt.Size/4 {
			t.Errorf("idsize %d: %d bytes for a target of %d", id, c.file.bytes, opt.Size)
		}
		if c.instances < 1000 || c.objArrays == 0 || c.primByType[hprof.Byte] == 0 || c.primByType[hprof.Int] == 0 || c.dangling != 0 {
			t.Errorf("idsize %d: unexpected mix: %+v", id, c)
		}
		v, err := verify(p)
		if err != nil {
			t.Fatalf("idsize %d: verify: %v", id, err)
		}
		if v.file.segments < 4 || v.file.heapDumpEnds != 1 {
			t.Errorf("idsize %d: %d segments, %d HEAP DUMP ENDs", id, v.file.segments, v.file.heapDumpEnds)
		}
		if big := v.file.maxBody > int64(opt.SegmentSize); big != (id == 4) {
			t.Errorf("idsize %d: largest record body %d, segment size %d", id, v.file.maxBody, opt.SegmentSize)
		}
		if g, r := countsText(t, c, false), countsText(t, v, false); g != r {
			t.Errorf("idsize %d: generated and read back differ:\n%s\nvs\n%s", id, g, r)
		}
	}
}

func TestDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if _, err := generate(&a, small(8)); err != nil {
		t.Fatal(err)
	}
	if _, err := generate(&b, small(8)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs with the same options differ")
	}
	opt := small(8)
	opt.Seed++
	ca, err := generate(&b, opt)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := generate(&a, small(8))
	if err != nil {
		t.Fatal(err)
	}
	if ca.fpObjects == cb.fpObjects {
		t.Fatal("different seeds give the same object fingerprint")
	}
}

// TestRoundTrip is scripts/over4g.sh in small: crunch and decrunch keep
// every count and fingerprint.
func TestRoundTrip(t *testing.T) {
	for _, id := range []int{4, 8} {
		p, c := genFile(t, small(id))
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		_, err = crunch.Crunch(f, &z, crunch.Options{})
		f.Close()
		if err != nil {
			t.Fatalf("idsize %d: crunch: %v", id, err)
		}
		var out bytes.Buffer
		if _, err := decrunch.Decrunch(bytes.NewReader(z.Bytes()), &out, decrunch.Options{SegmentSize: 100 << 10}); err != nil {
			t.Fatalf("idsize %d: decrunch: %v", id, err)
		}
		q := filepath.Join(t.TempDir(), "out.hprof")
		if err := os.WriteFile(q, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := verify(q)
		if err != nil {
			t.Fatalf("idsize %d: verify output: %v", id, err)
		}
		if g, r := countsText(t, c, false), countsText(t, v, false); g != r {
			t.Errorf("idsize %d: original and round trip differ:\n%s\nvs\n%s", id, g, r)
		}
	}
}

// TestVerifyRejects: a file cut short, or whose segments are not closed, is
// an error.
func TestVerifyRejects(t *testing.T) {
	p, _ := genFile(t, small(4))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"truncated":  b[:len(b)-1000],
		"no END":     b[:len(b)-9],
		"extra byte": append(append([]byte(nil), b...), 0),
	} {
		q := filepath.Join(dir, "bad.hprof")
		if err := os.WriteFile(q, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := verify(q); err == nil {
			t.Errorf("%s: verify accepted it", name)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"100": 100, "4.5GiB": 4831838208, "2K": 2000, "3MiB": 3 << 20} {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := parseSize("x"); err == nil {
		t.Error("parseSize(x) accepted")
	}
}

// TestDecrunchOver4GiB streams what decrunch writes for a BMD whose arrays
// add up to 4.8 GB into hprof.Reader through a pipe, storing nothing: the
// output must be valid HPROF past 4 GiB (records where the lengths say,
// bodies over 2 GiB, segments closed by HEAP DUMP END, objects after the
// 4 GiB mark read back). scripts/over4g.sh does the same through files,
// from a generated dump and crunch.
func TestDecrunchOver4GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 4.8 GB through a pipe")
	}
	var z bytes.Buffer
	w, err := bmd.NewWriter(&z, &bmd.Metadata{HPROFVersion: hprof.Version102, IDSize: 4, Objects: 6, Classes: 1})
	if err != nil {
		t.Fatal(err)
	}
	must := func(_ uint64, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(0, w.HeapDump(true))
	must(w.Class(&bmd.Class{Index: 1}))                  // 1
	must(w.PrimitiveArray(bmd.Long, 300_000_000, false)) // 2: 2.4 GB
	must(w.PrimitiveArray(bmd.Long, 300_000_000, false)) // 3: 2.4 GB, ends past 4 GiB
	must(w.PrimitiveArray(bmd.Byte, 1000, false))        // 4
	must(w.Instance(1, nil))                             // 5
	must(w.ObjectArray(1, []uint64{2, 3, 4, 5}))         // 6
	must(0, w.Root(uint8(hprof.SubRootJNIGlobal), 6, 0, 0, 0x1234, 0))
	must(0, w.HeapDumpEnd())
	must(0, w.Close())

	pr, pw := io.Pipe()
	done := make(chan *decrunch.Stats, 1)
	go func() {
		st, err := decrunch.Decrunch(bytes.NewReader(z.Bytes()), pw, decrunch.Options{})
		pw.CloseWithError(err)
		done <- st
	}()
	sc, err := scan(pr, -1)
	pr.CloseWithError(errors.New("reader stopped"))
	st := <-done
	if err != nil {
		t.Fatal(err)
	}
	info := sc.info
	t.Logf("%+v, %d objects", info, sc.objIDs.n)
	if st == nil || st.OutBytes != info.bytes || info.bytes <= 1<<32 {
		t.Fatalf("decrunch wrote %+v; read %d bytes", st, info.bytes)
	}
	if len(sc.classIDs) != 1 || sc.objIDs.n != 5 || info.heapDumpEnds != 1 || info.segments < 3 || info.maxBody <= 2<<30 {
		t.Errorf("read back: %d classes, %d objects, %+v", len(sc.classIDs), sc.objIDs.n, info)
	}
}
