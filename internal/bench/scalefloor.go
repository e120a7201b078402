package bench

import (
	"runtime"
	"strconv"
	"sync"
	"time"
)

// ScaleFloor is row 9's follow-up and drain done without the runtime, at
// one size: live goroutines, each parked until it is stopped and holding
// as much heap as a live child, each found by id in a map. Send is, per
// agent, queueing a new message on one (its lock taken, the message
// appended, nothing woken: a child in a turn holds its follow-ups);
// Drain is stopping each (its entry deleted, its goroutine woken and
// gone). What these gain from the smallest size to the largest is the
// floor under row 9's ratios: cache misses and collector work that grow
// with the live heap and the number of goroutines.
type ScaleFloor struct {
	Live        int
	Send, Drain time.Duration
}

// floorHeap is the heap each floor goroutine holds, near a live child's.
const floorHeap = 4096

// floorMessage is the size of one queued floor message, near what a
// follow-up allocates.
const floorMessage = 1536

// floorChild is one floor goroutine's state.
type floorChild struct {
	mu    sync.Mutex
	queue [][]byte
	held  []byte
	stop  chan struct{}
}

// measureFloor measures ScaleFloor at live goroutines.
func measureFloor(live int) ScaleFloor {
	f := ScaleFloor{Live: live}
	children := make(map[string]*floorChild)
	ids := make([]string, live)
	var gone sync.WaitGroup
	for i := range ids {
		ids[i] = "child-" + strconv.Itoa(i)
		c := &floorChild{held: make([]byte, floorHeap), stop: make(chan struct{})}
		children[ids[i]] = c
		gone.Add(1)
		go func() {
			defer gone.Done()
			<-c.stop
		}()
	}
	runtime.GC()
	start := time.Now()
	for _, id := range ids {
		c := children[id]
		c.mu.Lock()
		c.queue = append(c.queue, make([]byte, floorMessage))
		c.mu.Unlock()
	}
	f.Send = time.Since(start) / time.Duration(live)
	start = time.Now()
	for _, id := range ids {
		close(children[id].stop)
		delete(children, id)
	}
	gone.Wait()
	f.Drain = time.Since(start) / time.Duration(live)
	return f
}
