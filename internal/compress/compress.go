// Package compress detects and undoes the compression of an input file by
// its content (gzip, bzip2, zstd; xz is recognised, not undone), and picks a
// compressor for output.
package compress

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Kind names a compression format.
type Kind string

// Compression kinds.
const (
	None  Kind = "none"
	Gzip  Kind = "gzip"
	Bzip2 Kind = "bzip2"
	Zstd  Kind = "zstd"
	Xz    Kind = "xz" // recognised by Sniff, not read
)

// magics are the magic numbers of the compressed formats, for Sniff and
// Detect.
var magics = [...]struct {
	kind  Kind
	magic string
}{
	{Gzip, "\x1f\x8b"},
	{Zstd, "\x28\xb5\x2f\xfd"},
	{Bzip2, "BZh"}, // then the block size, '1' to '9'
	{Xz, "\xfd7zXZ\x00"},
}

// Sniff reports the compression format of data that starts with head, xz
// included, which NewReader does not undo; None if it knows no format
// there.
func Sniff(head []byte) Kind {
	for _, m := range magics {
		if !strings.HasPrefix(string(head), m.magic) {
			continue
		}
		if m.kind == Bzip2 && (len(head) < 4 || head[3] < '1' || head[3] > '9') {
			return None
		}
		return m.kind
	}
	return None
}

// Detect reports the compression of data that starts with head that
// NewReader undoes: Sniff, but None for xz.
func Detect(head []byte) Kind {
	if k := Sniff(head); k != Xz {
		return k
	}
	return None
}

// maxZstdWindow is the largest zstd window NewReader accepts.
const maxZstdWindow = 128 << 20

// NewReader returns a reader of r's decompressed content, detecting the
// compression by content, and the kind it found. Close releases decoder
// resources; it does not close r.
func NewReader(r io.Reader) (io.ReadCloser, Kind, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4)
	k := Detect(head)
	switch k {
	case Gzip:
		all, _ := br.Peek(1 << 16) // the whole file, if a header cut short
		n := len(all)
		z, err := gzip.NewReader(br)
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			return nil, k, fmt.Errorf("gzip: truncated: the file ends in its gzip header, at offset %d: %w", n, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return nil, k, fmt.Errorf("gzip: %w", err)
		}
		z.Multistream(false)
		return &gzipMembers{z: z, br: br}, k, nil
	case Bzip2:
		return io.NopCloser(bzip2.NewReader(br)), k, nil
	case Zstd:
		// The decoder allocates the window a frame declares: refuse
		// windows over 128 MiB, as the zstd tool does by default, so
		// that a few bytes cannot claim gigabytes.
		z, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return nil, k, fmt.Errorf("zstd: %w", err)
		}
		return z.IOReadCloser(), k, nil
	}
	return io.NopCloser(br), None, nil
}

// gzipMembers reads the members of a gzip file one after the other, as
// gzip.Reader does by itself, but tells bytes after the last member that
// are not one (trailing garbage, zero padding) from a member cut short:
// gzip.Reader calls both an unexpected EOF or a bad header.
type gzipMembers struct {
	z   *gzip.Reader
	br  *bufio.Reader
	out int64 // bytes decompressed
	err error
}

// ErrTrailingData is the error of bytes after the end of a compressed
// stream that are not part of it.
var ErrTrailingData = errors.New("trailing data after the end of the gzip data")

func (g *gzipMembers) Read(p []byte) (int, error) {
	for g.err == nil {
		n, err := g.z.Read(p)
		g.out += int64(n)
		if err != io.EOF {
			return n, err
		}
		// A member ended: another starts with the gzip magic, or the
		// file ends here.
		head, perr := g.br.Peek(2)
		switch {
		case len(head) == 0 && perr == io.EOF:
			g.err = io.EOF
		case Sniff(head) == Gzip:
			if rerr := g.z.Reset(g.br); rerr != nil {
				g.err = rerr
			} else {
				g.z.Multistream(false)
			}
		case perr != nil && perr != io.EOF:
			g.err = perr
		default:
			rest, _ := io.Copy(io.Discard, io.LimitReader(g.br, 1<<20))
			more := ""
			if rest == 1<<20 {
				more = " or more"
			}
			what := fmt.Sprintf("%d bytes%s that are", rest, more)
			if rest == 1 {
				what = "1 byte that is"
			}
			g.err = fmt.Errorf("%w: %s not gzip, after %d decompressed bytes", ErrTrailingData, what, g.out)
		}
		if n > 0 {
			return n, nil
		}
	}
	return 0, g.err
}

// Close releases the decompressor; it does not close the underlying reader.
func (g *gzipMembers) Close() error { return g.z.Close() }

// ForName returns the compression that an output file name asks for by its
// extension: .zst or .zstd for zstd, .gz for gzip, else None.
func ForName(name string) Kind {
	switch {
	case strings.HasSuffix(name, ".zst"), strings.HasSuffix(name, ".zstd"):
		return Zstd
	case strings.HasSuffix(name, ".gz"):
		return Gzip
	}
	return None
}

// Parse turns a --compress flag value, in any case, into a Kind.
func Parse(s string) (Kind, error) {
	switch strings.ToLower(s) {
	case "none":
		return None, nil
	case "zstd", "zst":
		return Zstd, nil
	case "gzip", "gz":
		return Gzip, nil
	}
	return None, fmt.Errorf("unknown compression %q (use none, zstd or gzip)", s)
}

// NewWriter wraps w so that what is written to it is compressed with k.
// Close flushes the compressor; it does not close w.
func NewWriter(w io.Writer, k Kind) (io.WriteCloser, error) {
	switch k {
	case Gzip:
		return gzip.NewWriterLevel(w, gzip.BestCompression)
	case Zstd:
		return newZstdFrames(w)
	case None:
		return nopWriteCloser{w}, nil
	}
	return nil, fmt.Errorf("cannot write %s", k)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
