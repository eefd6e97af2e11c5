//go:build !linux

package cliutil

import (
	"os"
	"time"
)

// startWriteback does nothing on this system: Commit's fsync writes all.
func startWriteback(*os.File, int64, int64) {}

// appendMode reports whether f was opened to append: not known here, so
// false (a file opened so is then not cut back: stdoutStart).
func appendMode(f *os.File) bool { return false }

// openUnnamed returns nil: files without a name (Linux's O_TMPFILE) are
// not made here.
func openUnnamed(string, os.FileMode) *os.File { return nil }

// ProcessorTime returns 0, false: the process's processor time is not
// read here.
func ProcessorTime() (time.Duration, bool) { return 0, false }
