//go:build linux

package bigmem

import (
	"math"
	"syscall"
	"unsafe"
)

// madvHugePage is MADV_HUGEPAGE, which the syscall package does not name.
const madvHugePage = 14

// mapHuge maps n bytes at a huge page boundary, advised for huge pages,
// or returns nil if the system refuses the mapping. The mapping takes a
// huge page more than n, for the alignment; its pages are not touched
// and cost nothing.
func mapHuge(n int) []byte {
	if n > math.MaxInt-hugePage {
		return nil
	}
	m, err := syscall.Mmap(-1, 0, n+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	off := int(-p & (hugePage - 1))
	b := m[off : off+n : off+n]
	// Refused (EINVAL) by a kernel without transparent huge pages: the
	// table is then in small pages, as on the heap.
	_ = syscall.Madvise(b, madvHugePage)
	mappings.Lock()
	if mappings.m == nil {
		mappings.m = map[uintptr][]byte{}
	}
	mappings.m[uintptr(unsafe.Pointer(unsafe.SliceData(b)))] = m
	mappings.Unlock()
	return b
}

// unmap unmaps the mapping whose table starts at b's first byte, if
// there is one.
func unmap(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	mappings.Lock()
	m, ok := mappings.m[p]
	delete(mappings.m, p)
	mappings.Unlock()
	if ok {
		syscall.Munmap(m)
	}
}

// adviseHeap allocates n bytes from the Go heap and advises their 2
// MiB-aligned part for huge pages, on a 64-bit machine (on a 32-bit one
// the n bytes of address space may not be there to take). It reports
// whether it did, and the address where the advised part starts.
func adviseHeap(n int) (start uintptr, ok bool) {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		return 0, false
	}
	b := make([]byte, n)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (hugePage - 1))
	size := (n - off) &^ (hugePage - 1)
	if size <= 0 {
		return 0, false
	}
	return uintptr(unsafe.Pointer(&b[off])), syscall.Madvise(b[off:off+size], madvHugePage) == nil
}
