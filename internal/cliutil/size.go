package cliutil

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxSize is the largest size ParseSize takes: 4 EiB, a limit no file
// reaches.
const maxSize = 1 << 62

// ParseSize reads a size in bytes: a decimal number, optionally followed by
// K, M, G or T (powers of 1000) or KiB, MiB, GiB or TiB (powers of 1024),
// in any case, with an optional B (100G, 100GB, 1.5GiB, 4096). The size is
// rounded to a whole number of bytes; one that rounds to 0 is refused
// unless it is 0 (which callers take for "no limit").
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
	t = strings.TrimSpace(t)
	// Digits with at most one point: ParseFloat alone would also take
	// NaN, Inf, exponents and hexadecimal.
	if t == "" || t == "." || strings.Count(t, ".") > 1 || strings.TrimLeft(t, "0123456789.") != "" {
		return 0, fmt.Errorf("size %q is not a number of bytes (such as 4096, 100G or 1.5GiB)", s)
	}
	tooLarge := func() error { return fmt.Errorf("size %q is too large (at most %d bytes, 4 EiB)", s, int64(maxSize)) }
	if !strings.Contains(t, ".") {
		// A whole number, exactly: float64 would round past 2^53.
		n, err := strconv.ParseUint(t, 10, 64)
		if err != nil || n > maxSize/uint64(mult) {
			return 0, tooLarge() // only digits: ParseUint fails by range alone
		}
		return int64(n * uint64(mult)), nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, tooLarge() // digits and a point: by range alone
	}
	n := math.Round(v * mult)
	switch {
	case n > maxSize:
		return 0, tooLarge()
	case n == 0 && v != 0:
		return 0, fmt.Errorf("size %q is less than one byte", s)
	}
	return int64(n), nil
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
