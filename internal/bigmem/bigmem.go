// Package bigmem allocates large tables that hold no pointers outside the
// Go heap, where the kernel can back them with huge pages: on Linux, a
// table of MinHuge bytes or more is an anonymous mapping of its own,
// advised for transparent huge pages (madvise(MADV_HUGEPAGE), which takes
// effect where /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or
// "always"). The Go runtime does not advise its heap so, and the first
// touch of each 4 KiB page of a table costs a page fault: on the virtual
// machine of 2026-12-02, 13 to 19 µs each, against 8 to 9 µs per 4 KiB in
// 2 MiB pages (go run ./internal/cmd/faultcost; memory another process
// freed a moment before costs far less, 0.3 µs). Crunch's largest
// tables, its object index and the IDs pass 1 collects, are made so.
// HugeHeap advises the Go heap the process takes next in the same way,
// for the commands' other allocations.
//
// Memory from Bytes is given back with Free, not by the garbage collector:
// its owner frees it when nothing can read it any more.
package bigmem

import (
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"
)

// MinHuge is the size from which Bytes maps a table of its own: a huge
// page. Smaller tables come from the Go heap.
const MinHuge = 2 << 20

// mappings holds the mapping of each table Bytes mapped, by its first
// byte's address, for Free.
var mappings struct {
	sync.Mutex
	m map[uintptr][]byte
}

// Bytes returns n zeroed bytes, with capacity n: a mapping of their own,
// advised for huge pages, for n of MinHuge or more on a system that has
// them; else from the Go heap. A mapped table must be given back with
// Free and not used after; Free of a heap slice does nothing. The table
// must hold no Go pointers: the garbage collector does not see it.
func Bytes(n int) []byte {
	if n >= MinHuge {
		if b := mapHuge(n); b != nil {
			return b
		}
	}
	return make([]byte, n)
}

// Free gives back the table b, made by Bytes (b may be a slice of it that
// starts at its first byte, of any length, empty included). It does
// nothing for a table from the Go heap, or for nil.
func Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	unmap(b)
}

// Table returns a table of n zeroed values of type T, as Bytes returns
// bytes (mapped for MinHuge bytes or more where the system has huge
// pages), or nil if n values of T would not fit in an int of bytes. T
// must hold no pointers. FreeTable gives it back.
func Table[T any](n int) []T {
	size := int(unsafe.Sizeof(*new(T)))
	if n < 0 || size == 0 || n > math.MaxInt/size {
		return nil
	}
	if n*size < MinHuge {
		return make([]T, n)
	}
	b := Bytes(n * size)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// FreeTable gives back table t, made by Table (or a slice of it that
// starts at its first value), as Free does.
func FreeTable[T any](t []T) {
	if cap(t) > 0 {
		Free(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t))), 1))
	}
}

// IsMapped reports whether b starts at the first byte of a table Bytes
// mapped and Free has not given back: memory the garbage collector does
// not hold.
func IsMapped(b []byte) bool {
	if cap(b) == 0 {
		return false
	}
	mappings.Lock()
	defer mappings.Unlock()
	_, ok := mappings.m[uintptr(unsafe.Pointer(unsafe.SliceData(b)))]
	return ok
}

// Mapped reports how many tables are mapped and not freed (for tests).
func Mapped() int {
	mappings.Lock()
	defer mappings.Unlock()
	return len(mappings.m)
}

