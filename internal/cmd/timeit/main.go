// Command timeit runs a command, its standard output discarded, and
// appends to a file a line "SECONDS KB FAULTS CPU": its wall time, from
// just before the process is started to just after it is waited for, its
// peak resident memory in KB, its minor page faults (each the first touch
// of a page of memory) and the processor time its threads took, user and
// system, in seconds, from the system's account of the child. The
// processor time over the wall time is how many cores the command kept
// busy on average (scripts/rounds.sh). It exits with the command's status
// (128+N where a signal N ended it).
//
//	go run ./internal/cmd/timeit OUT CMD [ARG...]
//
// It is the one timer of scripts/timing.sh (time1, read_twice, and through
// them bench.sh, scale.sh, rounds.sh and vsoriginal.sh). The timers it
// replaced counted their own work as the command's: `date +%s%N` on each
// side of a command, a process started after the command ended, added
// 4.6 ms to reading the 134 MB dump twice (26.7 against 22.1 ms, the least
// of 15 runs each, 2026-12-04), and /usr/bin/time inside such a pair
// 8.6 ms more to any command (/bin/true: 11.6 against 3.0 ms). Here
// /bin/true reads 2.4 to 5.2 ms (30 runs, 2026-12-04), as with bash's
// $EPOCHREALTIME around it (3.0 ms): what starting a process and waiting
// for it cost on this project's VM.
// The peak RSS is at least timeit's own (about 2.4 MB): the system counts
// the child's memory from the fork, before it runs the command.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run runs the command of args[1:] and appends its line to args[0]; it
// returns the exit status.
func run(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: timeit OUT CMD [ARG...]")
		return 2
	}
	out, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "timeit: %v\n", err)
		return 2
	}
	defer out.Close()
	m, status, err := measure(args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "timeit: %v\n", err)
		return 127
	}
	if _, err := fmt.Fprintln(out, m); err != nil {
		fmt.Fprintf(os.Stderr, "timeit: %v\n", err)
		return 2
	}
	return status
}

// measurement is what timeit measures of one run.
type measurement struct {
	wall   time.Duration
	maxKB  int64         // peak resident set, KB
	faults int64         // minor page faults
	cpu    time.Duration // processor time, user and system
}

// String returns the line timeit appends: seconds to the microsecond, KB,
// faults and processor seconds to the microsecond.
func (m measurement) String() string {
	return fmt.Sprintf("%.6f %d %d %.6f", m.wall.Seconds(), m.maxKB, m.faults, m.cpu.Seconds())
}

// measure runs cmd, its standard output discarded (/dev/null), its
// standard input and error this process's, and returns what it measured
// and the exit status. An error is a command that could not be started.
func measure(cmd []string) (measurement, int, error) {
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stderr = os.Stdin, os.Stderr
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return measurement{}, 0, err
	}
	defer devNull.Close()
	c.Stdout = devNull
	t0 := time.Now()
	if err := c.Start(); err != nil {
		return measurement{}, 0, err
	}
	err = c.Wait()
	wall := time.Since(t0)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return measurement{}, 0, err
	}
	m := measurement{wall: wall, cpu: c.ProcessState.UserTime() + c.ProcessState.SystemTime()}
	m.maxKB, m.faults = usage(c.ProcessState)
	return m, status(c.ProcessState), nil
}

// status returns the exit status a shell would give for a process that
// ended as ps says: its exit code, or 128+N for signal N.
func status(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
