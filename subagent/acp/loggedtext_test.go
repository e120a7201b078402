package acp_test

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// loggedText is the text of a log file as far as it can be read: a
// Zstandard log decoded up to its first frame that does not decode yet.
func loggedText(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".zstd") {
		return string(data)
	}
	dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return ""
	}
	defer dec.Close()
	plain, _ := io.ReadAll(dec)
	return string(plain)
}
