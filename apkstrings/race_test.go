//go:build race

package apkstrings

const raceEnabled = true
