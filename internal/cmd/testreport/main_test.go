package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"a.go:1: boom\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"b_test.go:9: no tool\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"fine\n"}
{"Action":"pass","Package":"p","Test":"TestC"}
{"Action":"skip","Package":"q"}
{"Action":"fail","Package":"p"}
`
	r, err := read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.failed) != 2 || len(r.skipped) != 1 || r.passed != 1 {
		t.Errorf("failed %v, skipped %v, passed %d; want 2 failures (TestA, package p), 1 skip (TestB; package q has no tests), 1 pass", r.failed, r.skipped, r.passed)
	}
	var b bytes.Buffer
	r.print(&b)
	out := b.String()
	for _, want := range []string{"--- FAIL p TestA\na.go:1: boom\n", "--- SKIP p TestB", "1 tests passed, 2 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fine") {
		t.Errorf("report shows a passed test's output:\n%s", out)
	}
}

func TestReportNotJSON(t *testing.T) {
	if _, err := read(strings.NewReader("ok  \tpkg\t0.1s\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("plain go test output: %v, want an error naming line 1", err)
	}
}
