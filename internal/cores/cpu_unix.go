//go:build unix

package cores

import (
	"syscall"
	"time"
)

// ProcessCPU returns the processor time the process has used so far, in
// user and system mode, on all its threads, and true; false where the
// system does not say.
func ProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
