// Command coreprobe prints what internal/cores measures on this machine:
// the round trip of a cache line between two goroutines' threads, and
// whether that says two goroutines pay (cores.Pays; the commands also need
// GOMAXPROCS >= 2 and heed HEAPCRUNCH_PIPELINE). A new process's probe
// can differ from the one inside crunch: with another program busy on the
// other core, this one measured 51 ns where crunch's ran out of time.
// scripts/bench.sh prints it next to the times it measures.
//
//	go run ./internal/cmd/coreprobe
package main

import (
	"fmt"
	"runtime"

	"github.com/heapcrunch/heapcrunch/internal/cores"
)

func main() {
	rt, err := cores.Probe()
	pays := cores.Pays(rt, err)
	if err != nil {
		fmt.Printf("cache line round trip: %v; GOMAXPROCS=%d; two goroutines: %v\n", err, runtime.GOMAXPROCS(0), pays)
		return
	}
	fmt.Printf("cache line round trip: %d ns; GOMAXPROCS=%d; two goroutines: %v\n", rt.Nanoseconds(), runtime.GOMAXPROCS(0), pays)
}
