// Command testreport reads the output of `go test -json` on its standard
// input and reports as CI needs it: the output of every failed test and
// package, and every skipped test. It exits 1 if any test or package
// failed or any test was skipped (CI=true allows no skip: a missing tool
// or corpus is a broken CI), and 2 if the input is not go test's JSON.
//
//	go test -race -json ./... | go run ./internal/cmd/testreport
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// report is what the events say: output kept per test, failures, skips.
type report struct {
	output  map[string][]string // package + " " + test → output lines
	failed  []string
	skipped []string
	passed  int
}

func key(e event) string { return e.Package + " " + e.Test }

func (r *report) add(e event) {
	switch e.Action {
	case "output":
		r.output[key(e)] = append(r.output[key(e)], e.Output)
	case "fail":
		r.failed = append(r.failed, key(e))
	case "skip":
		if e.Test != "" { // a package without tests is reported as skipped
			r.skipped = append(r.skipped, key(e))
			r.output[key(e)] = nil
		}
	case "pass":
		if e.Test != "" {
			r.passed++
		}
		delete(r.output, key(e))
	}
}

func read(in io.Reader) (*report, error) {
	r := &report{output: map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("line %d is not go test -json output: %v", line, err)
		}
		r.add(e)
	}
	return r, sc.Err()
}

func (r *report) print(w io.Writer) {
	for _, k := range r.failed {
		fmt.Fprintf(w, "--- FAIL %s\n%s", strings.TrimSpace(k), strings.Join(r.output[k], ""))
	}
	sort.Strings(r.skipped)
	for _, k := range r.skipped {
		fmt.Fprintf(w, "--- SKIP %s (CI allows no skipped test)\n", k)
	}
	fmt.Fprintf(w, "%d tests passed, %d failed (tests and packages), %d skipped\n", r.passed, len(r.failed), len(r.skipped))
}

func main() {
	r, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	r.print(os.Stdout)
	if len(r.failed) > 0 || len(r.skipped) > 0 {
		os.Exit(1)
	}
}
