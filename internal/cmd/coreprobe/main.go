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
	rt, err := cores.Probe()
	if err != nil {
		fmt.Printf("cache line round trip: %v; GOMAXPROCS=%d; two goroutines: %v\n", err, runtime.GOMAXPROCS(0), cores.Near())
		return
	}
	fmt.Printf("cache line round trip: %d ns; GOMAXPROCS=%d; two goroutines: %v\n", rt.Nanoseconds(), runtime.GOMAXPROCS(0), cores.Near())
}
