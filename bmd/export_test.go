package bmd

// LayoutWork returns the work the reader has counted building class
// layouts and decoding instances (classes visited, fields produced).
func LayoutWork(r *Reader) int64 { return r.lay.work }

// SlowOnly turns off the fast path of Next (fast.go).
func SlowOnly(r *Reader) { r.slowOnly = true }
