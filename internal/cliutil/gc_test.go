package cliutil

import (
	"runtime/debug"
	"testing"
)

// TestCollectLess checks that CollectLess sets GCPercent where the
// environment sets no GOGC, and leaves the collector's pace alone where
// it does.
func TestCollectLess(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	CollectLess()
	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Errorf("GOGC unset: CollectLess set %d, want %d", got, GCPercent)
	}
	t.Setenv("GOGC", "50")
	CollectLess()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=50 in the environment: CollectLess set %d, want the pace left at 100", got)
	}
}
