//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// usage returns the peak resident set in KB and the minor page faults of
// the process that ended as ps says. The system gives the peak in KB,
// except macOS and iOS, which give it in bytes (getrusage(2)).
func usage(ps *os.ProcessState) (maxKB, faults int64) {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		maxKB = int64(ru.Maxrss)
		if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
			maxKB /= 1024
		}
		return maxKB, int64(ru.Minflt)
	}
	return 0, 0
}
