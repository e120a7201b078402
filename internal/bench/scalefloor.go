package bench

import (
	"strconv"
	"sync"
)

// ScaleFloor is row 9's spawn, follow-up and drain done without the
// runtime, at one size: live goroutines, each parked until it is stopped
// and holding as much heap as a live child, each found by id in a map.
// Spawn is, per agent, starting one and registering it by id; Send is
// queueing a new message on one (its lock taken, the message appended,
// nothing woken: a child in a turn holds its follow-ups); Drain is
// stopping each (its entry deleted, its goroutine woken and gone). What
// these gain from the smallest size to the largest is the floor under row
// 9's ratios: cache misses and collector work that grow with the live
// heap and the number of goroutines. Each is timed as row 9's are
// (timePhase). EndIO is the I/O a drained child's log and lease take,
// without the runtime (measureEndIO).
type ScaleFloor struct {
	Live                      int
	Spawn, Send, Drain, EndIO Phase
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

// measureFloor measures ScaleFloor at live goroutines, and at as many
// logs in a new folder under dir.
func measureFloor(dir string, live int) (ScaleFloor, error) {
	f := measureGoroutines(live)
	var err error
	f.EndIO, err = measureEndIO(dir, live)
	return f, err
}

// measureGoroutines measures ScaleFloor's goroutine phases at live
// goroutines.
func measureGoroutines(live int) ScaleFloor {
	f := ScaleFloor{Live: live}
	children := make(map[string]*floorChild)
	ids := make([]string, live)
	for i := range ids {
		ids[i] = "child-" + strconv.Itoa(i)
	}
	var gone sync.WaitGroup
	f.Spawn, _ = timePhase(live, func() error {
		for _, id := range ids {
			c := &floorChild{held: make([]byte, floorHeap), stop: make(chan struct{})}
			children[id] = c
			gone.Go(func() { <-c.stop })
		}
		return nil
	})
	f.Send, _ = timePhase(live, func() error {
		for _, id := range ids {
			c := children[id]
			c.mu.Lock()
			c.queue = append(c.queue, make([]byte, floorMessage))
			c.mu.Unlock()
		}
		return nil
	})
	f.Drain, _ = timePhase(live, func() error {
		for _, id := range ids {
			close(children[id].stop)
			delete(children, id)
		}
		gone.Wait()
		return nil
	})
	return f
}
