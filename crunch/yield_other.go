//go:build !linux

package crunch

import "runtime"

// osYield yields to other goroutines only on this system (see
// yield_linux.go): the Go standard library has no portable way to yield
// the thread.
func osYield() { runtime.Gosched() }
