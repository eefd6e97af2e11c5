package crunch_test

import (
	"bytes"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
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
