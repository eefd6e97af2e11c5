package decrunch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	// imported as canon: the package's tests have a helper called names
	canon "github.com/heapcrunch/heapcrunch/names"
)

func crunchV1Bytes(t testing.TB, src []byte, opt crunch.Options) []byte {
	t.Helper()
	var out bytes.Buffer
	if _, err := crunch.CrunchV1(bytes.NewReader(src), &out, opt, nil); err != nil {
		t.Fatalf("crunch --format v1: %v", err)
	}
	return out.Bytes()
}

func decrunchV1Bytes(t testing.TB, b []byte, opt Options) ([]byte, *Stats) {
	t.Helper()
	var out bytes.Buffer
	st, err := Decrunch(bytes.NewReader(b), &out, opt)
	if err != nil {
		t.Fatalf("decrunch v1: %v", err)
	}
	return out.Bytes(), st
}

// v1Diff compares two summaries on what BMD version 1 carries: classes by
// name, instances, references, array lengths, payload sizes, statics and
// their references, and the number of roots (not their kinds).
func v1Diff(want, got *heapstat.Summary) []string {
	var d []string
	if want.Objects != got.Objects {
		d = append(d, fmt.Sprintf("objects %d vs %d", want.Objects, got.Objects))
	}
	if want.Version != got.Version || want.IDSize != got.IDSize {
		d = append(d, fmt.Sprintf("header %s/%d vs %s/%d", want.Version, want.IDSize, got.Version, got.IDSize))
	}
	var wr, gr int64
	for _, n := range want.Roots {
		wr += n
	}
	for _, n := range got.Roots {
		gr += n
	}
	if wr != gr {
		d = append(d, fmt.Sprintf("roots %d vs %d", wr, gr))
	}
	for k, g := range got.Roots {
		if k != hprof.SubTag(0xFF).String() && g > 0 {
			d = append(d, fmt.Sprintf("%d roots of kind %s", g, k))
		}
	}
	names := map[string]bool{}
	for k := range want.Classes {
		names[k] = true
	}
	for k := range got.Classes {
		names[k] = true
	}
	for k := range names {
		w, g := want.Classes[k], got.Classes[k]
		if w == nil || g == nil {
			d = append(d, fmt.Sprintf("class %s: %v vs %v", k, w, g))
			continue
		}
		if w.Instances != g.Instances || w.Refs != g.Refs || w.Elements != g.Elements || w.PayloadBytes != g.PayloadBytes ||
			w.Statics != g.Statics || w.StaticRefs != g.StaticRefs {
			d = append(d, fmt.Sprintf("class %s: %+v vs %+v", k, *w, *g))
		}
	}
	sort.Strings(d)
	return d
}

// TestV1RoundTrip: crunch --format v1 --keep-strings, then decrunch, gives
// the dump's classes, instances, references, array lengths and payload
// sizes, statics and root count; and what BMD version 1 cannot carry is
// what differs from the version 2 path (root kinds, class loaders, the
// order and names of dropped fields).
func TestV1RoundTrip(t *testing.T) {
	inputs := roundTripInputs(t)
	if p := testutil.Fixture("sample32.hprof.gz"); !strings.Contains(strings.Join(inputs, " "), p) {
		inputs = append(inputs, p)
	}
	for _, p := range inputs {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := testutil.ReadAll(t, p)
			b := crunchV1Bytes(t, src, crunch.Options{KeepStrings: true})
			checkOnlyV1Tags(t, b)
			out, st := decrunchV1Bytes(t, b, Options{})
			want, err := heapstat.Summarize(src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := heapstat.Summarize(out)
			if err != nil {
				t.Fatalf("output does not read back: %v", err)
			}
			if d := v1Diff(want, got); len(d) > 0 {
				if len(d) > 20 {
					d = d[:20]
				}
				t.Fatalf("v1 round trip differs:\n%s", strings.Join(d, "\n"))
			}
			if st.Metadata.Hash != bmd.HashJava || st.Metadata.Timestamp == 0 && want.Version != "" {
				t.Errorf("metadata %+v", st.Metadata)
			}
			if len(st.Warnings) == 0 {
				t.Error("no warning about root kinds")
			}
			// Against the version 2 path: the same summary but for root
			// kinds and class layouts.
			v2, _ := decrunchBytes(t, crunchBytes(t, src, crunch.Options{KeepStrings: true}), Options{})
			s2, err := heapstat.Summarize(v2)
			if err != nil {
				t.Fatal(err)
			}
			if d := v1Diff(s2, got); len(d) > 0 {
				t.Errorf("v1 and v2 paths differ:\n%s", strings.Join(d[:min(len(d), 20)], "\n"))
			}
			t.Logf("%d bytes -> %d BMD v1 -> %d HPROF, %d objects; warnings: %q", len(src), len(b), len(out), got.Objects, st.Warnings)
		})
	}
}

