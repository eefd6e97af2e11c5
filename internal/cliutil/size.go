package cliutil

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a size in bytes: a number, optionally followed by K, M,
// G or T (powers of 1000) or KiB, MiB, GiB or TiB (powers of 1024), in any
// case, with an optional B (100G, 100GB, 1.5GiB, 4096).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	u := strings.ToUpper(t)
	mult := 1.0
	for _, x := range []struct {
		suf string
		m   float64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"B", 1}} {
		if strings.HasSuffix(u, x.suf) {
			t, mult = t[:len(t)-len(x.suf)], x.m
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is not a number of bytes (such as 4096, 100G or 1.5GiB)", s)
	}
	return int64(v * mult), nil
}

// FormatSize writes a size in bytes for people: 6,085 bytes, 4.0 GiB.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return Plural(int(n), "byte")
}
