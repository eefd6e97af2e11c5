package crunch_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestPhases: Options.Phase hears each phase start once, in order, the
// passes' progress within their phases, and PhaseDone at the end; after
// an error, no PhaseDone. The BMD is the same with it as without.
func TestPhases(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	var plain bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &plain, crunch.Options{}); err != nil {
		t.Fatal(err)
	}
	run := func(src []byte, v1 bool) ([]string, []byte, error) {
		var events []string
		opt := crunch.Options{
			Phase:    func(p crunch.Phase) { events = append(events, p.String()) },
			Progress: func(pass int, _ int64) { events = append(events, fmt.Sprintf("progress %d", pass)) },
		}
		var out bytes.Buffer
		var err error
		if v1 {
			_, err = crunch.CrunchV1(bytes.NewReader(src), &out, opt, nil)
		} else {
			_, err = crunch.Crunch(bytes.NewReader(src), &out, opt)
		}
		return slices.Compact(events), out.Bytes(), err
	}
	want := []string{"pass 1", "progress 1", "numbering", "pass 2", "progress 2", "done"}
	for _, v1 := range []bool{false, true} {
		events, out, err := run(src, v1)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(events, want) {
			t.Errorf("v1 %v: phases and progress %q, want %q", v1, events, want)
		}
		if !v1 && !bytes.Equal(out, plain.Bytes()) {
			t.Errorf("the BMD with Options.Phase differs from the one without (%d and %d bytes)", len(out), plain.Len())
		}
	}
	// Cut in its heap dump: pass 1 fails, and no phase after it comes.
	events, _, err := run(src[:len(src)*3/4], false)
	if err == nil {
		t.Fatal("a dump cut short crunched without an error")
	}
	if !slices.Equal(events, want[:2]) {
		t.Errorf("cut dump: phases and progress %q, want %q", events, want[:2])
	}
	if s := crunch.Phase(9).String(); s != "Phase(9)" {
		t.Errorf("Phase(9).String() = %q", s)
	}
}
