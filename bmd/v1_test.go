package bmd

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/names"
)

func TestV1TypeCodes(t *testing.T) {
	want := map[Type]uint8{Object: 0, Int: 1, Boolean: 2, Byte: 3, Char: 4, Float: 5, Double: 6, Long: 7, Short: 8}
	for ty, code := range want {
		c, ok := V1TypeCode(ty)
		if !ok || c != code {
			t.Errorf("V1TypeCode(%d) = %d %v, want %d", ty, c, ok, code)
		}
		back, ok := TypeFromV1(uint64(code))
		if !ok || back != ty {
			t.Errorf("TypeFromV1(%d) = %d", code, back)
		}
	}
	if _, ok := TypeFromV1(9); ok {
		t.Error("type code 9 accepted")
	}
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// v1Sample writes one record of every kind, with every value type and sign.
func v1Sample(t testing.TB) ([]byte, []V1Record) {
	t.Helper()
	var out bytes.Buffer
	w, err := NewV1Writer(&out, []byte("JAVA PROFILE 1.0.3"))
	if err != nil {
		t.Fatal(err)
	}
	var want []V1Record
	add := func(r V1Record, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	add(V1Record{Tag: V1String, ID: 1, Text: []byte("java.lang.Object")}, w.ClearString(1, []byte("java.lang.Object")))
	add(V1Record{Tag: V1HashedString, ID: 2, Length: 24, Hash: names.JavaHashString("com.example.MainActivity")},
		w.HashedString(2, 24, names.JavaHashString("com.example.MainActivity")))
	add(V1Record{Tag: V1HashedString, ID: 300, Length: 1, Hash: 97}, w.HashedString(300, 1, 97))
	base := V1Class{ID: 1, Name: 1, Fields: []Field{{Name: 300, Type: Object, Kept: true}}, Discarded: 4}
	add(V1Record{Tag: V1ClassDefinition, Class: base}, w.Class(&base))
	all := []Type{Object, Int, Boolean, Byte, Char, Float, Double, Long, Short}
	vals := []uint64{7, uint64(uint32(0xFFFFFFFE)), 1, 0xFF, 0xFFFF, uint64(math.Float32bits(-1.5)), math.Float64bits(3.25), uint64(1 << 63), 0x8000}
	c := V1Class{ID: 2, Super: 1, Name: 2, Discarded: 13}
	for i, ty := range all {
		c.Constants = append(c.Constants, Constant{Index: uint16(i), Type: ty, Kept: true, Value: vals[i]})
		c.Statics = append(c.Statics, Static{Name: uint64(i + 1), Type: ty, Kept: true, Value: vals[i]})
		c.Fields = append(c.Fields, Field{Name: uint64(i + 1), Type: ty, Kept: true})
	}
	add(V1Record{Tag: V1ClassDefinition, Class: c}, w.Class(&c))
	iv := append(append([]uint64(nil), vals...), 9) // class 2's fields, then class 1's
	add(V1Record{Tag: V1InstanceDump, ID: 3, Of: 2, Values: iv}, w.Instance(3, 2, iv))
	add(V1Record{Tag: V1InstanceDump, ID: 1 << 31, Of: 1, Values: []uint64{0}}, w.Instance(1<<31, 1, []uint64{0}))
	add(V1Record{Tag: V1ObjectArray, ID: 4, Of: 1, IDs: []uint32{0, 3, 4}}, w.ObjectArray(4, 1, []uint32{0, 3, 4}))
	add(V1Record{Tag: V1ObjectArray, ID: 5, Of: 9, IDs: []uint32{}}, w.ObjectArray(5, 9, nil))
	for i, ty := range all[1:] {
		add(V1Record{Tag: V1PrimitiveArray, ID: uint32(10 + i), Type: ty, Count: uint32(i * 100)}, w.PrimitiveArray(uint32(10+i), ty, uint32(i*100)))
	}
	add(V1Record{Tag: V1Legacy, HTag: 0x05, Text: make([]byte, 12)}, w.Legacy(0x05, make([]byte, 12)))
	add(V1Record{Tag: V1Legacy, HTag: 0xFE, Text: []byte{}}, w.Legacy(0xFE, nil))
	add(V1Record{Tag: V1RootObjects, IDs: []uint32{3, 1, 99}}, w.RootObjects([]uint32{3, 1, 99}))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), want
}

// normalize keeps the fields a record of its tag sets, deep-copied.
func normalize(r *V1Record) V1Record {
	c := V1Record{Tag: r.Tag}
	switch r.Tag {
	case V1String:
		c.ID, c.Text = r.ID, append([]byte{}, r.Text...)
	case V1HashedString:
		c.ID, c.Length, c.Hash = r.ID, r.Length, r.Hash
	case V1ClassDefinition:
		c.Class = *r.Class.Clone()
		if len(c.Class.Constants) == 0 {
			c.Class.Constants = nil
		}
		if len(c.Class.Statics) == 0 {
			c.Class.Statics = nil
		}
		if len(c.Class.Fields) == 0 {
			c.Class.Fields = nil
		}
	case V1InstanceDump:
		c.ID, c.Of, c.Values = r.ID, r.Of, append([]uint64{}, r.Values...)
	case V1ObjectArray:
		c.ID, c.Of, c.IDs = r.ID, r.Of, append([]uint32{}, r.IDs...)
	case V1RootObjects:
		c.IDs = append([]uint32{}, r.IDs...)
	case V1PrimitiveArray:
		c.ID, c.Type, c.Count = r.ID, r.Type, r.Count
	case V1Legacy:
		c.HTag, c.Text = r.HTag, append([]byte{}, r.Text...)
	}
	return c
}

func readAllV1(t testing.TB, b []byte) ([]V1Record, *V1Reader) {
	t.Helper()
	r, err := NewV1Reader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var got []V1Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return got, r
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, normalize(rec))
	}
}

