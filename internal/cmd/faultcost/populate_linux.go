package main

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the
// syscall package does not name.
const madvPopulateWrite = 23

// populate maps every page of b for writing, as a write to each would,
// in one system call, and reports whether the kernel did.
func populate(b []byte) bool {
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), madvPopulateWrite)
	return e == 0
}
