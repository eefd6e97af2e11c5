package main

import (
	"runtime/debug"
	"testing"
)

// TestCollectLess checks that crunch sets its own GOGC (gcPercent) where
// the environment sets none, and leaves the collector's pace alone where
// GOGC is set.
func TestCollectLess(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	collectLess()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC unset: collectLess set %d, want %d", got, gcPercent)
	}
	t.Setenv("GOGC", "50")
	collectLess()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=50 in the environment: collectLess set %d, want the pace left at 100", got)
	}
}
