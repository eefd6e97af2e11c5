//go:build linux

package bigmem

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestHugeHeap: the pages HugeHeap takes below the range it advises stay
// untouched, most of them not in memory (fillGap; a page the heap used
// before is); after it,
// a large slice the heap hands out next lies in a range advised for huge
// pages from its first byte (the "hg" flag of its mapping in
// /proc/self/smaps; 1 to 5 % of runs failed that before fillGap took 16
// pages at a time), and touching its 4 KiB pages, 2,048 of them, takes a
// few page faults, not one each (not counted under the race detector,
// whose shadow memory faults page by page). It skips where the system
// has no transparent huge pages.
func TestHugeHeap(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[always]") && !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("no transparent huge pages here (%q, %v)", mode, err)
	}
	HugeHeap(0) // too little to advise: nothing happens
	HugeHeap(MinHuge - 1)
	HugeHeap(32 << 20)
	for _, f := range heapGap {
		at := uintptr(unsafe.Pointer(unsafe.StringData(f.String())))
		// A page the heap used before the collection freed it is in
		// memory already; a filler HugeHeap touched would be all in.
		if n, all := residentPages(t, at, f.Cap()), f.Cap()/4096; 2*n > all {
			t.Errorf("%d of the %d pages of HugeHeap's filler at %#x are in memory: it must leave them untouched", n, all, at)
		}
	}
	const n = 8 << 20
	b := make([]byte, n)
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	flags := vmFlags(t, at)
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("the mapping of a slice allocated after HugeHeap has flags %q, no hg (advised for huge pages)", flags)
	}
	if testutil.RaceEnabled {
		return // the race detector's shadow of each page faults on its own
	}
	before := minorFaults(t)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	if faults := minorFaults(t) - before; faults > n/4096/8 {
		t.Errorf("touching %d pages of 4 KiB after HugeHeap took %d page faults, want at most %d", n/4096, faults, n/4096/8)
	}
}

// vmFlags returns the VmFlags of the mapping in /proc/self/smaps that
// holds address at.
func vmFlags(t *testing.T, at uintptr) string {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= at && at < hi
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(flags)
		}
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", at)
	return ""
}

// residentPages returns how many of the 4 KiB pages of the n bytes at
// address at (page-aligned) are in memory (mincore).
func residentPages(t *testing.T, at uintptr, n int) int {
	vec := make([]byte, (n+4095)/4096)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, at, uintptr(n), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore(%#x, %d): %v", at, n, errno)
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return in
}

// minorFaults returns the process's minor page faults so far.
func minorFaults(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}
