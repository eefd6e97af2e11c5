//go:build !race

// The race detector's instrumentation allocates, so allocation counts are
// only checked without it.

package apkstrings

import (
	"runtime"
	"strings"
	"testing"
)

func TestSpellingsAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("allocation counts differ under -cover")
	}
	sink := func(string) {}
	for _, tt := range []struct {
		in   string
		max  float64
		name string
	}{
		{"mDestroyed", 0, "plain identifier"},
		{"Lcom/a/B;", 1, "descriptor"},
		{"(ILjava/lang/String;Lcom/a/B;)V", 1, "method descriptor"},
	} {
		got := testing.AllocsPerRun(100, func() { Spellings(tt.in, sink) })
		if got > tt.max {
			t.Errorf("%s %q: %v allocations per call, want at most %v", tt.name, tt.in, got, tt.max)
		}
	}
}

// TestSpellingsInnerClassesLinear: a signature naming Outer.Inner.Inner...
// (the class Outer$Inner$Inner...) allocates in proportion to its length,
// not to its length times its parts. The name was grown by concatenation,
// a copy per part: 20,000 parts of 2 bytes allocated 433 MB, where the
// appended name allocates 2.6 MB, most of it the dozen spellings.
func TestSpellingsInnerClassesLinear(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("allocation counts differ under -cover")
	}
	sig := "(Lcom/a/Outer" + strings.Repeat(".I", 20000) + ";)V"
	var got []string
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	Spellings(sig, func(s string) { got = append(got, s) })
	runtime.ReadMemStats(&after)
	want := "com.a.Outer" + strings.Repeat("$I", 20000)
	found := false
	for _, s := range got {
		found = found || s == want
	}
	if !found {
		t.Errorf("no spelling %.40q... among %d", want, len(got))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 256*uint64(len(sig)) {
		t.Errorf("%d bytes allocated for a %d-byte signature, want at most 256 per byte (its dozen spellings)", n, len(sig))
	}
}
