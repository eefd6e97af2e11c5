package bmd_test

import (
	"bytes"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"google.golang.org/protobuf/encoding/protowire"
)

// sniffV1 is a version 1 file written as the original tools write one.
func sniffV1(t testing.TB) []byte {
	var b bytes.Buffer
	w, err := bmd.NewV1Writer(&b, []byte("JAVA PROFILE 1.0.3"))
	if err != nil {
		t.Fatal(err)
	}
	w.ClearString(1, []byte("java.lang.Object"))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSniff: every prefix of a file of either version is named as that
// version, once it holds the version number; other input is not.
func TestSniff(t *testing.T) {
	for name, c := range map[string]struct {
		file []byte
		want int
	}{
		"version 2":         {rtSmall(t), bmd.Version2},
		"spec file 1":       {exHex(t, exFile1Hex), bmd.Version2},
		"spec file 2":       {exHex(t, exFile2Hex), bmd.Version2},
		"version 1":         {sniffV1(t), bmd.Version1},
		"empty version 1":   {[]byte{1, 0}, bmd.Version1},
		"version 1 of 2^32": {[]byte{0x81, 0x80, 0x80, 0x80, 0x10, 0}, bmd.Version1}, // NewV1Reader reads an int32
	} {
		_, k := protowire.ConsumeVarint(c.file)
		for n := k; n <= len(c.file) && n <= 200; n++ {
			if got := bmd.Sniff(c.file[:n]); got != c.want {
				t.Errorf("%s: Sniff of the first %d bytes = %d, want %d", name, n, got, c.want)
			}
		}
	}
	hdr := func(meta ...byte) []byte { return append([]byte{2, byte(len(meta))}, meta...) }
	for name, in := range map[string][]byte{
		"nothing":               nil,
		"version 0":             {0, 0},
		"version 3":             {3, 0},
		"version varint cut":    {0x82},
		"version overflows":     bytes.Repeat([]byte{0xFF}, 11),
		"metadata length over":  {2, 0x81, 0x80, 0x40},
		"v1 negative metadata":  {1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F},
		"v1 metadata too long":  {1, 0x81, 0x80, 0x40},
		"metadata not protobuf": []byte("\x02 not a bmd file"),
		"field 0":               hdr(0x00, 0x01, 0x02, 0x03),
		"field past metadata":   append(hdr(0x0a, 0x20), "JAVA PROFILE 1.0.2"...),
		"no blocks":             hdr(0x10, 0x04),
		"id size 5":             hdr(0x10, 0x05, 0x68, 0x01),
		"HPROF":                 []byte("JAVA PROFILE 1.0.2\x00"),
		"gzip":                  {0x1f, 0x8b, 0x08, 0x00},
	} {
		if got := bmd.Sniff(in); got != 0 {
			t.Errorf("%s: Sniff(% x) = %d, want 0", name, in, got)
		}
	}
}

// FuzzSniff: Sniff agrees with the readers. When it says 0, neither reads
// the header; a header NewReader reads is version 2, one NewV1Reader reads
// version 1.
func FuzzSniff(f *testing.F) {
	for _, b := range [][]byte{rtSmall(f), exHex(f, exFile2Hex), sniffV1(f), {1, 0}, {2, 2, 0x10, 4}} {
		f.Add(b[:min(len(b), 96)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v := bmd.Sniff(b)
		_, err2 := bmd.NewReader(bytes.NewReader(b))
		_, err1 := bmd.NewV1Reader(bytes.NewReader(b))
		switch {
		case err2 == nil && v != bmd.Version2:
			t.Errorf("NewReader reads % x, Sniff says %d", b, v)
		case err1 == nil && v != bmd.Version1:
			t.Errorf("NewV1Reader reads % x, Sniff says %d", b, v)
		}
	})
}
