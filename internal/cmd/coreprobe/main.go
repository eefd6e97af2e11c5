// Command coreprobe prints what internal/cores measures on this machine:
// the round trip of a cache line between two goroutines' threads, and
// whether crunch's and decrunch's second passes use two goroutines.
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
	rt, ok := cores.Probe()
	if !ok {
		fmt.Printf("cache line round trip: over the probe's time limit; GOMAXPROCS=%d; two goroutines: %v\n", runtime.GOMAXPROCS(0), cores.Near())
		return
	}
	fmt.Printf("cache line round trip: %d ns; GOMAXPROCS=%d; two goroutines: %v\n", rt.Nanoseconds(), runtime.GOMAXPROCS(0), cores.Near())
}
