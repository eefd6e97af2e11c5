package crunch_test

import (
	"bytes"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// roundTrip is a dump crunched with --keep-strings and decrunched with no
// name source.
type roundTrip struct {
	bmd, back []byte   // the BMD, the decrunched HPROF
	want, got []string // heapstat.Canonical of the input and of back
}

// keepStringsRoundTrip crunches the HPROF dump in with --keep-strings and
// decrunches the BMD. want and got are equal when the round trip kept the
// dump's object graph and names; any error fails t.
func keepStringsRoundTrip(t *testing.T, in []byte) roundTrip {
	t.Helper()
	var out, back bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(in), &out, crunch.Options{KeepStrings: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := decrunch.Decrunch(bytes.NewReader(out.Bytes()), &back, decrunch.Options{}); err != nil {
		t.Fatal(err)
	}
	rt := roundTrip{bmd: out.Bytes(), back: back.Bytes()}
	var err error
	if rt.want, err = heapstat.Canonical(in); err != nil {
		t.Fatal(err)
	}
	if rt.got, err = heapstat.Canonical(rt.back); err != nil {
		t.Fatal(err)
	}
	return rt
}

// newDumpWriter returns an HPROF 1.0.2 Writer with idSize-byte IDs that
// writes to buf, for tests that build a dump record by record.
func newDumpWriter(t testing.TB, buf *bytes.Buffer, idSize int) *hprof.Writer {
	t.Helper()
	w, err := hprof.NewWriter(buf, hprof.Header{Version: hprof.Version102, IDSize: idSize})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// must fails t on a non-nil err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
