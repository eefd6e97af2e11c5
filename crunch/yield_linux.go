//go:build linux

package crunch

import "syscall"

// osYield gives the processor this thread runs on to another thread
// waiting for it, if one is (sched_yield); with none, it returns at once.
// runtime.Gosched alone yields only to goroutines: where the goroutine
// pass 2's goroutine waits for runs on a thread that shares its processor
// (two goroutines on one processor, or a core another program has), that
// thread would wait for the scheduler's slice to end.
func osYield() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
