package listeners

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func call(l *List[string], e string) {
	for _, fn := range l.Funcs() {
		fn(e)
	}
}

// Listeners run in the order they were added; a cancel removes only its
// own listener, once, and a snapshot taken before an edit stays as it was.
func TestListKeepsOrderAndCancelsIdempotently(t *testing.T) {
	var l List[string]
	require.Empty(t, l.Funcs(), "the zero List is empty")
	var got []string
	cancelA := l.Add(func(e string) { got = append(got, "a "+e) })
	l.Add(func(e string) { got = append(got, "b "+e) })
	cancelC := l.Add(func(e string) { got = append(got, "c "+e) })
	call(&l, "1")
	before := l.Funcs()
	cancelA()
	cancelA()
	call(&l, "2")
	cancelC()
	call(&l, "3")
	require.Equal(t, []string{"a 1", "b 1", "c 1", "b 2", "c 2", "b 3"}, got)
	require.Len(t, before, 3, "an earlier snapshot is immutable")
	require.Len(t, l.Funcs(), 1)
}

// Fan-outs read the list while others add and cancel (run with -race).
func TestListIsSafeForConcurrentUse(t *testing.T) {
	var l List[int]
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 200 {
				cancel := l.Add(func(int) {})
				for _, fn := range l.Funcs() {
					fn(i)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	require.Empty(t, l.Funcs())
}
