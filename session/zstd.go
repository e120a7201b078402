package session

import (
	"bytes"
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// A Zstandard log is a concatenation of independent standard frames
// (RFC 8878): the first holds the header line alone, every later one is
// one durable append batch whose plaintext ends in LF, each written with
// the content checksum. Only the final frame may be incomplete (torn).

const zstdMagic = 0xFD2FB528

// frameRange is the byte range [start, end) of one structurally complete
// frame.
type frameRange struct{ start, end int }

// frameScan is the structural split of a Zstandard log into frames.
type frameScan struct {
	frames []frameRange
	torn   int // start of an incomplete final frame, or -1
}

// frameShape is what the structural parse of one frame found.
type frameShape struct {
	end        int // end of the frame; meaningful when complete
	complete   bool
	headerEnd  int // end of the frame header (0 when the header itself is torn)
	blocksEnd  int // end of the last complete block
	lastHeader int // offset of the last complete block's header, or -1
}

// scanFrames splits buf into frames without decompressing them, stopping
// after limit complete frames (limit <= 0: no limit). It fails on a bad
// magic number (a skippable frame included), a reserved frame-header bit
// or a reserved block type; EOF inside a frame marks it torn.
func scanFrames(buf []byte, limit int, path string) (frameScan, error) {
	out := frameScan{torn: -1}
	for start := 0; start < len(buf); {
		shape, err := parseFrame(buf, start, path)
		if err != nil {
			return frameScan{}, err
		}
		if !shape.complete {
			out.torn = start
			return out, nil
		}
		out.frames = append(out.frames, frameRange{start, shape.end})
		if len(out.frames) == limit {
			break
		}
		start = shape.end
	}
	return out, nil
}

// parseFrame reads the structure of the frame starting at start: its
// header, then its blocks up to the last one, then the checksum.
func parseFrame(buf []byte, start int, path string) (frameShape, error) {
	shape := frameShape{lastHeader: -1}
	if len(buf)-start < 4 {
		return shape, nil
	}
	if binary.LittleEndian.Uint32(buf[start:]) != zstdMagic {
		return shape, zstdCorrupt(path, start, "corrupt Zstandard session log: invalid frame magic at byte %d", start)
	}
	off := start + 4
	if off == len(buf) {
		return shape, nil
	}
	descriptor := buf[off]
	if descriptor&0x18 != 0 {
		return shape, zstdCorrupt(path, start, "corrupt Zstandard session log: reserved frame-header bit at byte %d", off)
	}
	off++
	off += frameHeaderRest(descriptor)
	if off > len(buf) {
		return shape, nil
	}
	shape.headerEnd, shape.blocksEnd = off, off
	for {
		if len(buf)-off < 3 {
			return shape, nil
		}
		blockHeader := uint32(buf[off]) | uint32(buf[off+1])<<8 | uint32(buf[off+2])<<16
		last, blockType, size := blockHeader&1 != 0, blockHeader>>1&3, int(blockHeader>>3)
		if blockType == 3 {
			return shape, zstdCorrupt(path, start, "corrupt Zstandard session log: reserved block type at byte %d", off)
		}
		if blockType == 1 {
			size = 1 // an RLE block carries one byte
		}
		if len(buf)-off-3 < size {
			return shape, nil
		}
		shape.lastHeader = off
		off += 3 + size
		shape.blocksEnd = off
		if last {
			break
		}
	}
	if descriptor&0x04 != 0 {
		if len(buf)-off < 4 {
			return shape, nil
		}
		off += 4
	}
	shape.end, shape.complete = off, true
	return shape, nil
}

// frameHeaderRest is the number of frame-header bytes after the
// descriptor: the window descriptor (absent for a single segment), the
// dictionary id and the frame content size.
func frameHeaderRest(descriptor byte) int {
	singleSegment := descriptor&0x20 != 0
	dictBytes := [4]int{0, 1, 2, 4}[descriptor&3]
	fcsFlag := descriptor >> 6
	fcsBytes := 1 << fcsFlag
	if fcsFlag == 0 {
		fcsBytes = 0
		if singleSegment {
			fcsBytes = 1
		}
	}
	window := 1
	if singleSegment {
		window = 0
	}
	return window + dictBytes + fcsBytes
}

func zstdCorrupt(path string, frame int, format string, args ...any) *corruptError {
	e := corruptf(path, 0, format, args...)
	e.FrameAt = int64(frame)
	return e
}

// The encoder and decoder are shared by every store and made when the
// package is initialized: each hands out its pooled state through a
// channel, and a channel first used inside a testing/synctest bubble
// would belong to that bubble and could not be used outside it.
var (
	sharedEncoder = newEncoder()
	sharedDecoder = newDecoder()
)

func newEncoder() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true),
		zstd.WithEncoderConcurrency(2), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err) // only invalid options fail
	}
	enc.EncodeAll(nil, nil) // makes the pool now, outside any bubble
	return enc
}

