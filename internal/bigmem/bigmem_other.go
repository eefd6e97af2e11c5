//go:build !linux

package bigmem

// mapHuge maps nothing on this system: tables come from the Go heap.
func mapHuge(int) []byte { return nil }

// unmap has nothing to give back on this system.
func unmap([]byte) {}

// adviseHeap advises nothing on this system.
func adviseHeap(int) (uintptr, bool) { return 0, false }
