package bmd

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestAppendRefs checks that appendRefs, ref and uv written out, writes
// what ref writes, at each length of varint and around the reference that
// has no encoding.
func TestAppendRefs(t *testing.T) {
	self := uint64(1) << 62
	var targets []uint64
	for _, d := range []uint64{0, 1, 63, 64, 1<<13 - 1, 1 << 13, 1<<20 - 1, 1 << 20, 1<<27 - 1, 1 << 27, 1 << 40, 1<<62 - 1} {
		targets = append(targets, self+d, self-d)
	}
	targets = append(targets, 0, self+1<<63-1, self+1<<63+1, math.MaxUint64)
	var want, got Writer
	for _, tg := range targets {
		want.ref(tg, self)
	}
	got.buf = got.appendRefs([]byte{7}, targets, self)
	if !bytes.Equal(got.buf[1:], want.buf) || got.buf[0] != 7 {
		t.Fatalf("appendRefs wrote\n%x\nref wrote\n%x", got.buf[1:], want.buf)
	}
	if want.err != nil || got.err != nil {
		t.Fatalf("errors %v, %v", want.err, got.err)
	}

	bad := []uint64{5, self + 1<<63, 6}
	want, got = Writer{}, Writer{}
	for _, tg := range bad {
		want.ref(tg, self)
	}
	got.buf = got.appendRefs(nil, bad, self)
	if !bytes.Equal(got.buf, want.buf) || got.err == nil || want.err == nil || got.err.Error() != want.err.Error() {
		t.Fatalf("appendRefs wrote %x, %v; ref wrote %x, %v", got.buf, got.err, want.buf, want.err)
	}
}

// TestAppendUvarint checks that appendUvarint, written without a call so
// that it inlines, writes protowire.AppendVarint's bytes at each length of
// varint, at both ends of each, and that Writer.uv writes them too.
func TestAppendUvarint(t *testing.T) {
	vals := []uint64{math.MaxUint64}
	for n := uint(7); n < 64; n += 7 {
		vals = append(vals, 1<<(n-7), 1<<n-1, 1<<n, 1<<n+1)
	}
	vals = append(vals, 0, 1, 0x55, 1<<63, 1<<63+12345)
	for _, v := range vals {
		want := protowire.AppendVarint([]byte{0xEE}, v)
		if got := appendUvarint([]byte{0xEE}, v); !bytes.Equal(got, want) {
			t.Errorf("appendUvarint(%#x) = % x, want % x", v, got, want)
		}
		w := Writer{buf: []byte{0xEE}}
		if w.uv(v); !bytes.Equal(w.buf, want) {
			t.Errorf("Writer.uv(%#x) = % x, want % x", v, w.buf, want)
		}
	}
}
