//go:build xtwice

package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/heapcrunch/heapcrunch/internal/bigmem"
	"github.com/heapcrunch/heapcrunch/internal/cliutil"
)

func xmain() bool {
	collectLess()
	bigmem.HugeHeap(bigmem.HeapAdvice)
	n, _ := strconv.Atoi(os.Getenv("XTWICE"))
	for i := 0; i < n; i++ {
		if i > 0 && os.Getenv("XFREE") != "" {
			debug.FreeOSMemory()
		}
		var r0, r1 syscall.Rusage
		syscall.Getrusage(0, &r0)
		t := time.Now()
		cliutil.Run(app(), os.Args)
		syscall.Getrusage(0, &r1)
		u := float64(r1.Utime.Nano()-r0.Utime.Nano()) / 1e6
		s := float64(r1.Stime.Nano()-r0.Stime.Nano()) / 1e6
		fmt.Fprintf(os.Stderr, "run %d: %.1f ms user %.1f sys %.1f faults %d\n", i, float64(time.Since(t).Microseconds())/1000, u, s, r1.Minflt-r0.Minflt)
	}
	return n > 0
}
