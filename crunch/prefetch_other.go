//go:build !amd64 && !arm64

package crunch

import "unsafe"

// canPrefetch: no prefetch instruction here (prefetchLines is not
// called); wordToucher loads the words instead.
const canPrefetch = false

// prefetchLines does nothing: see the amd64 and arm64 version.
func prefetchLines(base unsafe.Pointer, offs []uint64) {}