// checkOnlyV1Tags reads a version 1 file and checks what the original
// reader needs: tags 1 to 8 only, the HPROF version text as metadata, every
// super class defined, ROOT OBJECTS last.
func checkOnlyV1Tags(t *testing.T, b []byte) {
	t.Helper()
	r, err := bmd.NewV1Reader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(r.Metadata()), "JAVA PROFILE 1.0.") {
		t.Errorf("metadata %q", r.Metadata())
	}
	classes := map[uint32]bool{}
	var supers []uint32
	last := bmd.V1Tag(0)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag < 1 || rec.Tag > 8 {
			t.Fatalf("tag %d", rec.Tag)
		}
		if rec.Tag == bmd.V1ClassDefinition {
			classes[rec.Class.ID] = true
			if rec.Class.Super != 0 {
				supers = append(supers, rec.Class.Super)
			}
		}
		if rec.Tag == bmd.V1Legacy {
			switch rec.HTag {
			case 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0A, 0x0B, 0x0D, 0x0E:
			default:
				t.Errorf("LEGACY record of HPROF tag %#x", rec.HTag)
			}
		}
		last = rec.Tag
	}
	for _, s := range supers {
		if !classes[s] {
			t.Errorf("super class %d is not defined", s)
		}
	}
	if last != bmd.V1RootObjects {
		t.Errorf("last record %s", last)
	}
}

// TestV1NameRecoveryLibUser: names hashed the version 1 way (Java's hash)
// come back from the library and program jars as they do for version 2.
func TestV1NameRecoveryLibUser(t *testing.T) {
	dir := testutil.Fixture("libuser")
	src := testutil.ReadAll(t, filepath.Join(dir, "libuser.hprof.gz"))
	names := NewNameTable()
	sources := []string{filepath.Join(dir, "lib.jar"), filepath.Join(dir, "libuser-app.jar")}
	for _, p := range sources {
		add := names.Source(filepath.Base(p))
		if _, err := apkstrings.ReadJAR(p, func(s string) { apkstrings.Spellings(s, add) }); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	out1, st1 := decrunchV1Bytes(t, crunchV1Bytes(t, src, crunch.Options{}), Options{Names: names})
	out2, st2 := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{Names: names})
	s1, err := heapstat.Summarize(out1)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := heapstat.Summarize(out2)
	if err != nil {
		t.Fatal(err)
	}
	for name := range s2.Classes {
		if _, ok := s1.Classes[name]; !ok && !strings.HasPrefix(name, "unknown$") {
			t.Errorf("class %s recovered from version 2, not from version 1", name)
		}
	}
	for _, want := range []string{"org.example.lib.Node$Cursor", "LibUser$Holder"} {
		found := false
		for name := range s1.Classes {
			found = found || strings.ReplaceAll(name, "/", ".") == want
		}
		if !found {
			t.Errorf("class %s not recovered from version 1", want)
		}
	}
	t.Logf("v1: %d recovered, %d missing, %d Java collisions; v2: %d recovered, %d missing", st1.Recovered, st1.Missing, names.JavaCollisions, st2.Recovered, st2.Missing)
	if st1.Recovered+uint64(names.JavaCollisions) < st2.Recovered {
		t.Errorf("version 1 recovered %d names, version 2 %d", st1.Recovered, st2.Recovered)
	}
}

