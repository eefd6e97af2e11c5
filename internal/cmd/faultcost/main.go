// Command faultcost measures what the first touch of fresh memory costs
// on this machine: it touches one byte of each 4 KiB page of tables from
// the Go heap (small pages, a page fault each) and from internal/bigmem
// (huge pages where the kernel gives them), in turns, each table new and
// kept to the end so that no round reuses another's pages, and prints the
// time per 4 KiB of each round. Crunch's largest tables come from bigmem
// because of what it printed on the virtual machine of 2026-12-02:
//
//	go run ./internal/cmd/faultcost
//	round 1: heap 15.9 us, bigmem 0.3 us per 4 KiB (64 MiB each)
//	round 2: heap 13.3 us, bigmem 9.2 us per 4 KiB (64 MiB each)
//	round 3: heap 13.1 us, bigmem 8.6 us per 4 KiB (64 MiB each)
//
// (round 1's bigmem table had the huge pages a run just before gave back).
//
// A third table per round, from the Go heap too, is first mapped whole by
// the kernel (madvise(MADV_POPULATE_WRITE), Linux 5.14) and then touched:
// "populated" is the time per 4 KiB of that touch alone: what the first
// touch of a small page costs where the kernel has it mapped already. On
// the VM of 2026-12-03 it printed
//
//	go run ./internal/cmd/faultcost
//	round 1: heap 10.6 us, bigmem 0.2 us, populated 4.7 us per 4 KiB (64 MiB each; populating took 12.3 ms)
//	round 2: heap 10.6 us, bigmem 6.6 us, populated 4.5 us per 4 KiB (64 MiB each; populating took 8.5 ms)
//	round 3: heap 10.3 us, bigmem 6.3 us, populated 4.6 us per 4 KiB (64 MiB each; populating took 12.3 ms)
//
// (figures of that day in docs/measurements.md, "A first touch in a new
// process").
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/heapcrunch/heapcrunch/internal/bigmem"
)

// touch writes a byte of each 4 KiB page of b and returns the time per
// page.
func touch(b []byte) float64 {
	t := time.Now()
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return float64(time.Since(t).Nanoseconds()) / float64(len(b)/4096) / 1000
}

func main() {
	mib := flag.Int("mib", 64, "size of each table, in MiB")
	rounds := flag.Int("rounds", 3, "rounds of one table of each kind")
	flag.Parse()
	n := *mib << 20
	var kept [][]byte
	for r := range *rounds {
		h := make([]byte, n)
		heap := touch(h)
		m := bigmem.Bytes(n)
		mapped := touch(m)
		p := make([]byte, n)
		t := time.Now()
		populated := "no MADV_POPULATE_WRITE"
		if populate(p) {
			took := time.Since(t)
			populated = fmt.Sprintf("populated %.1f us per 4 KiB (%d MiB each; populating took %.1f ms)", touch(p), *mib, float64(took.Microseconds())/1000)
		}
		kept = append(kept, h, m, p)
		fmt.Printf("round %d: heap %.1f us, bigmem %.1f us, %s\n", r+1, heap, mapped, populated)
	}
	for i := 1; i < len(kept); i += 3 {
		bigmem.Free(kept[i])
	}
}
