//go:build !unix

package bench

// floorKeptFiles is how many floor nodes keep their log open.
var floorKeptFiles = func() int { return 512 }

// measureEndIO is row 9's end-of-life floor, measured on unix only.
func measureEndIO(string, int) (Phase, error) { return Phase{}, nil }

// storeKeptFiles is the kept-file budget row 9's end-of-life floor
// assumes where it is not measured.
var storeKeptFiles = func() int { return 0 }
