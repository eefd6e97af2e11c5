package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

const (
	pageSize      = 4096
	pmPresent     = 1 << 63
	pmPFNMask     = 1<<55 - 1
	kpfCompHead   = 1 << 15
	kpfCompTail   = 1 << 16
	maxMappedFile = 1 << 40
)

// pageFrames maps the file at path, touches each of its pages, and
// returns the frame of each (pagemap(5), /proc/kpageflags).
func pageFrames(path string) ([]frame, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > maxMappedFile {
		return nil, fmt.Errorf("%s: not a regular file of 1 byte to 1 TiB", path)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	defer syscall.Munmap(b)
	n := (len(b) + pageSize - 1) / pageSize
	var sum byte
	for i := 0; i < n; i++ {
		sum += b[i*pageSize]
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	kf, err := os.Open("/proc/kpageflags")
	if err != nil {
		return nil, fmt.Errorf("cannot tell the page frames (needs root): %w", err)
	}
	defer kf.Close()
	entries := make([]byte, 8*n)
	first := int64(uintptr(unsafe.Pointer(&b[0])) / pageSize)
	if _, err := pm.ReadAt(entries, first*8); err != nil {
		return nil, fmt.Errorf("/proc/self/pagemap: %w", err)
	}
	frames := make([]frame, 0, n)
	var e [8]byte
	for i := 0; i < n; i++ {
		v := binary.LittleEndian.Uint64(entries[8*i:])
		pfn := v & pmPFNMask
		if v&pmPresent == 0 || pfn == 0 {
			return nil, errors.New("cannot tell the page frames (needs root for /proc/self/pagemap's frame numbers)")
		}
		if _, err := kf.ReadAt(e[:], int64(pfn)*8); err != nil {
			return nil, fmt.Errorf("/proc/kpageflags: %w", err)
		}
		flags := binary.LittleEndian.Uint64(e[:])
		frames = append(frames, frame{pfn: pfn, head: flags&kpfCompHead != 0, tail: flags&kpfCompTail != 0})
	}
	if sum == 1 { // keeps the touches
		fmt.Fprint(os.Stderr, "")
	}
	return frames, nil
}
