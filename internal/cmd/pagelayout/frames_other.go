//go:build !linux

package main

import "errors"

// fileLayout needs Linux's pagemap and kpageflags.
func fileLayout(path string) (layout, error) {
	return layout{}, errors.New("pagelayout needs Linux (/proc/self/pagemap, /proc/kpageflags)")
}
