//go:build !unix

package cores

import "time"

// ProcessCPU says nothing on this system: false.
func ProcessCPU() (time.Duration, bool) { return 0, false }
