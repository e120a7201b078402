package bench

import (
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	dsh "github.com/dsh-actors/dsh-actors"
)

// Samples are the durations of repeated timed operations.
type Samples []time.Duration

// Time runs op and records how long it took.
func (s *Samples) Time(op func()) {
	start := time.Now()
	op()
	*s = append(*s, time.Since(start))
}

// Median is the middle sample in nanoseconds (the mean of the two middle
// ones for an even count); 0 when empty. The median resists the outliers a
// shared machine produces better than the mean does.
func (s Samples) Median() float64 {
	if len(s) == 0 {
		return 0
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return float64(sorted[mid].Nanoseconds())
	}
	return float64(sorted[mid-1].Nanoseconds()+sorted[mid].Nanoseconds()) / 2
}

// Mean is the mean sample in nanoseconds; 0 when empty.
func (s Samples) Mean() float64 {
	if len(s) == 0 {
		return 0
	}
	var total time.Duration
	for _, d := range s {
		total += d
	}
	return float64(total.Nanoseconds()) / float64(len(s))
}

// Channel is the raw in-process baseline: one goroutine answering
// request/reply over two unbuffered channels.
type Channel struct {
	requests, replies chan int
	done              chan struct{}
}

// NewChannel starts the answering goroutine; Close stops it.
func NewChannel() *Channel {
	c := &Channel{requests: make(chan int), replies: make(chan int), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for r := range c.requests {
			c.replies <- r
		}
	}()
	return c
}

// RoundTrip sends one request and blocks until its reply.
func (c *Channel) RoundTrip() int {
	c.requests <- 1
	return <-c.replies
}

// Close stops the answering goroutine and waits until it has exited.
func (c *Channel) Close() {
	close(c.requests)
	<-c.done
}

// QuietSystem is a bare protoactor actor system (default dispatcher) that
// logs nothing: the baseline every "bare protoactor" figure uses.
func QuietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

// echo is a bare protoactor actor answering every string.
type echo struct{}

func (echo) Receive(c actor.Context) {
	if s, ok := c.Message().(string); ok {
		c.Respond(s)
	}
}

// EchoProps are the props of the bare echo actor, with opts.
func EchoProps(opts ...actor.PropsOption) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return echo{} }, opts...)
}

// LiveBytes is the heap plus stack in use after two full collections.
func LiveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// perCount is (after-before)/n, never negative.
func perCount(before, after uint64, n int) float64 {
	if after <= before || n <= 0 {
		return 0
	}
	return float64(after-before) / float64(n)
}

// RawLog is the simplest group commit over one file, the ceiling the
// runtime's logging is compared with: appenders add to a buffer, one writer
// goroutine writes whatever is pending and fdatasyncs once per batch, then
// releases the appenders waiting on that batch.
type RawLog struct {
	f       *os.File
	mu      sync.Mutex
	pending []byte
	synced  chan struct{} // closed when the pending batch is durable
	closed  bool
	err     error
	wake    chan struct{}
	done    chan struct{}
}

// CreateRawLog creates path and starts its writer goroutine; Close stops
// it.
func CreateRawLog(path string) (*RawLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	l := &RawLog{f: f, synced: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go l.write()
	return l, nil
}

// Append adds line to the next batch; with wait it blocks until that
// batch is durable.
func (l *RawLog) Append(line []byte, wait bool) {
	l.mu.Lock()
	l.pending = append(l.pending, line...)
	synced := l.synced
	l.mu.Unlock()
	l.poke()
	if wait {
		<-synced
	}
}

func (l *RawLog) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close blocks until everything appended is durable, stops the writer and
// closes the file; it returns the first write, sync or close error.
func (l *RawLog) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.poke()
	<-l.done
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	return l.err
}

func (l *RawLog) write() {
	defer close(l.done)
	var batch []byte
	for range l.wake {
		l.mu.Lock()
		batch, l.pending = l.pending, batch[:0]
		synced := l.synced
		l.synced = make(chan struct{})
		closed := l.closed && len(batch) == 0
		l.mu.Unlock()
		if len(batch) > 0 {
			if _, err := l.f.Write(batch); err != nil && l.err == nil {
				l.err = err
			}
			if err := datasync(l.f); err != nil && l.err == nil {
				l.err = err
			}
			l.poke() // appends that came in meanwhile form the next batch
		}
		close(synced)
		if closed {
			return
		}
	}
}

// closeRuntime closes rt and stores its error in *err unless *err
// already holds one; measurements defer it right after dsh.Open.
func closeRuntime(rt *dsh.Runtime, err *error) {
	if cerr := rt.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}