// HugeHeap advises for huge pages about the next n bytes of Go heap the
// process takes, where the system has them (Linux on a 64-bit machine;
// elsewhere it does nothing): it allocates n bytes, which the heap takes
// fresh from the system and does not touch, advises their 2 MiB-aligned
// part (madvise(MADV_HUGEPAGE) sets a flag on the range and faults in
// nothing), and lets the garbage collector free them. The heap hands out
// its lowest free pages first, so the allocations that follow land in the
// range, and the first touch of each 2 MiB there is one page fault instead
// of 512. The pages of the n bytes below the range (up to 2 MiB under its
// first huge page) would go first, in pages of 4 KiB: HugeHeap takes them
// for good, untouched (fillGap). Pages the runtime later gives back to the
// system are given back as ever; the range costs no memory until it is
// touched. Call it once, early, from a program's main (or a goroutine main
// starts, waited for before the allocations it is for): it runs a garbage
// collection, and it changes how the process's heap is backed, which a
// library should leave to the program.
func HugeHeap(n int) {
	if n < MinHuge {
		return
	}
	// n bytes are more than a young heap's goal: the allocation would
	// start a collection of its own before the one below (on the VM of
	// 2026-12-02 HugeHeap(64 MiB) took 3.8 to 7.6 ms so, 2.2 to 2.7 ms
	// without it).
	old := debug.SetGCPercent(-1)
	start, advised := adviseHeap(n)
	debug.SetGCPercent(old)
	if advised {
		runtime.GC()
		fillGap(start)
	}
}

// heapGap holds the fillers of the pages below the range HugeHeap
// advises (fillGap), never touched.
var heapGap []*strings.Builder

// minFill is the least fillGap allocates at a time: 16 pages of the
// heap's 8 KiB, so that the heap hands it out of its lowest free pages.
// (It hands a large object of fewer pages out of a cache of 64 pages that
// each processor keeps, wherever that cache was filled, and a small one
// out of a span of its size class.)
const minFill = 128 << 10

// maxFills bounds fillGap's allocations.
const maxFills = 8

// fillGap takes the heap's free pages below start, the first byte of the
// range HugeHeap advised, once the collection has freed the bytes
// adviseHeap allocated, and keeps them, so that the allocations after
// land in the range, in huge pages. The heap hands out its lowest free
// pages first: those of the gap (up to 2 MiB under the range's first
// huge page), with any the collection freed just below it. So fillGap
// allocates minFill bytes, and where they land below start and under a
// huge page of it, the rest up to start; until an allocation lands at or
// past start, or maxFills of them (a small hole lower in the heap takes
// one and is left). A filler that reaches into the range is untouched
// and its huge page whole. strings.Builder.Grow allocates without
// clearing (internal/bytealg.MakeNoZero, Go 1.21 on), so the fillers stay
// untouched and cost no memory; where it cleared, their pages would be
// touched here instead of later. Crunch of the 134 MB dump of the README
// took a median 981 and 992 page faults with them, 1,143 and 1,112
// without (two sets of 31 alternating runs, 2026-12-04; docs/measurements.md,
// "The heap's gap below its huge pages").
func fillGap(start uintptr) {
	for range maxFills {
		at, end := fill(minFill)
		if at == 0 || at >= start {
			return
		}
		if rest := start - end; end < start && rest < hugePage {
			if next, _ := fill(max(int(rest), minFill)); next == end {
				return // the pages up to start taken
			}
		}
	}
}

// fill allocates n bytes without touching them, keeps them in heapGap,
// and returns where they lie (0, 0 if that cannot be told).
func fill(n int) (at, end uintptr) {
	b := new(strings.Builder)
	b.Grow(n)
	heapGap = append(heapGap, b)
	p := uintptr(unsafe.Pointer(unsafe.StringData(b.String()))) // len 0: the buffer's start, untouched
	if p == 0 {
		return 0, 0
	}
	return p, p + uintptr(b.Cap())
}

// hugePage is the size and alignment of an x86-64 or arm64 huge page.
const hugePage = 2 << 20

// HeapAdvice is how much of the Go heap crunch and decrunch advise for
// huge pages as they start (HugeHeap); what is not touched costs
// nothing. Crunch of the 134 MB dump of the README allocates about 14 MB
// from the Go heap (pprof, alloc_space); there, 0, 32 and 64 MiB took 243,
// 205 and 202 ms (medians of 10 alternating runs, 2026-12-02) and 4,996,
// 1,608 and 1,474 page faults.
const HeapAdvice = 64 << 20