// TestV1RoundTrip writes every record kind and reads it back.
func TestV1RoundTrip(t *testing.T) {
	b, want := v1Sample(t)
	got, r := readAllV1(t, b)
	if string(r.Metadata()) != "JAVA PROFILE 1.0.3" {
		t.Errorf("metadata %q", r.Metadata())
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		w := normalize(&want[i])
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], w)
		}
	}
	if ch, ok := r.Layout(2); !ok || len(ch) != 10 || ch[9].Name != 300 {
		t.Errorf("layout of class 2: %v %v", ch, ok)
	}
}

// TestV1Encodings pins the byte encodings of the original writer: int32
// varints sign-extended to 10 bytes, longs as plain varints, float and
// double little-endian, boolean and byte raw, char big-endian.
func TestV1Encodings(t *testing.T) {
	for _, c := range []struct {
		t    Type
		v    uint64
		want string
	}{
		{Object, 300, "ac02"},
		{Int, uint64(uint32(0xFFFFFFFF)), "ffffffffffffffffff01"}, // -1
		{Int, 127, "7f"},
		{Short, 0xFFFF, "ffffffffffffffffff01"}, // -1, sign-extended
		{Short, 0x7FFF, "ffff01"},
		{Long, uint64(1<<64 - 2), "feffffffffffffffff01"}, // -2
		{Float, uint64(math.Float32bits(1.5)), "0000c03f"},
		{Double, math.Float64bits(1.5), "000000000000f83f"},
		{Boolean, 1, "01"},
		{Byte, 0xAB, "ab"},
		{Char, 0x00E9, "00e9"},
	} {
		got := hex.EncodeToString(appendV1Value(nil, c.t, c.v))
		if got != c.want {
			t.Errorf("type %d value %#x: %s, want %s", c.t, c.v, got, c.want)
		}
	}
}

// publishedLong is the long static of the published CLASS DEFINITION
// example, the varint a2 c5 f6 d6 b4 82 9b 85 e9 01.
const publishedLong = 0xE90A6C134ADDA2A2

