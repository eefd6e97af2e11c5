package crunch

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestDialerSize: on the corpus Android dump the original 2014 tool wrote
// 930,098 bytes; the issue asks for at most 0.7 of that by default.
func TestDialerSize(t *testing.T) {
	src := testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof"))
	var out bytes.Buffer
	st, err := Crunch(bytes.NewReader(src), &out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range st.OutBytesBy {
		t.Logf("%-24s %8d records %9d bytes", k, st.OutRecords[k], v)
	}
	const limit = 930098 * 7 / 10
	if out.Len() > limit {
		t.Errorf("BMD is %d bytes, limit %d", out.Len(), limit)
	}
	t.Logf("total %d bytes (limit %d)", out.Len(), limit)
}

// TestDialerSizeZstd: --compress zstd must come to at most 0.8 of what the
// original tool's output gave after xz -6 (490,448 bytes).
func TestDialerSizeZstd(t *testing.T) {
	src := testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof"))
	var out bytes.Buffer
	zw, err := compress.NewWriter(&out, compress.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Crunch(bytes.NewReader(src), zw, Options{Tool: "heapcrunch 0.1.0"}); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	const limit = 490448 * 8 / 10
	if out.Len() > limit {
		t.Errorf("zstd BMD is %d bytes, limit %d", out.Len(), limit)
	}
	t.Logf("zstd total %d bytes (limit %d)", out.Len(), limit)
}
