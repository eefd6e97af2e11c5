// Package bmdtest makes BMD files for the tests of more than one package.
package bmdtest

import (
	"bytes"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// WideClass returns a BMD file (4-byte IDs) of pad bytes of STRING
// records or a little more (none with 0), then a heap dump of a class of
// fields Byte fields, none kept, and n instances of it: two bytes each in
// the file, a value per field each when read. The STRING records raise
// the layout work that a reader allows the file (bmd.Reader: a budget
// that grows with the bytes read).
func WideClass(t testing.TB, fields, n, pad int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := bmd.NewWriter(&buf, &bmd.Metadata{IDSize: 4, Classes: 1, Objects: uint64(n) + 1, Hash: bmd.HashXX64})
	must(t, err)
	name, err := w.ClearString([]byte("f"))
	must(t, err)
	for i := 0; pad > 0; i++ {
		k := min(pad, 60000)
		text := bytes.Repeat([]byte{'a' + byte(i%26)}, k)
		text[0] = byte(i) // no text the same as one before
		_, err := w.ClearString(text)
		must(t, err)
		pad -= k
	}
	must(t, w.HeapDump(false))
	fs := make([]bmd.Field, fields)
	for i := range fs {
		fs[i] = bmd.Field{Name: name, Type: bmd.Byte}
	}
	_, err = w.Class(&bmd.Class{Index: 1, Fields: fs})
	must(t, err)
	for range n {
		_, err := w.InstanceKept(1, nil)
		must(t, err)
	}
	must(t, w.HeapDumpEnd())
	must(t, w.Close())
	return buf.Bytes()
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Records reads the version 2 BMD file b to its end, the runs of objects
// skipped if skipObjects (bmd.Reader.SkipObjects and SkipValues), and
// calls f, if not nil, with each record in order; f must not keep rec,
// which the reader reuses. The test fails, naming the offset, where b does
// not read to its end: not BMD, damaged or cut. It returns the file's
// metadata.
func Records(t testing.TB, b []byte, skipObjects bool, f func(rec *bmd.Record)) bmd.Metadata {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a BMD file: %v", err)
	}
	r.SkipObjects, r.SkipValues = skipObjects, skipObjects
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return r.Metadata()
		}
		if err != nil {
			t.Fatalf("the BMD file does not read to its end: %v", err)
		}
		if f != nil {
			f(rec)
		}
	}
}