func newDecoder() *zstd.Decoder {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(2), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		panic(err) // only invalid options fail
	}
	return dec
}

// appendFrame appends plaintext compressed as one checksummed frame; a
// plaintext of at most rawFrameMax bytes is stored in it as it is.
func appendFrame(dst, plaintext []byte) []byte {
	if len(plaintext) > 0 && len(plaintext) <= rawFrameMax {
		return appendRawFrame(dst, plaintext)
	}
	return sharedEncoder.EncodeAll(plaintext, dst)
}

// rawFrameMax is the longest plaintext appendFrame stores uncompressed:
// the encoder saves a few bytes at most on a batch this short (a turn's
// start or end: it often stores those raw itself), yet setting it up
// costs microseconds of every such append, and more on a goroutine whose
// stack it has to grow (a turn's, ending).
const rawFrameMax = 128

// appendRawFrame appends plaintext (1 to rawFrameMax bytes) as a frame of
// one raw block with its content checksum, byte for byte as the encoder
// writes a frame it stores raw: a descriptor with only the checksum flag,
// the smallest window (1 KiB, above rawFrameMax), the last block's
// header, the plaintext, then the low 32 bits of its XXH64.
func appendRawFrame(dst, plaintext []byte) []byte {
	const checksumFlag, window1KiB = 0x04, 0x00
	dst = binary.LittleEndian.AppendUint32(dst, zstdMagic)
	dst = append(dst, checksumFlag, window1KiB)
	block := uint32(len(plaintext))<<3 | 1 // raw (type 0), last
	dst = append(dst, byte(block), byte(block>>8), byte(block>>16))
	dst = append(dst, plaintext...)
	return binary.LittleEndian.AppendUint32(dst, uint32(xxhash.Sum64(plaintext)))
}

// decodeFrame appends the plaintext of the complete frame buf[r.start:r.end]
// to dst after verifying its checksum.
func decodeFrame(dst, buf []byte, r frameRange, path string) ([]byte, error) {
	out, err := sharedDecoder.DecodeAll(buf[r.start:r.end], dst)
	if err != nil {
		return dst, zstdCorrupt(path, r.start, "corrupt Zstandard session log: frame at byte %d failed validation", r.start)
	}
	return out, nil
}

// checkHeaderFrame requires the first frame's plaintext to be exactly one
// line ending in its only LF.
func checkHeaderFrame(plain []byte, path string) error {
	for i, c := range plain {
		if c == '\n' && i != len(plain)-1 {
			return zstdCorrupt(path, 0, "corrupt Zstandard session log: first frame is not exactly one header line")
		}
	}
	if len(plain) == 0 || plain[len(plain)-1] != '\n' {
		return zstdCorrupt(path, 0, "corrupt Zstandard session log: first frame is not exactly one header line")
	}
	return nil
}

// appendTornPrefix appends what can be recovered from the frame at
// buf[start:], torn or failing its checksum: the plaintext of its complete
// blocks, read without a checksum. It appends nothing when no
// block is complete or they do not decode.
func appendTornPrefix(dst, buf []byte, start int) []byte {
	shape, err := parseFrame(buf, start, "")
	if err != nil || shape.lastHeader < 0 {
		return dst
	}
	frame := closedFrame(buf, start, shape)
	out, err := sharedDecoder.DecodeAll(frame, dst)
	if err != nil {
		return dst
	}
	return out
}

// closedFrame rebuilds the torn frame at start as a complete one: the same
// blocks with the last complete one marked last, under a header with no
// content size and no checksum whose window covers the original's.
func closedFrame(buf []byte, start int, shape frameShape) []byte {
	descriptor := buf[start+4]
	frame := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	frame = append(frame, descriptor&0x03) // keep only the dictionary-id size
	frame = append(frame, windowDescriptor(buf, start, descriptor))
	dictBytes := [4]int{0, 1, 2, 4}[descriptor&3]
	dictAt := start + 5
	if descriptor&0x20 == 0 {
		dictAt++
	}
	frame = append(frame, buf[dictAt:dictAt+dictBytes]...)
	blocksAt := len(frame)
	frame = append(frame, buf[shape.headerEnd:shape.blocksEnd]...)
	frame[blocksAt+shape.lastHeader-shape.headerEnd] |= 1
	return frame
}

