package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/clitest"
)

func crunchV1Bytes(t *testing.T, in []byte, opt crunch.Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := crunch.CrunchV1(bytes.NewReader(in), &b, opt, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestV1Input: decrunch recognises a version 1 file by its header, writes
// the HPROF and reports what version 1 did not carry; a damaged one fails
// with the offset and leaves nothing behind.
func TestV1Input(t *testing.T) {
	fixtures(t)
	v1 := crunchV1Bytes(t, src, crunch.Options{})
	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", v1)
	r := d.Run(t, nil, decrunchBin, "in.bmd", "-o", "out.hprof")
	clitest.ExpectOK(t, r)
	isHPROF(t, d.Read(t, "out.hprof"))
	if !strings.Contains(r.Stderr, "decrunch: in.bmd: BMD v1: ") {
		t.Errorf("no warning: %q", r.Stderr)
	}

	// As the original cruncher wrote: no marker, legacy records with the
	// dump's IDs, which are dropped and reported.
	var b bytes.Buffer
	w, _ := bmd.NewV1Writer(&b, []byte("JAVA PROFILE 1.0.3"))
	w.ClearString(1, []byte("java.lang.Object"))
	w.Legacy(0x04, make([]byte, 24))
	w.Class(&bmd.V1Class{ID: 2, Name: 1})
	w.Instance(3, 2, nil)
	w.RootObjects([]uint32{3})
	w.Flush()
	d.Write(t, "orig.bmd", b.Bytes())
	r = d.Run(t, nil, decrunchBin, "orig.bmd", "-o", "orig.hprof")
	clitest.ExpectOK(t, r)
	isHPROF(t, d.Read(t, "orig.hprof"))
	if !strings.Contains(r.Stderr, "legacy records dropped") || !strings.Contains(r.Stderr, "STACK FRAME ×1") {
		t.Errorf("stderr: %q", r.Stderr)
	}

	d.Write(t, "cut.bmd", v1[:len(v1)-5])
	before := d.Files(t)
	r = d.Run(t, nil, decrunchBin, "cut.bmd", "-o", "cut.hprof")
	clitest.ExpectFail(t, d, r, 1, "decrunch", before, "cut.bmd", "truncated", "at offset")
}
