// Package strhash hashes strings in place, without the allocations of
// hash/fnv's interface, for the hot paths that pick a slot by an id or a
// path (the prompt lock's stripe, a lease record's owner file).
package strhash

// FNV1a is the 32-bit FNV-1a hash of s, equal to hash/fnv's New32a over
// its bytes.
func FNV1a(s string) uint32 {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for i := range len(s) {
		h = (h ^ uint32(s[i])) * prime
	}
	return h
}
