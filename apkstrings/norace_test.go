//go:build !race

package apkstrings

const raceEnabled = false
