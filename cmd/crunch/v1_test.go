package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/clitest"
)

// TestFormatV1: crunch --format v1 writes a version 1 file (header byte 1,
// the HPROF version text as metadata) and says what version 1 cannot
// carry; decrunch reads it back to an HPROF file and says what it filled in.
func TestFormatV1(t *testing.T) {
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof.gz", fullGz)
	r := d.Run(t, nil, crunchBin, "--format", "v1", "in.hprof.gz", "out.bmd")
	clitest.ExpectOK(t, r)
	b := d.Read(t, "out.bmd")
	if !bytes.HasPrefix(b, append([]byte{1, 18}, "JAVA PROFILE 1.0.2"...)) {
		t.Fatalf("not a version 1 header: % x", b[:min(len(b), 24)])
	}
	if !strings.Contains(r.Stderr, "crunch: BMD v1: ") || !strings.Contains(r.Stderr, "GC roots written without their kinds") {
		t.Errorf("no warnings: %q", r.Stderr)
	}
	r = d.Run(t, nil, decrunchBin, "out.bmd", "-o", "out.hprof", "--stats")
	clitest.ExpectOK(t, r)
	if !strings.Contains(r.Stderr, "BMD v1: ") || !strings.Contains(r.Stderr, "ROOT UNKNOWN") || !strings.Contains(r.Stderr, "Java hash collisions") {
		t.Errorf("decrunch stderr: %q", r.Stderr)
	}
	if out := d.Read(t, "out.hprof"); !bytes.HasPrefix(out, []byte("JAVA PROFILE 1.0.2\x00\x00\x00\x00\x08")) {
		t.Errorf("output header % x", out[:min(len(out), 24)])
	}
	// --quiet keeps the warnings quiet; compressed v1 reads too.
	r = d.Run(t, nil, crunchBin, "-q", "--format", "v1", "in.hprof.gz", "out.bmd.zst")
	clitest.ExpectOK(t, r)
	if r.Stderr != "" {
		t.Errorf("crunch -q printed %q", r.Stderr)
	}
	r = d.Run(t, nil, decrunchBin, "-q", "out.bmd.zst", "-o", "out2.hprof")
	clitest.ExpectOK(t, r)
	if r.Stderr != "" {
		t.Errorf("decrunch -q printed %q", r.Stderr)
	}
}
