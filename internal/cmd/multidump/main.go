// Command multidump writes a small HPROF file with several heap dumps
// (internal/multidump), for scripts/roundtrip.sh.
//
//	multidump [-n DUMPS] OUT.hprof
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/heapcrunch/heapcrunch/internal/multidump"
)

func main() {
	n := flag.Int("n", 3, "number of heap dumps")
	flag.Parse()
	if flag.NArg() != 1 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: multidump [-n DUMPS] OUT.hprof")
		os.Exit(2)
	}
	f, err := os.Create(flag.Arg(0))
	if err == nil {
		err = multidump.Write(f, *n)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "multidump:", err)
		os.Exit(1)
	}
}