// TestV1PublishedExamples decodes the byte examples of the original tools'
// "BMD File Format Reference" (hprof-tools, docs/bmd file format.md), whose
// tables give each field's bytes and decoded value.
func TestV1PublishedExamples(t *testing.T) {
	const hdr = "01 12 4a415641205052 4f46494c4520312e302e33" // version 1, "JAVA PROFILE 1.0.3"
	read := func(body string) *V1Record {
		t.Helper()
		r, err := NewV1Reader(bytes.NewReader(mustHex(t, hdr+body)))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("%s: bytes left: %v", body, err)
		}
		return rec
	}
	// 3.2.1 String: id 408, length 23, "java.lang.ref.Reference".
	if r := read("01 9803 17 6a6176612e6c616e672e7265662e5265666572656e6365"); r.ID != 408 || string(r.Text) != "java.lang.ref.Reference" {
		t.Errorf("STRING: %+v", r)
	}
	// 3.2.2 Hashed string: id 118, length 36, hash 324731034.
	if r := read("02 76 24 9a81ec9a01"); r.ID != 118 || r.Length != 36 || r.Hash != 324731034 {
		t.Errorf("HASHED STRING: %+v", r)
	}
	// 3.2.3 Class definition: class 52, super 53, name 8488, no constants,
	// statics 13537 (object, 54) and 33221 (long, a 10-byte varint), no
	// instance fields, 0 skipped.
	r := read("03 34 35 a842 00 02 e169 00 36 c58302 07 a2c5f6d6b4829b85e901 00 00")
	c := r.Class
	if c.ID != 52 || c.Super != 53 || c.Name != 8488 || len(c.Constants) != 0 || len(c.Statics) != 2 || len(c.Fields) != 0 || c.Discarded != 0 {
		t.Errorf("CLASS DEFINITION: %+v", c)
	} else if s := c.Statics; s[0].Name != 13537 || s[0].Type != Object || s[0].Value != 54 || s[1].Name != 33221 || s[1].Type != Long || s[1].Value != publishedLong {
		t.Errorf("CLASS DEFINITION statics: %+v", s)
	}
	// 3.2.4 Instance dump (object 185 of class 190, one null object field)
	// needs its class: define class 190 with one object field first.
	rd, err := NewV1Reader(bytes.NewReader(mustHex(t, hdr+"03 be01 00 00 00 00 01 01 00 00"+"04 b901 be01 00")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	if r, err := rd.Next(); err != nil || r.ID != 185 || r.Of != 190 || len(r.Values) != 1 || r.Values[0] != 0 {
		t.Errorf("INSTANCE DUMP: %+v %v", r, err)
	}
	// 3.2.5 Root objects: 10736 and 14569 (the table prints "f053r").
	if r := read("05 02 f053 e971"); !reflect.DeepEqual(r.IDs, []uint32{10736, 14569}) {
		t.Errorf("ROOT OBJECTS: %+v", r)
	}
	// 3.2.6 Object array: object 466, class 470, two null elements.
	if r := read("06 d203 d603 02 00 00"); r.ID != 466 || r.Of != 470 || !reflect.DeepEqual(r.IDs, []uint32{0, 0}) {
		t.Errorf("OBJECT ARRAY: %+v", r)
	}
	// 3.2.7 Primitive array placeholder: object 146, type 3 (byte), 216 elements.
	if r := read("07 9201 03 d801"); r.ID != 146 || r.Type != Byte || r.Count != 216 {
		t.Errorf("PRIMITIVE ARRAY PLACEHOLDER: %+v", r)
	}
	// 3.2.8 Legacy record: HPROF tag 5 (STACK TRACE), 12 bytes (the table
	// prints the decimal length "12", as its note on decoded values says).
	if r := read("08 05 0c 000000000000000000000000"); r.HTag != 5 || len(r.Text) != 12 {
		t.Errorf("LEGACY: %+v", r)
	}

	// And our writer produces those bytes.
	var out bytes.Buffer
	w, _ := NewV1Writer(&out, []byte("JAVA PROFILE 1.0.3"))
	w.ClearString(408, []byte("java.lang.ref.Reference"))
	w.HashedString(118, 36, 324731034)
	w.Class(&V1Class{ID: 52, Super: 53, Name: 8488, Statics: []Static{{Name: 13537, Type: Object, Value: 54}, {Name: 33221, Type: Long, Value: publishedLong}}})
	w.Class(&V1Class{ID: 190, Fields: []Field{{Name: 1, Type: Object}}})
	w.Instance(185, 190, []uint64{0})
	w.RootObjects([]uint32{10736, 14569})
	w.ObjectArray(466, 470, []uint32{0, 0})
	w.PrimitiveArray(146, Byte, 216)
	w.Legacy(5, make([]byte, 12))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, hdr+"01 9803 17 6a6176612e6c616e672e7265662e5265666572656e6365"+"02 76 24 9a81ec9a01"+
		"03 34 35 a842 00 02 e169 00 36 c58302 07 a2c5f6d6b4829b85e901 00 00"+"03 be01 00 00 00 00 01 01 00 00"+"04 b901 be01 00"+
		"05 02 f053 e971"+"06 d203 d603 02 00 00"+"07 9201 03 d801"+"08 05 0c 000000000000000000000000")
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("writer:\n got %x\nwant %x", out.Bytes(), want)
	}
}

