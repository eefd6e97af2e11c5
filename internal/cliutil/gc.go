package cliutil

import (
	"os"
	"runtime/debug"
)

// CollectLess sets the pace of the process's garbage collector, GOGC, to
// percent, unless the environment sets GOGC, which then wins. A command
// calls it first in main: the packages leave the process's settings alone.
func CollectLess(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}
