package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

const (
	pageSize    = 4096
	pmPresent   = 1 << 63
	pmPFNMask   = 1<<55 - 1
	kpfCompHead = 1 << 15
	kpfCompTail = 1 << 16
	// pagesAtOnce is how many pagemap entries are read at a time.
	pagesAtOnce = 8192
)

// fileLayout maps the file at path, reads a byte of each of its pages,
// and counts their frames (pagemap(5), /proc/kpageflags).
func fileLayout(path string) (layout, error) {
	f, err := os.Open(path)
	if err != nil {
		return layout{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return layout{}, err
	}
	if !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > math.MaxInt {
		return layout{}, fmt.Errorf("%s: not a regular file of 1 byte to %d", path, math.MaxInt)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return layout{}, fmt.Errorf("%s: mmap: %w", path, err)
	}
	defer syscall.Munmap(b)
	n := (len(b) + pageSize - 1) / pageSize
	var sum byte
	for i := 0; i < n; i++ {
		sum += b[i*pageSize]
	}
	runtime.KeepAlive(sum) // the reads are made: they bring the pages in
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return layout{}, err
	}
	defer pm.Close()
	kf, err := os.Open("/proc/kpageflags")
	if err != nil {
		return layout{}, fmt.Errorf("cannot tell the page frames (needs root): %w", err)
	}
	defer kf.Close()
	first := int64(uintptr(unsafe.Pointer(&b[0])) / pageSize)
	entries := make([]byte, 8*min(n, pagesAtOnce))
	var c counter
	var e [8]byte
	for at := 0; at < n; at += pagesAtOnce {
		m := min(n-at, pagesAtOnce)
		if _, err := pm.ReadAt(entries[:8*m], (first+int64(at))*8); err != nil {
			return layout{}, fmt.Errorf("/proc/self/pagemap: %w", err)
		}
		for i := 0; i < m; i++ {
			v := binary.LittleEndian.Uint64(entries[8*i:])
			pfn := v & pmPFNMask
			if v&pmPresent == 0 || pfn == 0 {
				return layout{}, errors.New("cannot tell the page frames (needs root for /proc/self/pagemap's frame numbers)")
			}
			if _, err := kf.ReadAt(e[:], int64(pfn)*8); err != nil {
				return layout{}, fmt.Errorf("/proc/kpageflags: %w", err)
			}
			flags := binary.LittleEndian.Uint64(e[:])
			c.add(frame{pfn: pfn, head: flags&kpfCompHead != 0, tail: flags&kpfCompTail != 0})
		}
	}
	return c.layout(), nil
}
