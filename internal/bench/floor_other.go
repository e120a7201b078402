//go:build !unix

package bench

// floorKeptFiles is how many floor nodes keep their log open.
var floorKeptFiles = func() int { return 512 }
