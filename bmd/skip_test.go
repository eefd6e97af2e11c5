package bmd_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
)

// TestSkipValuesEmpty: with SkipValues, Values and Elements stay empty,
// on the fast path too, and for instances of classes with kept floating
// point fields, which the fast path does not skip as varints.
func TestSkipValuesEmpty(t *testing.T) {
	skip := func(r *bmd.Reader) { r.SkipValues = true }
	values := func(rec *bmd.Record) string {
		return fmt.Sprintf("%s at offset %d: %d values, %d elements", rec.Kind, rec.Offset, len(rec.Values), len(rec.Elements))
	}
	for _, opt := range []crunch.Options{{KeepPrimitives: true}, {}} {
		for _, got := range renderRecords(sampleBMD(t, opt), skip, values) {
			if !strings.HasSuffix(got, ": 0 values, 0 elements") {
				t.Fatalf("%+v, with SkipValues: %s", opt, got)
			}
		}
	}
}

// renderRecords reads file with a Reader that set sets up, and renders
// each record with render, then the error that ends the reading.
func renderRecords(file []byte, set func(*bmd.Reader), render func(*bmd.Record) string) []string {
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		return []string{"header: " + err.Error()}
	}
	set(r)
	var out []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, render(rec))
	}
}

// skimmed reads file with or without SkipValues and renders each record
// without its values and elements, then the error that ends the reading.
func skimmed(file []byte, skip bool) []string {
	return renderRecords(file, func(r *bmd.Reader) { r.SkipValues = skip }, func(rec *bmd.Record) string {
		return fmt.Sprintf("%d %d id=%d class=%d count=%d", rec.Offset, rec.Kind, rec.ID, rec.Class, rec.Count)
	})
}

// TestSkipValues: with SkipValues, the reader gives every record as
// without it (values and elements aside), and fails where and as it does,
// on a real dump's BMD (with kept primitive values, floats and doubles
// among them), cut at many places, and with an 11-byte varint among an
// array's elements.
func TestSkipValues(t *testing.T) {
	// Kept primitive values (floats and doubles among them) and the
	// default, where every value is a varint.
	for _, opt := range []crunch.Options{{KeepPrimitives: true}, {}} {
		b := sampleBMD(t, opt)
		if got, want := skimmed(b, true), skimmed(b, false); !slices.Equal(got, want) {
			t.Fatalf("%+v, whole file: %d records skimming, %d decoding", opt, len(got), len(want))
		}
		for cut := 100; cut < len(b); cut += len(b) / 97 {
			if got, want := skimmed(b[:cut], true), skimmed(b[:cut], false); !slices.Equal(got, want) {
				t.Fatalf("%+v, cut at %d: skimming ends with %q, decoding with %q", opt, cut, got[len(got)-1], want[len(want)-1])
			}
		}
		// The last value of an instance made a varint of 11 bytes, and
		// one of 10 bytes over 64 bits.
		for _, bad := range [][]byte{bytes.Repeat([]byte{0x80}, 11), append(bytes.Repeat([]byte{0xFF}, 9), 2)} {
			f := withLastInstanceValue(t, b, bad)
			got, want := skimmed(f, true), skimmed(f, false)
			if !slices.Equal(got, want) {
				t.Errorf("%+v, corrupt instance varint: skimming ends with %q, decoding with %q", opt, got[len(got)-1], want[len(want)-1])
			}
			if !strings.HasPrefix(want[len(want)-1], "error: ") {
				t.Errorf("%+v, corrupt instance varint: no error, the last record %q", opt, want[len(want)-1])
			}
		}
	}

	// An object array whose second element is a varint of 11 bytes, and
	// one whose second element is 10 bytes over 64 bits.
	for _, bad := range [][]byte{
		rtCat([]byte{byte(bmd.KindObjectArray)}, rtV(0), rtV(0), rtV(3), []byte{1}, bytes.Repeat([]byte{0x80}, 10), []byte{1, 1}),
		rtCat([]byte{byte(bmd.KindObjectArray)}, rtV(0), rtV(0), rtV(3), []byte{1}, bytes.Repeat([]byte{0xFF}, 9), []byte{2, 1}),
	} {
		f := rtFrame(rtHeaderOf(bmd.Metadata{IDSize: 4, Blocks: true}), rtCat([]byte{byte(bmd.KindHeapDump), 0}, bad))
		got, want := skimmed(f, true), skimmed(f, false)
		if !slices.Equal(got, want) {
			t.Errorf("corrupt varint: skimming gives %q, decoding %q", got, want)
		}
		var fe *bmd.FormatError
		r, _ := bmd.NewReader(bytes.NewReader(f))
		r.SkipValues = true
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if !errors.As(err, &fe) {
			t.Errorf("corrupt varint: %v", err)
		}
	}
}

// withLastInstanceValue returns file with the last value of the 100th
// instance whose last value is one byte replaced by bad, its blocks framed
// again.
func withLastInstanceValue(t *testing.T, file, bad []byte) []byte {
	t.Helper()
	f, _, ends := rtRecordsOf(t, file)
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := 0, 0; ; i++ {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("no 100th instance with values: %v", err)
		}
		if rec.Kind != bmd.KindInstance || len(rec.Values) == 0 || f.stream[ends[i]-2] >= 0x80 {
			continue // not an instance whose last value is one byte
		}
		if n++; n == 100 {
			end := ends[i]
			return rtFrame(file[:f.header], slices.Concat(f.stream[:end-1], bad, f.stream[end:]), 16384)
		}
	}
}

// readRendered reads f to its end or first error, with Next's fast path
// or (slow) without, and renders each record, with its offset, and the
// error.
func readRendered(f []byte, slow bool) []string {
	set := func(r *bmd.Reader) {
		if slow {
			bmd.SlowOnly(r)
		}
	}
	return renderRecords(f, set, func(rec *bmd.Record) string { return fmt.Sprintf("%d %s", rec.Offset, rtRender(rec)) })
}

// TestFastPath: Next's fast path for instances and arrays gives the same
// records, values included, and the same errors as the careful path, on
// a real dump's BMD with kept primitive values, in blocks of many sizes
// (records across blocks take the careful path), and on its default BMD
// (primitive fields dropped), cut at many places.
func TestFastPath(t *testing.T) {
	kept, dropped := sampleBMD(t, crunch.Options{KeepPrimitives: true}), sampleBMD(t, crunch.Options{})
	read := readRendered
	for _, f := range [][]byte{kept, rtReframe(t, kept, 7), rtReframe(t, kept, 1000, 3, 64), dropped} {
		if got, want := read(f, false), read(f, true); !slices.Equal(got, want) {
			t.Fatalf("%d records with the fast path, %d without", len(got), len(want))
		}
		for cut := 50; cut < len(f); cut += len(f) / 23 {
			if got, want := read(f[:cut], false), read(f[:cut], true); !slices.Equal(got, want) {
				t.Fatalf("cut at %d: %q with the fast path, %q without", cut, got[len(got)-1], want[len(want)-1])
			}
		}
	}
}
