package crunch_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestOptionWarnings: options that find nothing to act on say so.
func TestOptionWarnings(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	st, err := crunch.Crunch(bytes.NewReader(src), io.Discard, crunch.Options{DropHeaps: []string{"zygote"},
		PreserveClasses: []string{"com.example.NoSuchClass", "Sample$Person"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--drop-heap zygote: the dump has no zygote heap", "--preserve-class com.example.NoSuchClass: no class"}
	if len(st.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", st.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(st.Warnings[i], w) {
			t.Errorf("warning %q, want %q…", st.Warnings[i], w)
		}
	}
	st, err = crunch.Crunch(bytes.NewReader(src), io.Discard, crunch.Options{PreserveClasses: []string{"Sample.Person"}})
	if err != nil || len(st.Warnings) != 1 {
		t.Errorf("Sample.Person is Sample$Person's source name but not its name: %q %v", st.Warnings, err)
	}
}
