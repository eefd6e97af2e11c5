package cliutil

import (
	"runtime/debug"
	"testing"
)

// TestCollectLess checks that CollectLess sets the pace it is given where
// the environment sets no GOGC, and leaves the pace alone where it does.
func TestCollectLess(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	CollectLess(800)
	if got := debug.SetGCPercent(100); got != 800 {
		t.Errorf("GOGC unset: CollectLess(800) set %d", got)
	}
	t.Setenv("GOGC", "50")
	CollectLess(800)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=50 in the environment: CollectLess set %d, want the pace left at 100", got)
	}
}
