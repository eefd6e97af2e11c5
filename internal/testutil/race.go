//go:build race

package testutil

// RaceEnabled reports whether the tests run under the race detector,
// whose instrumentation allocates more than a plain build.
const RaceEnabled = true
