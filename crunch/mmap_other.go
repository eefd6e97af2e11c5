//go:build !linux

package crunch

import "io"

// mapFile maps nothing on this system: the input is read through a buffer.
func mapFile(io.ReadSeeker) ([]byte, func()) { return nil, func() {} }

var pageSize = 4096

func dropPages([]byte) {}

// mappedPays says no: nothing is mapped on this system.
func mappedPays(io.ReadSeeker) bool { return false }
