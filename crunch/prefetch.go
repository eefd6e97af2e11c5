//go:build amd64 || arm64

package crunch

import "unsafe"

// canPrefetch: the processor has a prefetch instruction, which
// prefetchLines uses.
const canPrefetch = true

// prefetchLines asks the processor to bring into its caches the cache
// line of base+o for each offset o of offs, and returns without waiting
// for any (PREFETCHT0 on amd64, PRFM PLDL1KEEP on arm64). A prefetch
// never faults, but the addresses must be those of memory base points
// into, kept alive by the caller.
//
//go:noescape
func prefetchLines(base unsafe.Pointer, offs []uint64)
