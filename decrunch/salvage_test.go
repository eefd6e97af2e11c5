package decrunch

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestSalvage: a BMD cut short is an error by default; with Salvage it
// gives a valid HPROF of what came before the cut, and says what was lost.
func TestSalvage(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	full := crunchBytes(t, src, crunch.Options{})
	whole, _ := decrunchBytes(t, full, Options{})
	want, err := heapstat.Summarize(whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(full) * 9 / 10, len(full) - 1} {
		if _, err := Decrunch(bytes.NewReader(full[:cut]), io.Discard, Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d without salvage: got %v, want a truncation error", cut, err)
		}
		var out bytes.Buffer
		st, err := Decrunch(bytes.NewReader(full[:cut]), &out, Options{Salvage: true})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if st.Salvaged == nil {
			t.Fatalf("cut at %d: salvage did not report the damage", cut)
		}
		got, err := heapstat.Summarize(out.Bytes())
		if err != nil {
			t.Fatalf("cut at %d: salvaged HPROF does not read back: %v", cut, err)
		}
		if got.Objects == 0 || got.Objects > want.Objects || int64(st.Objects) < got.Objects {
			t.Fatalf("cut at %d: salvaged %d objects (reported %d) of %d", cut, got.Objects, st.Objects, want.Objects)
		}
	}
}
