package crunch

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// The original 2014 tool wrote 930,098 bytes of BMD for the corpus dialer
// dump, 490,448 bytes after xz -6.
const (
	dialerV1Plain = 930098
	dialerV1Xz    = 490448
)

func crunchDialer(t *testing.T, opt Options, kind compress.Kind) (*Stats, int) {
	t.Helper()
	src := testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof"))
	var out bytes.Buffer
	zw, err := compress.NewWriter(&out, kind)
	if err != nil {
		t.Fatal(err)
	}
	opt.Tool = "heapcrunch 0.1.0"
	st, err := Crunch(bytes.NewReader(src), zw, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return st, out.Len()
}

// TestDialerSize: a default BMD of the dialer dump carries the names of
// the platform's 3,555 classes and their fields in the clear, and is still
// smaller than the original tool's file; with every name hashed
// (--hash-platform-names) it is at most 0.7 of it.
func TestDialerSize(t *testing.T) {
	st, n := crunchDialer(t, Options{}, compress.None)
	for k, v := range st.OutBytesBy {
		t.Logf("%-24s %8d records %9d bytes", k, st.OutRecords[k], v)
	}
	t.Logf("default: %d bytes (limit %d)", n, dialerV1Plain)
	if n > dialerV1Plain {
		t.Errorf("default BMD is %d bytes, limit %d", n, dialerV1Plain)
	}
	_, n = crunchDialer(t, Options{HashPlatformNames: true}, compress.None)
	const limit = dialerV1Plain * 7 / 10
	t.Logf("--hash-platform-names: %d bytes (limit %d)", n, limit)
	if n > limit {
		t.Errorf("--hash-platform-names BMD is %d bytes, limit %d", n, limit)
	}
}

// TestDialerSizeZstd: what users upload, --compress zstd, must come to at
// most 0.7 of what the original tool's output gave after xz -6.
func TestDialerSizeZstd(t *testing.T) {
	_, n := crunchDialer(t, Options{}, compress.Zstd)
	const limit = dialerV1Xz * 7 / 10
	t.Logf("zstd: %d bytes (limit %d)", n, limit)
	if n > limit {
		t.Errorf("zstd BMD is %d bytes, limit %d", n, limit)
	}
}
