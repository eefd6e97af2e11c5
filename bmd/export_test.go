package bmd

// LayoutWork returns the work the reader has counted building class
// layouts and decoding instances (classes visited, fields produced).
func LayoutWork(r *Reader) int64 { return r.lay.work }

// SlowOnly turns off the fast path of Next (fast.go).
func SlowOnly(r *Reader) { r.slowOnly = true }

// SetMinRunBytes sets the fewest bytes of object records the Writer
// frames in an OBJECTS record, and returns the previous value.
func SetMinRunBytes(n int) int {
	old := minRunBytes
	minRunBytes = n
	return old
}