// windowDescriptor is the window descriptor of the frame at start: its
// own, or for a single-segment frame the smallest power of two (at least
// 1 KiB) covering its content size.
func windowDescriptor(buf []byte, start int, descriptor byte) byte {
	if descriptor&0x20 == 0 {
		return buf[start+5]
	}
	fcsAt := start + 5 + [4]int{0, 1, 2, 4}[descriptor&3]
	var size uint64
	switch descriptor >> 6 {
	case 0:
		size = uint64(buf[fcsAt])
	case 1:
		size = uint64(binary.LittleEndian.Uint16(buf[fcsAt:])) + 256
	case 2:
		size = uint64(binary.LittleEndian.Uint32(buf[fcsAt:]))
	case 3:
		size = binary.LittleEndian.Uint64(buf[fcsAt:])
	}
	exponent := byte(0)
	for exponent < 31 && uint64(1)<<(10+exponent) < size {
		exponent++
	}
	return exponent << 3
}

// zstdPlain is a Zstandard log decoded for scanning.
type zstdPlain struct {
	plain    []byte // the header line, then every complete frame's plaintext, then what the torn frame yields
	header   int    // length of the header line with its LF
	complete int    // plaintext bytes from complete frames
	torn     int    // file offset of the torn final frame, or -1
	// frames maps plaintext offsets back to frames: frames[i] starts at
	// file offset at[i] and its plaintext at plainAt[i].
	at, plainAt []int
}

// decodeZstdLog verifies and decompresses every complete frame of a
// Zstandard log and recovers the complete blocks of a torn final frame.
func decodeZstdLog(buf []byte, path string) (zstdPlain, error) {
	scan, err := scanFrames(buf, 0, path)
	if err != nil {
		return zstdPlain{}, err
	}
	if len(scan.frames) == 0 {
		return zstdPlain{}, corruptf(path, 0, "empty or header-less Zstandard session log")
	}
	if scan.torn >= 0 {
		if next, found := completeFrameAfter(buf, scan.torn); found {
			return zstdPlain{}, zstdCorrupt(path, scan.torn, "corrupt Zstandard session log: frame at byte %d "+
				"runs past the end of the file, but a complete frame follows it at byte %d (damage before the last frame)",
				scan.torn, next)
		}
	}
	z := zstdPlain{torn: scan.torn, plain: make([]byte, 0, 4*len(buf)+512)}
	for i, r := range scan.frames {
		z.at, z.plainAt = append(z.at, r.start), append(z.plainAt, len(z.plain))
		if z.plain, err = decodeFrame(z.plain, buf, r, path); err != nil {
			return zstdPlain{}, err
		}
		if i == 0 {
			if err := checkHeaderFrame(z.plain, path); err != nil {
				return zstdPlain{}, err
			}
			z.header = len(z.plain)
		}
	}
	z.complete = len(z.plain)
	if z.torn >= 0 {
		z.at, z.plainAt = append(z.at, z.torn), append(z.plainAt, len(z.plain))
		z.plain = appendTornPrefix(z.plain, buf, z.torn)
	}
	return z, nil
}

// completeFrameAfter looks past the start of an incomplete frame for a
// later frame that is complete and passes validation (its checksum
// included). A write torn by a crash is the last bytes of the file, so
// such a frame means the incomplete one is damaged in the middle of the
// log (a block size grown past the end, say), which no repair may cut.
func completeFrameAfter(buf []byte, torn int) (int, bool) {
	magic := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	for from := torn + 1; from < len(buf); {
		i := bytes.Index(buf[from:], magic)
		if i < 0 {
			return 0, false
		}
		at := from + i
		shape, err := parseFrame(buf, at, "")
		if err == nil && shape.complete {
			if _, err := sharedDecoder.DecodeAll(buf[at:shape.end], nil); err == nil {
				return at, true
			}
		}
		from = at + 1
	}
	return 0, false
}

// frameOf returns the file offset of the frame holding plaintext offset off.
func (z *zstdPlain) frameOf(off int) int {
	frame := 0
	for i, p := range z.plainAt {
		if p <= off {
			frame = z.at[i]
		}
	}
	return frame
}
