//go:build !race

// The race detector's instrumentation allocates, so allocation counts are
// only checked without it.

package apkstrings

import "testing"

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
