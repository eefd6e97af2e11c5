package main

import "testing"

func TestSummarize(t *testing.T) {
	frames := []frame{
		{pfn: 1000}, {pfn: 1001}, // adjacent, in 2 MiB frame 1
		{pfn: 2048, head: true}, {pfn: 2049, tail: true}, {pfn: 2050, tail: true}, // a large folio in frame 4, two adjacent
		{pfn: 90000},
	}
	got := summarize(frames)
	want := layout{pages: 6, adjacent: 3, frames2M: 3, inLarge: 3, folios: 1}
	if got != want {
		t.Fatalf("summarize = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "6 pages, 50.0 % next to the one before, 3 2 MiB frames, 50.0 % in large folios (1, 3.0 pages each)" {
		t.Errorf("String() = %q", s)
	}
	if s := summarize(nil).String(); s != "no pages" {
		t.Errorf("empty: %q", s)
	}
}
