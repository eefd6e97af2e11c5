package cliutil

import (
	"os"
	"runtime/debug"
)

// GCPercent is the pace of the garbage collector (GOGC) that crunch and
// decrunch run at: it collects once the heap has grown by 8 times what
// lived after the last collection, where Go's default is once it has
// doubled (GOGC=100). Their heaps are mostly tables and buffers that live
// to the end, so the slower pace spares collections and the page faults
// of their sweeps more than it adds to the peak.
//
// Crunch: with the default, the collections while the heap is still
// small, as the first pass reads the dump's strings, cost 4 to 5 % (12
// alternating runs on the README's 134 MB dump, median 0.2235 s against
// 0.2346 s at GOGC=400; on big-200m.hprof 0.234 s against 0.244 s; peak
// RSS 46 MB against 39 MB and 47 against 42 MB, on big-1300m.hprof 93 MB
// either way; 2026-12-02). At 800 rather than 400 the 134 MB dump's crunch
// runs no collection but the heap's advice's (bigmem.HugeHeap): about 190
// fewer page faults and 2.5 to 5.4 ms less (medians of four sets of 41
// alternating runs, 2026-12-04), the same peak RSS on it, ManyClasses,
// big-200m.hprof, big-1300m.hprof and the 6 M-object genhprof dumps.
//
// Decrunch (at GOGC=100 until 2026-12-04): of the 134 MB dump's BMD, one
// collection where there were four, about 250 fewer page faults, 180.1
// and 180.4 ms against 186.3 and 192.2 ms at 400 (medians of 21
// alternating runs each way round; 800 the same as 400), with one core
// 150.9 against 155.6 ms at 800; of big-1300m.hprof's BMD 1,113.6
// against 1,105.1 ms (7 runs, within the noise) and 21.1 MB of peak RSS
// against 20.0 MB. docs/measurements.md, "GOGC 800".
const GCPercent = 800

// CollectLess sets the process's garbage collector to GCPercent, unless
// the environment sets GOGC, which then wins. Call it first in main: the
// packages leave the process's settings alone.
func CollectLess() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}