func be32(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

// originalStyleFile is a version 1 file as the original cruncher wrote it:
// no marker, LEGACY records with the dump's original IDs, classes in dump
// order (a super class after its subclass), the roots last.
func originalStyleFile(t testing.TB) []byte {
	var out bytes.Buffer
	w, _ := bmd.NewV1Writer(&out, []byte("JAVA PROFILE 1.0.3"))
	w.ClearString(1, []byte("java.lang.Object"))
	w.HashedString(2, 24, canon.JavaHashString("com.example.MainActivity"))
	w.HashedString(3, 5, canon.JavaHashString("mView"))
	w.HashedString(4, 6, canon.JavaHashString("mCount"))
	w.Legacy(0x0E, be32(0, 0)[:6])                                        // CONTROL SETTINGS: kept
	w.Legacy(0x04, be32(0x70001000, 0x400123, 0x400124, 0x400125, 7, 42)) // STACK FRAME: original IDs
	w.Legacy(0x05, be32(1, 1, 1, 0x70001000))                             // STACK TRACE
	w.Legacy(0x0A, be32(1, 0x12c04000, 1, 0x400200, 0x400201, 0))         // START THREAD
	w.Class(&bmd.V1Class{ID: 5, Super: 6, Name: 2, Fields: []bmd.Field{{Name: 3, Type: bmd.Object}}, Discarded: 6,
		Statics: []bmd.Static{{Name: 4, Type: bmd.Int, Value: 0}}})
	w.Class(&bmd.V1Class{ID: 6, Name: 1})
	w.Instance(7, 5, []uint64{8})
	w.ObjectArray(8, 6, []uint32{7, 0})
	w.PrimitiveArray(9, bmd.Char, 3)
	w.RootObjects([]uint32{7, 9})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestV1OriginalToolFile: a file of the original cruncher gives a valid
// HPROF: LOAD CLASS made up, fillers for the discarded fields, roots as
// ROOT UNKNOWN, legacy records whose IDs mean nothing dropped, and
// warnings that say so.
func TestV1OriginalToolFile(t *testing.T) {
	out, st := decrunchV1Bytes(t, originalStyleFile(t), Options{})
	if err := heapstat.ReadAll(out); err != nil {
		t.Fatal(err)
	}
	s, err := heapstat.Summarize(out)
	if err != nil {
		t.Fatal(err)
	}
	act := s.Classes[Placeholder(uint64(uint32(canon.JavaHashString("com.example.MainActivity"))))]
	if act == nil || act.Instances != 1 || act.Refs != 1 || act.PayloadBytes != 4+6 || act.Fields != 1+3 {
		t.Errorf("MainActivity: %+v (classes %v)", act, s.Classes)
	}
	if s.Roots["ROOT UNKNOWN"] != 2 || s.Objects != 3 || s.Version != "JAVA PROFILE 1.0.3" || s.IDSize != 4 {
		t.Errorf("summary %+v", s)
	}
	all := strings.Join(st.Warnings, "\n")
	for _, w := range []string{"2 GC roots written as ROOT UNKNOWN", "2 classes given a LOAD CLASS", "field_removed",
		"STACK FRAME ×1", "STACK TRACE ×1", "START THREAD ×1"} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	// No record of the output uses the original IDs.
	for _, id := range []uint32{0x70001000, 0x400123, 0x12c04000} {
		if bytes.Contains(out, be32(id)) {
			t.Errorf("original ID %#x in the output", id)
		}
	}
	// CONTROL SETTINGS is kept.
	if !bytes.Contains(out, append([]byte{0x0E, 0, 0, 0, 0, 0, 0, 0, 6}, 0, 0, 0, 0, 0, 0)) {
		t.Error("CONTROL SETTINGS not kept")
	}
}

// TestV1OwnLegacyRecords: the LEGACY records crunch --format v1 writes
// (LOAD CLASS with serials, frames, traces, threads) come back as records,
// so that decrunch of a v1 file keeps stack traces and class serials.
func TestV1OwnLegacyRecords(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	b := crunchV1Bytes(t, src, crunch.Options{KeepStrings: true})
	out, st := decrunchV1Bytes(t, b, Options{})
	count := func(data []byte) map[hprof.Tag]int {
		m := map[hprof.Tag]int{}
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range r.Records() {
			if err != nil {
				t.Fatal(err)
			}
			m[rec.Tag]++
		}
		return m
	}
	want, got := count(src), count(out)
	for _, tag := range []hprof.Tag{hprof.TagStackFrame, hprof.TagStackTrace, hprof.TagStartThread, hprof.TagLoadClass} {
		if want[tag] != got[tag] {
			t.Errorf("%s: %d in the dump, %d after v1", tag, want[tag], got[tag])
		}
	}
	if st.Metadata.IDSize != 8 || st.Metadata.Options != "--keep-strings" {
		t.Errorf("the marker's metadata was not read: %+v", st.Metadata)
	}
	for _, w := range st.Warnings {
		if strings.Contains(w, "LOAD CLASS") || strings.Contains(w, "legacy") {
			t.Errorf("unexpected warning %q", w)
		}
	}
}

// TestV1BadInput: damaged version 1 input gives an error with an offset,
// and --salvage writes what precedes the damage. Cut at any of 200
// places, a real file gives: inside a record, a *bmd.FormatError that
// names the truncated record and its offset, and with Salvage the same
// error in Stats.Salvaged and exactly the HPROF of the file cut at the
// last record boundary before the damage, byte for byte (class
// definitions read before the damage included); between two records (version 1
// has no end marker), no error; inside the header, an error in the
// header, even with Salvage.
func TestV1BadInput(t *testing.T) {
	good := originalStyleFile(t)
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"truncated", good[:len(good)-3], "truncated in ROOT OBJECTS record at offset"},
		{"unknown tag", append(append([]byte{}, good...), 0x09), "unknown record tag 9"},
		{"corrupt varint", append(append([]byte{}, good...), 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "corrupt varint"},
	} {
		_, err := Decrunch(bytes.NewReader(c.in), io.Discard, Options{})
		var fe *bmd.FormatError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "at offset") {
			t.Errorf("%s: %v", c.name, err)
		}
		var out bytes.Buffer
		st, err := Decrunch(bytes.NewReader(c.in), &out, Options{Salvage: true})
		if err != nil || st.Salvaged == nil {
			t.Errorf("%s salvage: %v %v", c.name, st, err)
			continue
		}
		if err := heapstat.ReadAll(out.Bytes()); err != nil {
			t.Errorf("%s salvage: output does not read: %v", c.name, err)
		}
	}
	src := testutil.ReadAll(t, testutil.Fixture("sample32.hprof.gz"))
	b := crunchV1Bytes(t, src, crunch.Options{})
	bounds, tags := v1Records(t, b)
	kinds := map[bmd.V1Tag]bool{}
	for n := 0; n < len(b); n += 1 + len(b)/200 {
		_, err := Decrunch(bytes.NewReader(b[:n]), io.Discard, Options{})
		var out bytes.Buffer
		st, serr := Decrunch(bytes.NewReader(b[:n]), &out, Options{Salvage: true})
		var fe *bmd.FormatError
		if int64(n) < bounds[0] {
			if !errors.As(err, &fe) || fe.Record != "header" || serr == nil {
				t.Errorf("cut at %d, in the header: %v; with salvage %v; want an error in the header", n, err, serr)
			}
			continue
		}
		k := sort.Search(len(bounds), func(i int) bool { return bounds[i] > int64(n) }) - 1 // the record cut
		if int64(n) == bounds[k] {
			if err != nil || serr != nil || st.Salvaged != nil {
				t.Errorf("cut at %d, between two records: %v; with salvage %v, %v; want no error", n, err, serr, st)
			}
			continue
		}
		kinds[tags[k]] = true
		where := fmt.Sprintf("truncated in %s record at offset %d", tags[k], bounds[k])
		if !errors.As(err, &fe) || !errors.Is(err, io.ErrUnexpectedEOF) || fe.Offset != bounds[k] || !strings.Contains(err.Error(), where) {
			t.Errorf("cut at %d: %v, want an error saying %q", n, err, where)
			continue
		}
		if serr != nil || st.Salvaged == nil || st.Salvaged.Error() != err.Error() {
			t.Errorf("cut at %d: salvage: %v, reported damage %v, want none and %v", n, serr, st, err)
			continue
		}
		keep := bounds[k]
		want, _ := decrunchV1Bytes(t, b[:keep], Options{})
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("cut at %d (in a %s record at offset %d): the salvaged HPROF (%d bytes) is not that of the file cut at %d (%d bytes)",
				n, tags[k], bounds[k], out.Len(), keep, len(want))
		}
	}
	for _, k := range []bmd.V1Tag{bmd.V1ClassDefinition, bmd.V1InstanceDump, bmd.V1ObjectArray, bmd.V1String} {
		if !kinds[k] {
			t.Errorf("test premise: no cut inside a %s record", k)
		}
	}
}

