package bmd

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzV1Reader: any input gives records or a FormatError, never a panic;
// what was read, written again with V1Writer, reads back the same.
func FuzzV1Reader(f *testing.F) {
	sample, _ := v1Sample(f)
	f.Add(sample)
	f.Add(specExample(f))
	f.Add(sample[:len(sample)/2])
	f.Add(mustHex(f, "01 00 03 be01 00 00 00 00 01 01 00 00 04 b901 be01 00"))
	f.Add(mustHex(f, "01 00 05 02 f053 e971 06 d203 d603 02 00 00 07 9201 03 d801 08 05 0c 000000000000000000000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewV1Reader(bytes.NewReader(b))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("header error %v is not a FormatError", err)
			}
			return
		}
		var out bytes.Buffer
		w, err := NewV1Writer(&out, r.Metadata())
		if err != nil {
			t.Fatal(err)
		}
		var recs []V1Record
		for n := 0; n < 10000; n++ {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("%v is not a FormatError", err)
				}
				if fe.Offset < 0 || fe.Offset > int64(len(b)) {
					t.Fatalf("offset %d outside the input of %d bytes", fe.Offset, len(b))
				}
				break
			}
			recs = append(recs, normalize(rec))
			rewrite(t, w, rec)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		again, _ := readAllV1(t, out.Bytes())
		if len(again) != len(recs) {
			t.Fatalf("%d records read, %d after rewriting", len(recs), len(again))
		}
		for i := range recs {
			if !reflect.DeepEqual(recs[i], again[i]) {
				t.Fatalf("record %d:\n read %+v\nagain %+v", i, recs[i], again[i])
			}
		}
	})
}

func rewrite(t *testing.T, w *V1Writer, r *V1Record) {
	var err error
	switch r.Tag {
	case V1String:
		err = w.ClearString(r.ID, r.Text)
	case V1HashedString:
		err = w.HashedString(r.ID, r.Length, r.Hash)
	case V1ClassDefinition:
		err = w.Class(&r.Class)
	case V1InstanceDump:
		err = w.Instance(r.ID, r.Of, r.Values)
	case V1RootObjects:
		err = w.RootObjects(r.IDs)
	case V1ObjectArray:
		err = w.ObjectArray(r.ID, r.Of, r.IDs)
	case V1PrimitiveArray:
		err = w.PrimitiveArray(r.ID, r.Type, r.Count)
	case V1Legacy:
		err = w.Legacy(r.HTag, r.Text)
	}
	if err != nil {
		t.Fatalf("rewriting %s: %v", r.Tag, err)
	}
}
