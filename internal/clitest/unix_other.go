//go:build !linux

package clitest

import (
	"os"
	"testing"
)

func privateNull(string) (string, bool) { return "", false }

// OpenPTY skips the test: pseudo-terminals are opened on Linux only.
func OpenPTY(t testing.TB) (ptm, tty *os.File) {
	t.Helper()
	t.Skip("pseudo-terminal tests run on Linux only")
	return nil, nil
}

// Pending returns nothing (see OpenPTY).
func Pending(testing.TB, *os.File) []byte { return nil }

// MakeFIFO skips the test: FIFOs are made on Linux only.
func MakeFIFO(t testing.TB, path string) {
	t.Helper()
	t.Skip("FIFO tests run on Linux only")
}

// ReadFIFO returns nothing (see MakeFIFO).
func ReadFIFO(string, int) func() []byte { return func() []byte { return nil } }

// UnnamedFiles returns false: files without a name (O_TMPFILE) are made
// on Linux only.
func UnnamedFiles(string) bool { return false }