// v1Records returns the offsets of the records of a version 1 file
// (bounds[i] is that of record i, the last one the end of the file) and
// their tags.
func v1Records(t *testing.T, b []byte) (bounds []int64, tags []bmd.V1Tag) {
	t.Helper()
	r, err := bmd.NewV1Reader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bounds = []int64{r.Offset()}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return bounds, tags
		}
		if err != nil {
			t.Fatal(err)
		}
		bounds, tags = append(bounds, r.Offset()), append(tags, rec.Tag)
	}
}

func TestNameTableForHash(t *testing.T) {
	tb := NewNameTable()
	add := tb.Source("test")
	for _, s := range []string{"mDestroyed", "com.example.MainActivity", "Aa", "BB", "été"} {
		add(s)
	}
	j := tb.ForHash(bmd.HashJava)
	for _, s := range []string{"mDestroyed", "com.example.MainActivity", "été"} {
		got, ok := j.Lookup(uint64(uint32(canon.JavaHashString(s))), uint64(len(s)))
		if !ok || got != s {
			t.Errorf("Java lookup of %q: %q %v", s, got, ok)
		}
	}
	// "Aa" and "BB" share Java's hash and length: the smaller wins.
	if got, _ := j.Lookup(uint64(uint32(canon.JavaHashString("Aa"))), 2); got != "Aa" || tb.JavaCollisions != 1 {
		t.Errorf("collision: %q, %d collisions", got, tb.JavaCollisions)
	}
	if _, ok := j.Lookup(uint64(uint32(canon.JavaHashString("mDestroyed"))), 9); ok {
		t.Error("a wrong length matched")
	}
	if tb.ForHash(bmd.HashXX64) != Names(tb) || tb.ForHash("") != Names(tb) || tb.ForHash("md5") != nil {
		t.Error("ForHash")
	}
}

