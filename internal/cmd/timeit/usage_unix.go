//go:build unix

package main

import (
	"os"
	"syscall"
)

// usage returns the peak resident set in KB and the minor page faults of
// the process that ended as ps says.
func usage(ps *os.ProcessState) (maxKB, faults int64) {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss), int64(ru.Minflt)
	}
	return 0, 0
}
