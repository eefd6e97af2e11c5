// Command onerecord rewrites an HPROF dump in the shape that HotSpot in
// JDK 8 and 9 gives a heap of up to 2 GB: version "JAVA PROFILE 1.0.1",
// its heap dump in one HEAP DUMP record (package internal/onerecord says
// how):
//
//	onerecord IN.hprof OUT.hprof
package main

import (
	"fmt"
	"os"

	"github.com/heapcrunch/heapcrunch/internal/onerecord"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: onerecord IN.hprof OUT.hprof")
		os.Exit(2)
	}
	if err := rewrite(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "onerecord:", err)
		os.Exit(1)
	}
}

// rewrite writes the dump in as one record to out, which it removes if
// that fails.
func rewrite(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	err = onerecord.Rewrite(f, o, nil)
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return fmt.Errorf("%s: %w", in, err)
	}
	return nil
}
