//go:build !linux

package cacheread

// setup sets c to read the ordinary way: only Linux has RWF_NOWAIT.
func (c *File) setup() { c.plain.Store(true) }

// cached reads nothing: c reads the ordinary way (setup).
func (c *File) cached(p []byte, off int64) (n int, ok bool) { return 0, false }