// specExample writes the worked example of spec/bmd.md §11.7.
func specExample(t testing.TB) []byte {
	var out bytes.Buffer
	w, err := NewV1Writer(&out, []byte("JAVA PROFILE 1.0.3"))
	if err != nil {
		t.Fatal(err)
	}
	w.ClearString(1, []byte("java.lang.Object"))
	w.HashedString(2, 24, names.JavaHashString("com.example.MainActivity"))
	w.HashedString(3, 10, names.JavaHashString("mDestroyed"))
	w.HashedString(4, 5, names.JavaHashString("sRoot"))
	w.Class(&V1Class{ID: 1, Name: 1})
	w.Class(&V1Class{ID: 2, Super: 1, Name: 2,
		Statics:   []Static{{Name: 4, Type: Object, Value: 4}},
		Fields:    []Field{{Name: 3, Type: Boolean}},
		Discarded: 12})
	w.Instance(3, 2, []uint64{1})
	w.ObjectArray(4, 1, []uint32{3, 0})
	w.PrimitiveArray(5, Char, 300)
	w.Legacy(0x02, mustHex(t, "00000001 00000002 00000000 00000002")) // LOAD CLASS serial 1, class 2, trace 0, name 2
	w.RootObjects([]uint32{3, 4})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestV1SpecExample checks the worked example of spec/bmd.md §11.7 byte
// for byte.
func TestV1SpecExample(t *testing.T) {
	got := specExample(t)
	want := mustHex(t, `01 12 4a 41 56 41 20 50 52 4f 46 49 4c 45 20 31 2e 30 2e 33
		01 01 10 6a 61 76 61 2e 6c 61 6e 67 2e 4f 62 6a 65 63 74
		02 02 18 d9 c8 ad e8 f9 ff ff ff ff 01
		02 03 0a ac c0 8b 89 ff ff ff ff ff 01
		02 04 05 f5 87 ee 33
		03 01 00 01 00 00 00 00
		03 02 01 02 00 01 04 00 04 01 03 02 0c
		04 03 02 01
		06 04 01 02 03 00
		07 05 04 ac 02
		08 02 10 00 00 00 01 00 00 00 02 00 00 00 00 00 00 00 02
		05 02 03 04`)
	if !bytes.Equal(got, want) {
		t.Fatalf("spec example:\n got % x\nwant % x", got, want)
	}
	recs, _ := readAllV1(t, got)
	if len(recs) != 11 || recs[6].Values[0] != 1 || recs[5].Class.Discarded != 12 {
		t.Errorf("read back: %+v", recs)
	}
}

// TestV1BadInput: damaged input gives a FormatError with an offset, never a
// panic or a huge allocation. A file cut anywhere reads back as exactly
// the records before the cut: cut between two records (version 1 has no
// end marker), they end with io.EOF; cut inside the header, the error is
// a truncated header at offset 0; cut inside a record, the error is a
// truncation of that record, named, at its offset.
func TestV1BadInput(t *testing.T) {
	good, want := v1Sample(t)
	// bounds[i] is the offset of record i, bounds[len(want)] the end.
	r, err := NewV1Reader(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	bounds := []int64{r.Offset()}
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		bounds = append(bounds, r.Offset())
	}
	if len(bounds) != len(want)+1 || bounds[len(want)] != int64(len(good)) {
		t.Fatalf("test premise: %d records end at %v, want %d ending at %d", len(bounds)-1, bounds, len(want), len(good))
	}
	for n := 0; n <= len(good); n++ {
		r, err := NewV1Reader(bytes.NewReader(good[:n]))
		if int64(n) < bounds[0] {
			var fe *FormatError
			switch {
			case !errors.As(err, &fe) || fe.Offset != 0 || fe.Record != "header":
				t.Errorf("cut at %d, in the header: %v, want a FormatError in the header at offset 0", n, err)
			case n == 0 && !errors.Is(err, ErrNotBMD):
				t.Errorf("empty input: %v, want ErrNotBMD", err)
			case n > 0 && !errors.Is(err, io.ErrUnexpectedEOF):
				t.Errorf("cut at %d, in the header: %v, want a truncation", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d, after the header: %v", n, err)
		}
		var got []V1Record
		for {
			var rec *V1Record
			if rec, err = r.Next(); err != nil {
				break
			}
			got = append(got, normalize(rec))
		}
		k := 0 // the records wholly before the cut
		for k < len(want) && bounds[k+1] <= int64(n) {
			k++
		}
		if len(got) != k {
			t.Fatalf("cut at %d: %d records read, want the %d before the cut", n, len(got), k)
		}
		for i := range got {
			if w := normalize(&want[i]); !reflect.DeepEqual(got[i], w) {
				t.Fatalf("cut at %d: record %d:\n got %+v\nwant %+v", n, i, got[i], w)
			}
		}
		if int64(n) == bounds[k] {
			if err != io.EOF {
				t.Errorf("cut at %d, between records: %v, want io.EOF", n, err)
			}
			continue
		}
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, io.ErrUnexpectedEOF) || fe.Offset != bounds[k] || fe.Record != want[k].Tag.String() {
			t.Errorf("cut at %d: %v, want a truncated %s record at offset %d", n, err, want[k].Tag, bounds[k])
		}
	}
	hdr := "01 00"
	for _, c := range []struct{ name, body, want string }{
		{"unknown tag", "09", "unknown record tag 9 (BMD version 1 has tags 1 to 8) at offset 2"},
		{"tag 0", "00", "unknown record tag 0"},
		{"corrupt varint", "01 ffffffffffffffffffff01 00", "corrupt varint at offset 3"},
		{"negative length", "01 01 ffffffffffffffffff01", "negative length -1 in STRING record at offset 2"},
		{"huge string", "01 01 feffffff07 41", "truncated in STRING record at offset 2"},
		{"huge array", "06 01 01 feffffff07 00", "truncated in OBJECT ARRAY record at offset 2"},
		{"huge roots", "05 feffffff07", "truncated in ROOT OBJECTS record at offset 2"},
		{"huge legacy", "08 01 feffffff07", "truncated in LEGACY HPROF RECORD record at offset 2"},
		{"undefined class", "04 01 07", "class 7, which is not defined"},
		{"bad type", "03 01 00 00 00 00 01 01 09 00", "invalid field type 9"},
		{"object array of primitives", "07 01 00 05", "element type object"},
		{"twice", "03 01 00 00 00 00 00 00 03 01 00 00 00 00 00 00", "class 1 defined twice in CLASS DEFINITION record at offset 10"},
		{"class 0", "03 00 00 00 00 00 00 00", "class ID 0"},
		{"too many fields", "03 01 00 00 ffff07", "131071 constants"},
		{"legacy tag", "08 8002 00", "HPROF tag 256"},
		{"discarded size", "03 01 00 00 00 00 00 808020", "524288 bytes of discarded fields is implausible"},
		// one int field and 524,280 discarded bytes (65,535 longs at least)
		{"fields and discarded", "03 01 00 00 00 00 01 00 01 f8ff1f", "class 1: 1 fields and 524280 bytes of discarded fields (at least 65535 fields)"},
	} {
		r, err := NewV1Reader(bytes.NewReader(mustHex(t, hdr+c.body)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var last error
		for {
			_, err := r.Next()
			if err != nil {
				last = err
				break
			}
		}
		var fe *FormatError
		if last == io.EOF || !errors.As(last, &fe) || !strings.Contains(last.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, last, c.want)
		}
	}
	for _, c := range []struct{ name, in string }{
		{"empty", ""}, {"version 2", "02 00"}, {"version 0", "00 00"}, {"negative metadata", "01 ffffffffffffffffff01"},
	} {
		_, err := NewV1Reader(bytes.NewReader(mustHex(t, c.in)))
		if !errors.Is(err, ErrNotBMD) {
			t.Errorf("header %s: %v", c.name, err)
		}
	}
}

// TestV1HugeCountsAllocate: a count or length of 2^31-1 with nothing
// behind it is a truncation error, and reading it allocates a few
// kilobytes, not memory for the count (a string, an object array, roots,
// a legacy record). It measures the bytes (runtime.MemStats.TotalAlloc)
// Next allocates, the reader and its buffer made before, the least of
// three runs: -race and other goroutines do not make it fail.
func TestV1HugeCountsAllocate(t *testing.T) {
	const limit = 64 << 10 // the smallest claim here would take 2 GiB
	for _, in := range []string{
		"01 00 01 01 feffffff07 41",    // STRING of 2^31-1 bytes
		"01 00 06 01 01 feffffff07 00", // OBJECT ARRAY of 2^31-1 elements
		"01 00 05 feffffff07 01",       // ROOT OBJECTS
		"01 00 08 01 feffffff07 01",    // LEGACY HPROF RECORD
	} {
		data := mustHex(t, in)
		least := uint64(1 << 63)
		var err error
		for range 3 {
			r, rerr := NewV1Reader(bytes.NewReader(data))
			if rerr != nil {
				t.Fatal(rerr)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = r.Next()
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, io.ErrUnexpectedEOF) || fe.Offset != 2 {
			t.Errorf("%s: %v, want a truncation at offset 2", in, err)
		}
		if least > limit {
			t.Errorf("%s: Next allocated %d bytes", in, least)
		}
	}
}

func TestV1WriterRefuses(t *testing.T) {
	for name, f := range map[string]func(w *V1Writer) error{
		"instance of undefined class": func(w *V1Writer) error { return w.Instance(1, 2, nil) },
		"wrong value count": func(w *V1Writer) error {
			w.Class(&V1Class{ID: 1, Fields: []Field{{Type: Int}}})
			return w.Instance(2, 1, nil)
		},
		"class twice":          func(w *V1Writer) error { w.Class(&V1Class{ID: 1}); return w.Class(&V1Class{ID: 1}) },
		"class 0":              func(w *V1Writer) error { return w.Class(&V1Class{}) },
		"object primitive arr": func(w *V1Writer) error { return w.PrimitiveArray(1, Object, 1) },
		"bad type":             func(w *V1Writer) error { return w.Class(&V1Class{ID: 1, Fields: []Field{{Type: 3}}}) },
	} {
		w, _ := NewV1Writer(io.Discard, nil)
		if err := f(w); err == nil {
			t.Errorf("%s: accepted", name)
		} else if w.ClearString(1, nil) == nil {
			t.Errorf("%s: the error does not stick", name)
		}
	}
}

// TestV1ChainBudget: instances of a class at the bottom of a long chain of
// classes without kept fields cost no bytes per class; the reader stops
// before such a file costs time quadratic in its size.
func TestV1ChainBudget(t *testing.T) {
	var out bytes.Buffer
	w, _ := NewV1Writer(&out, nil)
	const depth = 3000
	for i := uint32(1); i <= depth; i++ {
		w.Class(&V1Class{ID: i, Super: i + 1})
	}
	for i := uint32(0); i < 5000; i++ {
		w.Instance(depth+1+i, 1, nil)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewV1Reader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := r.Next()
		if err == io.EOF {
			t.Fatal("read to the end")
		}
		if err != nil {
			if !strings.Contains(err.Error(), "implausibly long") {
				t.Fatal(err)
			}
			break
		}
	}
}

// TestV1LongStringAfterShort: a STRING longer than the read buffer, read
// after a short one, must come back intact (the short one's text points
// into the buffer that reading the long one refills).
func TestV1LongStringAfterShort(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewV1Writer(&buf, []byte("JAVA PROFILE 1.0.2"))
	if err != nil {
		t.Fatal(err)
	}
	long := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320,000 bytes
	if err := w.ClearString(1, []byte("short")); err != nil {
		t.Fatal(err)
	}
	if err := w.ClearString(2, long); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewV1Reader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]byte{[]byte("short"), long} {
		rec, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec.Text, want) {
			t.Fatalf("string %d: %d bytes read back differ from the %d written", i+1, len(rec.Text), len(want))
		}
	}
}

// TestV1WriterCountsLongRecords: Bytes counts every byte of a record, one
// that the writer flushes before its end (longer than its buffer) too.
func TestV1WriterCountsLongRecords(t *testing.T) {
	ids := make([]uint32, 100000) // about 300 KB: flushed within the record
	for i := range ids {
		ids[i] = uint32(i * 1000)
	}
	alone := func(write func(w *V1Writer) error) uint64 {
		var out bytes.Buffer
		w, _ := NewV1Writer(&out, []byte("m"))
		if err := write(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return uint64(out.Len() - w.Header)
	}
	array := func(w *V1Writer) error { return w.ObjectArray(1, 2, ids) }
	roots := func(w *V1Writer) error { return w.RootObjects(ids) }
	str := func(w *V1Writer) error { return w.ClearString(3, []byte("abc")) }
	var out bytes.Buffer
	w, _ := NewV1Writer(&out, []byte("m"))
	for _, f := range []func(*V1Writer) error{str, array, roots, str} {
		if err := f(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := w.Bytes[V1ObjectArray], alone(array); got != want || got < 1<<17 {
		t.Errorf("Bytes[OBJECT ARRAY] = %d, the record is %d bytes", got, want)
	}
	if got, want := w.Bytes[V1RootObjects], alone(roots); got != want {
		t.Errorf("Bytes[ROOT OBJECTS] = %d, the record is %d bytes", got, want)
	}
	var sum uint64
	for _, b := range w.Bytes {
		sum += b
	}
	if sum+uint64(w.Header) != uint64(out.Len()) || w.Count[V1String] != 2 {
		t.Errorf("Bytes add up to %d, header %d, file %d", sum, w.Header, out.Len())
	}
}

// TestV1ClassFieldCount: a class whose listed fields and the fewest fields
// its discarded bytes can be (MinFields) are more than 65535 is refused by
// the writer, as the reader refuses it (TestV1BadInput): a CLASS DUMP
// holds at most 65535 fields.
func TestV1ClassFieldCount(t *testing.T) {
	for _, c := range []struct {
		n    uint32
		want int
	}{{0, 0}, {1, 1}, {3, 2}, {7, 3}, {8, 1}, {15, 4}, {262140, 32768}, {MaxV1Discarded, 65535}} {
		if got := MinFields(c.n); got != c.want {
			t.Errorf("MinFields(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		fields    int
		discarded uint32
		ok        bool
	}{
		{0, MaxV1Discarded, true},
		{1, MaxV1Discarded, false},
		{0, MaxV1Discarded + 1, false},
		{2, 8*65530 + 7, true}, // 65530 + 3 + 2 fields
		{3, 8*65530 + 7, false},
		{65535, 0, true},
		{65535, 1, false},
	} {
		w, err := NewV1Writer(io.Discard, []byte("JAVA PROFILE 1.0.2"))
		if err != nil {
			t.Fatal(err)
		}
		fs := make([]Field, c.fields)
		for i := range fs {
			fs[i] = Field{Name: 1, Type: Int}
		}
		err = w.Class(&V1Class{ID: 1, Fields: fs, Discarded: c.discarded})
		if (err == nil) != c.ok {
			t.Errorf("%d fields, %d discarded bytes: error %v, want ok %v", c.fields, c.discarded, err, c.ok)
		}
	}
}

// TestV1ReaderClass: Class gives a class's definition once its record is
// read (the fields an instance's chain needs), and false for a class not
// defined, or not yet.
func TestV1ReaderClass(t *testing.T) {
	var out bytes.Buffer
	w, _ := NewV1Writer(&out, nil)
	w.Class(&V1Class{ID: 7, Super: 9, Name: 3, Fields: []Field{{Name: 4, Type: Int}}, Discarded: 6})
	w.Class(&V1Class{ID: 9})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewV1Reader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Class(7); ok {
		t.Error("class 7 defined before its record is read")
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	c, ok := r.Class(7)
	if !ok || c.ID != 7 || c.Super != 9 || c.Discarded != 6 || !reflect.DeepEqual(c.Fields, []Field{{Name: 4, Type: Int, Kept: true}}) {
		t.Errorf("class 7: %+v, %v", c, ok)
	}
	if _, ok := r.Class(9); ok {
		t.Error("class 9 defined before its record is read")
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Class(9); !ok {
		t.Error("class 9 not defined after its record")
	}
	if _, ok := r.Class(8); ok {
		t.Error("class 8 defined")
	}
}

// TestV1ChainCycle: a chain of super classes that comes back to a class
// already in it (damaged or crafted input) is walked once round, by Chain,
// by the writer and by the reader of an instance, whether the cycle starts
// at the bottom or further up.
func TestV1ChainCycle(t *testing.T) {
	cases := []struct {
		name        string
		depth, back uint32 // classes 1..depth, the top's super class back
	}{
		{"two classes", 2, 1},
		{"one class its own super class", 1, 1},
		{"a line into a cycle", 5, 3},
		{"deep", 48, 19},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			w, _ := NewV1Writer(&out, nil)
			var want []uint32
			var vals []uint64
			for i := uint32(1); i <= c.depth; i++ {
				super := i + 1
				if i == c.depth {
					super = c.back
				}
				if err := w.Class(&V1Class{ID: i, Super: super, Fields: []Field{{Name: 1, Type: Int}}}); err != nil {
					t.Fatal(err)
				}
				want = append(want, i)
				vals = append(vals, uint64(i))
			}
			// 40 more classes: a walk bounded by the classes defined went
			// round the cycle until it had visited as many.
			for i := uint32(0); i < 40; i++ {
				w.Class(&V1Class{ID: 1000 + i})
			}
			if err := w.Instance(500, 1, vals); err != nil {
				t.Fatalf("instance with a value per class of the cycle: %v", err)
			}
			w.Instance(502, 1000, nil) // read after the first: where it ends
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			recs, r := readAllV1(t, out.Bytes())
			var instances []V1Record
			for _, rec := range recs {
				if rec.Tag == V1InstanceDump {
					instances = append(instances, rec)
				}
			}
			var got []uint32
			r.Chain(1, func(c *V1Class) bool { got = append(got, c.ID); return true })
			if !slices.Equal(got, want) {
				t.Errorf("Chain(1) visits %v, want %v", got, want)
			}
			if len(instances) != 2 || instances[0].ID != 500 || !slices.Equal(instances[0].Values, vals) ||
				instances[1].ID != 502 || len(instances[1].Values) != 0 {
				t.Errorf("instances read: %+v, want 500 with %v, then 502 with none", instances, vals)
			}
		})
	}
}

// TestV1ChainDefinedLater: a chain walked, then made longer by a class
// defined after (its top, then a class that closes a cycle), is walked
// anew: instances read before and after get the fields of the chain as it
// stood. A chain walked through one walked before (charted) counts its
// classes too.
func TestV1ChainDefinedLater(t *testing.T) {
	var out bytes.Buffer
	w, _ := NewV1Writer(&out, nil)
	int1 := []Field{{Name: 1, Type: Int}}
	w.Class(&V1Class{ID: 3, Super: 4, Fields: int1})
	w.Class(&V1Class{ID: 2, Super: 3, Fields: int1})
	w.Instance(100, 3, []uint64{1})    // 3; 4 not defined
	w.Instance(101, 2, []uint64{1, 2}) // 2, then 3 charted before
	w.Class(&V1Class{ID: 4, Super: 5, Fields: int1})
	w.Instance(102, 2, []uint64{1, 2, 3}) // 2, 3, 4
	w.Class(&V1Class{ID: 5, Super: 3, Fields: int1})
	w.Instance(103, 2, []uint64{1, 2, 3, 4}) // 2, then the cycle 3, 4, 5 once
	w.Instance(104, 5, []uint64{1, 2, 3})    // 5, 3, 4
	if err := w.Flush(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	recs, r := readAllV1(t, out.Bytes())
	want := map[uint32]int{100: 1, 101: 2, 102: 3, 103: 4, 104: 3}
	for _, rec := range recs {
		if rec.Tag != V1InstanceDump {
			continue
		}
		if len(rec.Values) != want[rec.ID] {
			t.Errorf("instance %d: %d values, want %d", rec.ID, len(rec.Values), want[rec.ID])
		}
		delete(want, rec.ID)
	}
	if len(want) != 0 {
		t.Errorf("instances not read: %v", want)
	}
	var got []uint32
	r.Chain(5, func(c *V1Class) bool { got = append(got, c.ID); return true })
	if !slices.Equal(got, []uint32{5, 3, 4}) {
		t.Errorf("Chain(5) visits %v, want [5 3 4]", got)
	}
}
