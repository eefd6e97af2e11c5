//go:build !linux

package main

// populate does nothing where madvise(MADV_POPULATE_WRITE) is not to be
// had.
func populate([]byte) bool { return false }
