//go:build !linux

package main

import "errors"

// pageFrames needs Linux's pagemap and kpageflags.
func pageFrames(path string) ([]frame, error) {
	return nil, errors.New("pagelayout needs Linux (/proc/self/pagemap, /proc/kpageflags)")
}
