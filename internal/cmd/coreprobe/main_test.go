package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/cores"
)

// TestShortForm: -short names each way the probe fails by its error, not
// by the error's text, and prints a round trip as its nanoseconds.
func TestShortForm(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		err  error
		want string
	}{
		{57, nil, "57"},
		{0, cores.ErrNoStart, "nostart"},
		{0, fmt.Errorf("probe: %w", cores.ErrSlow), "slow"},
		{0, errors.New("other"), "error"},
	} {
		if got := shortForm(c.ns, c.err); got != c.want {
			t.Errorf("shortForm(%d, %v) = %q, want %q", c.ns, c.err, got, c.want)
		}
	}
}
