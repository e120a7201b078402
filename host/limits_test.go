package host

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/testkit"
)

func TestLimitDefaults(t *testing.T) {
	opts := withLimitDefaults(Options{})
	require.Equal(t, 30*time.Second, opts.BodyReadTimeout)
	require.Equal(t, int64(2*(maxBodyBytes+1)), opts.MaxBodyBytesInFlight)
	require.Equal(t, 32<<20, opts.MaxQueuedBytes)
	require.Equal(t, 1<<16, opts.MaxQueuedFrames)
}

// TestTricklingBodyIsCutOff: a body that stops arriving is answered 408
// once BodyReadTimeout has passed, over a real connection (the deadline is
// the connection's). Without the timeout the read below would wait for its
// own safety deadline and fail the test.
func TestTricklingBodyIsCutOff(t *testing.T) {
	h := newHandler(newFakeBackend(), Options{BodyReadTimeout: 50 * time.Millisecond})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /api/session.list HTTP/1.1\r\nHost: "+srv.Listener.Addr().String()+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"type\":")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(testkit.WaitLimit)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	require.Equal(t, "request body not read within 50ms", string(text))
}

// TestBodiesInFlightShareOneByteBudget: the bodies being read or handled
// share MaxBodyBytesInFlight; one that does not fit beside them is a 413
// naming the budget, and the budget comes back once a request is answered.
func TestBodiesInFlightShareOneByteBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(newFakeBackend(), Options{MaxBodyBytesInFlight: 1000})
		defer h.Close()
		envelope := `{"type":"client-request","rpcId":"r","method":"session.list","payload":{"pad":"`
		padded := func(size int) string { return envelope + strings.Repeat("x", size-len(envelope)-3) + `"}}` }

		// A declared 600-byte body is charged 601 bytes while it arrives.
		slow, feed := io.Pipe()
		declared := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7410/api/session.list", slow)
		declared.RemoteAddr = "127.0.0.1:50000" // a page on this machine
		declared.ContentLength = 600
		declared.Header.Set("Content-Type", "application/json")
		first := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(first, declared)
		}()
		synctest.Wait()

		rec := post(h, "session.list", "application/json", padded(500))
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		require.Equal(t, "request body too large: the bodies being read hold the server's whole 1000-byte budget; retry later",
			rec.Body.String())
		require.Equal(t, http.StatusOK, post(h, "session.list", "application/json", padded(300)).Code)

		// A body of unknown length is charged as its buffer doubles.
		chunked := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7410/api/session.list",
			io.MultiReader(strings.NewReader(padded(500))))
		chunked.RemoteAddr = "127.0.0.1:50000" // a page on this machine
		chunked.ContentLength = -1
		chunked.Header.Set("Content-Type", "application/json")
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, chunked)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)

		_, err := io.WriteString(feed, padded(600))
		require.NoError(t, err)
		require.NoError(t, feed.Close())
		<-done
		require.Equal(t, http.StatusOK, first.Code, first.Body.String())
		require.Equal(t, 0, int(h.bodies.used), "every charge is given back")
		require.Equal(t, http.StatusRequestEntityTooLarge, post(h, "session.list", "application/json", padded(1000)).Code)
		require.Equal(t, http.StatusOK, post(h, "session.list", "application/json", padded(998)).Code)
	})
}

// TestSlowStreamOverflowsOnBytes: a stream's queue is bounded in bytes as
// well as frames; a frame larger than the bound still reaches a stream
// whose queue is empty.
func TestSlowStreamOverflowsOnBytes(t *testing.T) {
	big := func(seq int64) notice {
		return notice{Kind: sessionEvent, SessionID: "s", Event: plain(seq, "turn/"+strings.Repeat("x", 400))}
	}
	hb := newHub(queueLimit{frames: 100, bytes: 1300}, nil)
	s := hb.join(streamAll)
	for seq := range int64(5) {
		hb.publish(big(seq))
	}
	frames, end := hb.take(s)
	require.True(t, end)
	require.Len(t, frames, 3, "two frames of about 600 bytes fit in 1300, the third overflows")
	require.Contains(t, string(frames[2]), `"method":"stream/error"`)

	hb = newHub(queueLimit{frames: 100, bytes: 10}, nil)
	s = hb.join(streamAll)
	hb.publish(big(0))
	frames, end = hb.take(s)
	require.False(t, end)
	require.Len(t, frames, 1)
	require.Contains(t, string(frames[0]), `"seq":0`, strconv.Itoa(len(frames[0])))
}
