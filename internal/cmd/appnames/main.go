// Command appnames prints, one per line, the names an app's own files
// would give decrunch for a heap dump: the names of its classes that the
// boot class loader did not load and of the fields they declare
// (heapstat.AppNames). It stands in for an APK that is not at hand, as in
//
//	go run ./internal/cmd/appnames dump.hprof > names.txt
//	decrunch dump.bmd --strings names.txt -o restored.hprof
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: appnames DUMP.hprof[.gz|.bz2]")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "appnames:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, _, err := compress.NewReader(f)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	names, err := heapstat.AppNames(data)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	for _, n := range names {
		fmt.Fprintln(w, n)
	}
	return w.Flush()
}
