//go:build !linux

package crunch

import (
	"io"
	"os"
)

// canMap says that this system maps no files.
const canMap = false

// mapFile maps nothing on this system: the input is read through a buffer.
func mapFile(io.ReadSeeker) ([]byte, func()) { return nil, func() {} }

var pageSize = 4096

func dropPages([]byte) {}

// mappedPays says no: nothing is mapped on this system (largeFile gives
// no file to ask it of).
func mappedPays(*os.File, int64, bool) bool { return false }
