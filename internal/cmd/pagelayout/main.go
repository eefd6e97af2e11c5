// Command pagelayout prints how a file's pages sit in the page cache: how
// many of them are in large folios, and how scattered they are in
// physical memory. Reading the same bytes from the page cache took 2.4
// times as long on the VM of 2026-12-03 when they were scattered, and
// crunch's time, and the time of reading a dump twice that issue 12's aim
// compares it with, change with it (docs/measurements.md, "Where the
// dump's pages lie"). The scripts that time crunch print it for their
// input:
//
//	go run ./internal/cmd/pagelayout /tmp/v1work/big134.hprof
//	/tmp/v1work/big134.hprof: 32555 pages, 25.7 % next to the one before, 3206 2 MiB frames, 18.9 % in large folios (214, 28.7 pages each)
//
// (its first run, 2026-12-03, on the 134 MB dump as the JVM wrote it).
//
// It maps each file, reads a byte of each page (which brings the file
// into the page cache if it is not), and looks each page up in
// /proc/self/pagemap and /proc/kpageflags, which need root (CAP_SYS_ADMIN)
// for page frame numbers: without them it says it cannot tell.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: pagelayout FILE...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	rc := 0
	for _, path := range flag.Args() {
		l, err := fileLayout(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pagelayout: %v\n", err)
			rc = 1
			continue
		}
		fmt.Printf("%s: %s\n", path, l)
	}
	os.Exit(rc)
}

// frame is what the kernel says of one page of the file: its page frame
// number, and whether it is the head or a tail page of a large folio.
type frame struct {
	pfn        uint64
	head, tail bool
}

// layout is what summarize finds in a file's frames.
type layout struct {
	pages    int
	adjacent int // pages whose frame follows the frame of the page before
	frames2M int // distinct 2 MiB-aligned physical frames touched
	inLarge  int // pages in large folios
	folios   int // large folios (their head pages)
}

func (l layout) String() string {
	if l.pages == 0 {
		return "no pages"
	}
	pct := func(n int) float64 { return 100 * float64(n) / float64(l.pages) }
	each := 0.0
	if l.folios > 0 {
		each = float64(l.inLarge) / float64(l.folios)
	}
	return fmt.Sprintf("%d pages, %.1f %% next to the one before, %d 2 MiB frames, %.1f %% in large folios (%d, %.1f pages each)",
		l.pages, pct(l.adjacent), l.frames2M, pct(l.inLarge), l.folios, each)
}

// summarize counts, over the pages of a file in order, how many follow
// the page before in physical memory, the 2 MiB frames they lie in, and
// those in large folios.
func summarize(frames []frame) layout {
	var c counter
	for _, f := range frames {
		c.add(f)
	}
	return c.layout()
}

// counter is summarize a page at a time, for files too large to hold a
// frame for each of their pages.
type counter struct {
	l    layout
	prev uint64
	seen map[uint64]bool // 2 MiB frames
}

// add counts the next page of the file.
func (c *counter) add(f frame) {
	if c.l.pages > 0 && f.pfn == c.prev+1 {
		c.l.adjacent++
	}
	c.prev = f.pfn
	c.l.pages++
	if c.seen == nil {
		c.seen = make(map[uint64]bool)
	}
	c.seen[f.pfn>>9] = true
	if f.head || f.tail {
		c.l.inLarge++
	}
	if f.head {
		c.l.folios++
	}
}

// layout returns what c counted.
func (c *counter) layout() layout {
	l := c.l
	l.frames2M = len(c.seen)
	return l
}
