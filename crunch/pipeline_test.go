package crunch_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestPipelineSameBytes: encoding on a second goroutine must write exactly
// what the single-goroutine pass 2 writes, with every option.
func TestPipelineSameBytes(t *testing.T) {
	inputs := []string{testutil.Fixture("sample.hprof.gz"), testutil.Fixture("sample32.hprof.gz")}
	dialer := filepath.Join(testutil.Root(), "..", "shared", "corpus", "android-dalvik-kitkat-dialer.android-hprof")
	if _, err := os.Stat(dialer); err == nil {
		inputs = append(inputs, dialer)
	}
	opts := []crunch.Options{{}, {KeepStrings: true, KeepPrimitives: true}, {Profile: "leak", DropHeaps: []string{"zygote"}}}
	for _, in := range inputs {
		src := testutil.ReadAll(t, in)
		for _, o := range opts {
			run := func(workers int) []byte {
				o := o
				o.Workers = workers
				var out bytes.Buffer
				if _, err := crunch.Crunch(bytes.NewReader(src), &out, o); err != nil {
					t.Fatalf("%s: %v", in, err)
				}
				return out.Bytes()
			}
			one, two := run(1), run(2)
			if !bytes.Equal(one, two) {
				t.Errorf("%s %+v: pipelined output differs (%d vs %d bytes)", filepath.Base(in), o, len(one), len(two))
			}
		}
	}
}
