// Command coreprobe prints what internal/cores measures on this machine:
// the round trip of a cache line between two goroutines' threads, and
// whether that says two goroutines pay (cores.Pays; the commands also need
// GOMAXPROCS >= 2 and heed HEAPCRUNCH_PIPELINE). A new process's probe
// can differ from the one inside crunch: with another program busy on the
// other core, this one measured 51 ns where crunch's ran out of time.
// scripts/bench.sh prints it next to the times it measures. With -short
// it prints only the round trip in nanoseconds, or nostart or slow when
// the probe failed (cores.ErrNoStart, cores.ErrSlow), for scripts
// (scripts/cores.sh) that should not read the errors' text.
//
//	go run ./internal/cmd/coreprobe [-short]
package main

import (
	"errors"
	"flag"
	"fmt"
	"runtime"

	"github.com/heapcrunch/heapcrunch/internal/cores"
)

func main() {
	short := flag.Bool("short", false, "print only the round trip in ns, or nostart or slow")
	flag.Parse()
	rt, err := cores.Probe()
	if *short {
		fmt.Println(shortForm(rt.Nanoseconds(), err))
		return
	}
	pays := cores.Pays(rt, err)
	if err != nil {
		fmt.Printf("cache line round trip: %v; GOMAXPROCS=%d; two goroutines: %v\n", err, runtime.GOMAXPROCS(0), pays)
		return
	}
	fmt.Printf("cache line round trip: %d ns; GOMAXPROCS=%d; two goroutines: %v\n", rt.Nanoseconds(), runtime.GOMAXPROCS(0), pays)
}

// shortForm is what -short prints for a probe's round trip in ns and error.
func shortForm(ns int64, err error) string {
	switch {
	case errors.Is(err, cores.ErrNoStart):
		return "nostart"
	case errors.Is(err, cores.ErrSlow):
		return "slow"
	case err != nil:
		return "error"
	}
	return fmt.Sprint(ns)
}
