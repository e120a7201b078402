package inbox

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"sync/atomic"
)

// NewMessageID returns a fresh MessageID: a version 4 uuid in its
// lower-case text form, drawn from the runtime's ChaCha8 generator
// (math/rand/v2), which is seeded from the operating system; message ids
// need uniqueness, not secrecy. Ids are minted idsPerBlock at a time into
// one string that each id is a slice of, so that most calls allocate
// nothing and cost one atomic add; a caller that keeps an id keeps its
// block's few hundred bytes. It never blocks and is safe for concurrent
// use. Callers that must know an id before the message is accepted
// (accepted-id accounting) mint it here and pass it in the message to
// Post.
func NewMessageID() string {
	for {
		block := idBlocks.Load()
		if block != nil {
			if i := int(block.taken.Add(1)) - 1; i < idsPerBlock {
				return block.text[i*uuidLen : (i+1)*uuidLen]
			}
		}
		idBlocks.CompareAndSwap(block, newIDBlock()) // a racing loser's block is dropped
	}
}

// idsPerBlock is how many MessageIDs are minted together.
const idsPerBlock = 16

// uuidLen is the length of a uuid's text form.
const uuidLen = 36

// idBlock is a run of minted ids, handed out in order.
type idBlock struct {
	text  string       // idsPerBlock ids, back to back
	taken atomic.Int32 // ids handed out, or asked for once all were
}

// idBlocks is the block NewMessageID hands ids out of (nil before the
// first call).
var idBlocks atomic.Pointer[idBlock]

// newIDBlock mints a block of fresh ids, none handed out.
func newIDBlock() *idBlock {
	var text [idsPerBlock * uuidLen]byte
	for i := range idsPerBlock {
		writeUUID(text[i*uuidLen : (i+1)*uuidLen])
	}
	return &idBlock{text: string(text[:])}
}

// writeUUID writes a random version 4 uuid into dst (uuidLen bytes) as
// 8-4-4-4-12 lower-case hex digits.
func writeUUID(dst []byte) {
	var id [16]byte
	binary.LittleEndian.PutUint64(id[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(id[8:], rand.Uint64())
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	hex.Encode(dst[0:8], id[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], id[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], id[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], id[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:36], id[10:16])
}