// TestV1DeepHierarchy: instance sizes of a deep class hierarchy cost its
// depth once, not once per class.
func TestV1DeepHierarchy(t *testing.T) {
	var b bytes.Buffer
	w, _ := bmd.NewV1Writer(&b, []byte("JAVA PROFILE 1.0.2"))
	w.ClearString(1, []byte("x"))
	const depth = 30000
	for i := uint32(1); i <= depth; i++ {
		super := i + 1
		if i == depth {
			super = 0
		}
		w.Class(&bmd.V1Class{ID: i, Super: super, Name: 1, Discarded: 1})
	}
	w.Instance(depth+1, depth, nil)
	w.RootObjects([]uint32{depth + 1})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out, _ := decrunchV1Bytes(t, b.Bytes(), Options{})
	s, err := heapstat.Summarize(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Classes["x"]; c == nil || c.Instances != 1 || c.PayloadBytes != 1 {
		t.Errorf("%+v", c)
	}
}

// TestOpenSourceLongVersion: a version number of 1 written in two bytes
// (0x81 0x00, a varint as valid as 0x01) goes to the version 1 reader,
// as 0x01 does, whose error says what is wrong and where; the version 2
// reader's "version 1 file" is not an answer (FuzzDecrunchV1 found it).
func TestOpenSourceLongVersion(t *testing.T) {
	for _, file := range [][]byte{
		{0x81, 0x00, 0xD2, 0x95, 0x65}, // metadata length of 1.6 MB
		{0x01, 0xD2, 0x95, 0x65},
	} {
		_, err := Decrunch(bytes.NewReader(file), io.Discard, Options{})
		var fe *bmd.FormatError
		if !errors.As(err, &fe) || errors.Is(err, bmd.ErrVersion1) {
			t.Errorf("% x: error %v, want the version 1 reader's format error", file, err)
		}
		if _, v1, _ := OpenSource(bytes.NewReader(file), file); !v1 {
			t.Errorf("% x: OpenSource does not take it for version 1", file)
		}
	}
}

// TestV1WarningsAfterError: when writing stops early (here at a legacy
// START THREAD whose object ID is too large for 4-byte IDs, in a file with
// this project's marker), a version 1 file's warnings are the same
// whichever way the second pass ran (its reader on two goroutines reads
// ahead of the writer), and the roots line counts the roots written: none.
func TestV1WarningsAfterError(t *testing.T) {
	var out bytes.Buffer
	w, _ := bmd.NewV1Writer(&out, []byte("JAVA PROFILE 1.0.2"))
	w.ClearString(1, bmd.AppendV1Marker(nil, &bmd.Metadata{IDSize: 4, Hash: bmd.HashJava}))
	w.ClearString(2, []byte("java.lang.Object"))
	w.Legacy(0x0A, be32(1, 0xF0000000, 0, 0, 0, 0)) // START THREAD
	w.Class(&bmd.V1Class{ID: 3, Name: 2})
	ids := []uint32{}
	for i := range uint32(2100) {
		w.Instance(4+i, 3, nil)
		ids = append(ids, 4+i)
	}
	w.RootObjects(ids)
	w.Flush()
	data := out.Bytes()
	sameSecondPassWays(t, data, Options{Salvage: true})
	st, err := Decrunch(bytes.NewReader(data), io.Discard, Options{Salvage: true})
	var oe *IDOverflowError
	if err != nil || !errors.As(st.Salvaged, &oe) {
		t.Fatalf("error %v, Salvaged %v; want the overflow salvaged", err, st.Salvaged)
	}
	for _, line := range st.Warnings {
		if strings.Contains(line, "GC roots written") {
			t.Errorf("warning %q, with %d roots written", line, st.Roots)
		}
	}
}

// TestV1FillersBounded: a version 1 class of 10 bytes may discard 65,535
// longs, counted as the original's 131,070 int fillers (it gets 65,535
// long fillers, TestV1FillersFitClassDump);
// a file of such classes, with no object to place them (Android), is
// refused once its filler fields pass the bound, where it held them all
// (100 classes of 1 KB: 470 MB), with salvage too, the same whichever way
// the second pass runs; a class within the bound is converted with all its
// fillers.
func TestV1FillersBounded(t *testing.T) {
	file := func(classes int) []byte {
		var b bytes.Buffer
		w, err := bmd.NewV1Writer(&b, []byte(hprof.Version103))
		if err != nil {
			t.Fatal(err)
		}
		w.ClearString(1, []byte("C"))
		for i := 1; i <= classes; i++ {
			w.Class(&bmd.V1Class{ID: uint32(i), Name: 1, Discarded: bmd.MaxV1Discarded})
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var out countingDiscard
	if _, err := Decrunch(bytes.NewReader(file(1)), &out, Options{}); err != nil || out.n < bmd.MaxV1Discarded/8*5 {
		t.Fatalf("one class: error %v, %d bytes written", err, out.n)
	}
	big := file(100)
	for _, salvage := range []bool{false, true} {
		st, err := Decrunch(bytes.NewReader(big), io.Discard, Options{Salvage: salvage})
		if salvage && err == nil {
			err = st.Salvaged
		}
		var fe *bmd.FormatError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "filler fields") {
			t.Fatalf("100 classes, salvage %v: error %v, want too many filler fields", salvage, err)
		}
		sameSecondPassWays(t, big, Options{Salvage: salvage})
	}
}

// TestV1FillersFitClassDump: a class whose discarded fields, as the
// original decruncher's ints and bytes, would make its CLASS DUMP hold more
// than 65535 fields gets longs instead (the fewest fields its bytes can
// be), and the HPROF written reads back whole: its instances' sizes are
// their classes' fields. (The fuzz target found a class of 131,070 int
// fillers, whose count wrapped in its CLASS DUMP.)
func TestV1FillersFitClassDump(t *testing.T) {
	type shape struct {
		fields                  int
		longs, ints, shorts, by int
	}
	cases := []struct {
		kept      int
		discarded uint32
		want      shape
	}{
		{0, bmd.MaxV1Discarded, shape{65535, 65535, 0, 0, 0}},
		{2, 8*65530 + 7, shape{65535, 65530, 3, 1, 1}}, // 2 kept ints
		{0, 65535 * 4, shape{65535, 0, 65535, 0, 0}},   // as the original, just fits
		{1, 65535 * 4, shape{32769, 32767, 2, 0, 0}},
		{1, 11, shape{6, 0, 3, 0, 3}},
	}
	var b bytes.Buffer
	w, err := bmd.NewV1Writer(&b, []byte(hprof.Version102))
	if err != nil {
		t.Fatal(err)
	}
	w.ClearString(1, []byte("C"))
	var roots []uint32
	for i, c := range cases {
		fs := make([]bmd.Field, c.kept)
		vals := make([]uint64, c.kept)
		for j := range fs {
			fs[j], vals[j] = bmd.Field{Name: 1, Type: bmd.Int}, uint64(j+7)
		}
		if err := w.Class(&bmd.V1Class{ID: uint32(i + 1), Name: 1, Fields: fs, Discarded: c.discarded}); err != nil {
			t.Fatal(err)
		}
		if err := w.Instance(uint32(i+100), uint32(i+1), vals); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, uint32(i+100))
	}
	w.RootObjects(roots)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out, _ := decrunchV1Bytes(t, b.Bytes(), Options{})
	type class struct {
		shape shape
		size  int // of its fields
	}
	classes := map[uint64]class{}
	var got []shape
	err = heapstat.Walk(out, func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		switch {
		case s == nil:
		case s.Tag == hprof.SubClassDump:
			c := class{shape: shape{fields: len(s.Class.Fields)}}
			for _, f := range s.Class.Fields {
				c.size += f.Type.Size(4)
				switch f.Type {
				case hprof.Long:
					c.shape.longs++
				case hprof.Int:
					c.shape.ints++
				case hprof.Short:
					c.shape.shorts++
				case hprof.Byte:
					c.shape.by++
				}
			}
			classes[s.Class.ID] = c
			if int(s.Class.InstanceSize) != c.size {
				t.Errorf("class %#x: instance size %d, fields of %d bytes", s.Class.ID, s.Class.InstanceSize, c.size)
			}
		case s.Tag == hprof.SubInstanceDump:
			c, ok := classes[s.ClassID]
			if !ok {
				return fmt.Errorf("instance of class %#x before its CLASS DUMP", s.ClassID)
			}
			if len(s.Data) != c.size {
				t.Errorf("instance of class %#x: %d bytes, its fields %d", s.ClassID, len(s.Data), c.size)
			}
			got = append(got, c.shape)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the HPROF written does not read back: %v", err)
	}
	if len(got) != len(cases) {
		t.Fatalf("%d instances read back, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("class of %d kept ints and %d discarded bytes: %+v, want %+v", c.kept, c.discarded, got[i], c.want)
		}
	}
}

// TestV1SizesLinear: instance sizes cost each class a few steps however
// the classes are ordered. Two crafted files: a line of n classes whose top
// super class is not defined, then k rounds each defining that missing
// class (its own super not defined, the next round's) and a subclass of
// the line's bottom, each round flushed by a STRING (before the sizes
// went on from a missing class once it was defined, each round walked the
// whole line again: n·k steps); and n classes in pairs, each pair a cycle
// (each cycle was walked as many times as there were classes). The sizes
// must be right, each class counted once.
func TestV1SizesLinear(t *testing.T) {
	const n, k = 3000, 300
	sizes := func(t *testing.T, file []byte) (map[uint64]uint32, int64) {
		t.Helper()
		s, err := NewV1Source(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint64]uint32{}
		for {
			rec, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Kind == bmd.KindClass {
				got[rec.ID] = rec.Def.InstanceSize
			}
		}
		return got, s.sizeSteps
	}

	t.Run("line defined late", func(t *testing.T) {
		var b bytes.Buffer
		w, _ := bmd.NewV1Writer(&b, []byte("JAVA PROFILE 1.0.2"))
		u := func(i int) uint32 { return uint32(n + i) }         // the missing tops, 1..k+1
		d := func(i int) uint32 { return uint32(n + k + 1 + i) } // the subclasses of the bottom
		for i := 1; i <= n; i++ {
			super := uint32(i + 1)
			if i == n {
				super = u(1)
			}
			w.Class(&bmd.V1Class{ID: uint32(i), Super: super, Discarded: 1})
		}
		w.HashedString(1, 1, 0)
		for i := 1; i <= k; i++ {
			w.Class(&bmd.V1Class{ID: u(i), Super: u(i + 1), Discarded: 2})
			w.Class(&bmd.V1Class{ID: d(i), Super: 1, Discarded: 1})
			w.HashedString(uint32(i+1), 1, 0)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		got, steps := sizes(t, b.Bytes())
		for i := 1; i <= k; i++ {
			// its own byte, the line's n, and the tops defined so far
			if want := uint32(1 + n + 2*i); got[uint64(d(i))] != want {
				t.Fatalf("class %d (round %d): instance size %d, want %d", d(i), i, got[uint64(d(i))], want)
			}
		}
		if want := uint32(n); got[1] != want {
			t.Errorf("the line's bottom: instance size %d, want %d (its top not defined yet)", got[1], want)
		}
		if max := int64(4 * (n + 2*k)); steps > max {
			t.Errorf("%d steps for %d classes, want at most %d", steps, n+2*k, max)
		}
	})

	t.Run("cycles", func(t *testing.T) {
		var b bytes.Buffer
		w, _ := bmd.NewV1Writer(&b, []byte("JAVA PROFILE 1.0.2"))
		for i := uint32(1); i < n; i += 2 {
			w.Class(&bmd.V1Class{ID: i, Super: i + 1, Discarded: 1})
			w.Class(&bmd.V1Class{ID: i + 1, Super: i, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}}})
			w.HashedString(i, 1, 0)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		got, steps := sizes(t, b.Bytes())
		for i := uint64(1); i < n; i++ {
			if got[i] != 5 {
				t.Fatalf("class %d of a cycle: instance size %d, want 5 (its fields and its super class's, once)", i, got[i])
			}
		}
		if max := int64(4 * n); steps > max {
			t.Errorf("%d steps for %d classes, want at most %d", steps, n, max)
		}
	})
}

// TestV1CycleInstanceFits: in a version 1 file whose super classes form a
// cycle (damaged or crafted input), an instance's data and its class
// dump's instance size both count each class of the cycle once, however
// many other classes are defined.
func TestV1CycleInstanceFits(t *testing.T) {
	var b bytes.Buffer
	w, _ := bmd.NewV1Writer(&b, []byte(hprof.Version102))
	w.ClearString(1, []byte("C"))
	w.Class(&bmd.V1Class{ID: 1, Super: 2, Name: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}}, Discarded: 3})
	w.Class(&bmd.V1Class{ID: 2, Super: 3, Name: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Short}}})
	w.Class(&bmd.V1Class{ID: 3, Super: 2, Name: 1, Discarded: 5})
	for i := uint32(0); i < 20; i++ {
		w.Class(&bmd.V1Class{ID: 100 + i, Name: 1})
	}
	if err := w.Instance(50, 1, []uint64{7, 8}); err != nil {
		t.Fatal(err)
	}
	w.RootObjects([]uint32{50})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out, _ := decrunchV1Bytes(t, b.Bytes(), Options{})
	const want = 4 + 3 + 2 + 5 // each class's fields and discarded bytes, once
	sizes := map[uint64]uint32{}
	var size uint32
	data := -1
	err := heapstat.Walk(out, func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		switch {
		case s == nil:
		case s.Tag == hprof.SubClassDump:
			sizes[s.Class.ID] = s.Class.InstanceSize
		case s.Tag == hprof.SubInstanceDump:
			size, data = sizes[s.ClassID], len(s.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the HPROF written does not read back: %v", err)
	}
	if size != want || data != want {
		t.Errorf("the instance's class: instance size %d, the instance %d bytes of data; want %d both", size, data, want)
	}
}
