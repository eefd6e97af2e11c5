package compress

import (
	"io"

	"github.com/klauspost/compress/zstd"
)

// Sizes of the zstd stream NewWriter writes: a block every FlushSize bytes
// of input, a new frame every FrameSize. A decoder hands out a zstd
// block's data once the block is whole, so a file cut short keeps what
// precedes the cut to within FlushSize bytes (BMD's own blocks are as
// large); frames are independent, so the damage of one leaves the others
// readable, while within a frame later blocks still refer to earlier data
// and compress as well as one stream does.
const (
	FlushSize = 16 << 10
	FrameSize = 4 << 20
)

// zstdFrames writes zstd frames of FrameSize input bytes, flushed every
// FlushSize bytes.
type zstdFrames struct {
	w       io.Writer
	enc     *zstd.Encoder
	inFrame int // input bytes in the current frame
	inBlock int // input bytes since the last flush
	err     error
}

func newZstdFrames(w io.Writer) (*zstdFrames, error) {
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(8<<20),
		zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &zstdFrames{w: w, enc: enc}, nil
}

func (z *zstdFrames) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 && z.err == nil {
		k := min(len(p), FlushSize-z.inBlock, FrameSize-z.inFrame)
		if _, z.err = z.enc.Write(p[:k]); z.err != nil {
			break
		}
		n += k
		p = p[k:]
		z.inBlock += k
		z.inFrame += k
		switch {
		case z.inFrame == FrameSize:
			if z.err = z.enc.Close(); z.err == nil {
				z.enc.Reset(z.w)
			}
			z.inFrame, z.inBlock = 0, 0
		case z.inBlock == FlushSize:
			z.err = z.enc.Flush()
			z.inBlock = 0
		}
	}
	return n, z.err
}

// Close ends the last frame; it does not close the underlying writer.
func (z *zstdFrames) Close() error {
	if z.err != nil {
		return z.err
	}
	return z.enc.Close()
}
