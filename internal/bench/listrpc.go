package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/host"
)

// listServer is the path subagent.list takes under `dsh-actors serve`: the
// host's RPC handler over a runtime opened with dsh.Open, whose catalog
// its derived index answers, served over HTTP on a loopback port, and a client keeping one
// connection per concurrent caller.
type listServer struct {
	srv     *http.Server
	url     string
	client  *http.Client
	closers []func() error // in order
}

// openListServer serves root's store; close it with close.
func openListServer(root string, clients int) (*listServer, error) {
	rt, err := dsh.Open(dsh.Options{Dir: root})
	if err != nil {
		return nil, err
	}
	handler := host.New(rt, host.Options{}) // the runtime's derived index answers its catalog
	s := &listServer{closers: []func() error{func() error { handler.Close(); return nil }, rt.Close}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(err, s.close())
	}
	s.srv = &http.Server{Handler: handler, ReadHeaderTimeout: time.Minute}
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at close
	s.url = "http://" + ln.Addr().String() + "/api/subagent.list"
	s.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	return s, nil
}

// close stops the HTTP server, then closes the handler and the runtime
// (which closes its index and its store), in that order.
func (s *listServer) close() error {
	var errs []error
	if s.srv != nil {
		s.client.CloseIdleConnections()
		errs = append(errs, s.srv.Close())
	}
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// list posts one subagent.list of parent and reads the whole answer into
// buf (reset first).
func (s *listServer) list(ctx context.Context, parent string, buf *bytes.Buffer) error {
	body := fmt.Sprintf(`{"type":"client-request","rpcId":"bench","method":"subagent.list","payload":{"parentSessionId":%q}}`, parent)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("subagent.list: HTTP %d: %s", resp.StatusCode, buf.Bytes())
	}
	return err
}

// count checks one answer of parent: ok, with want entries.
func (s *listServer) count(ctx context.Context, parent string, want int) error {
	var buf bytes.Buffer
	if err := s.list(ctx, parent, &buf); err != nil {
		return err
	}
	body := buf.Bytes()
	var resp struct {
		Result struct {
			OK    bool `json:"ok"`
			Value struct {
				Entries []json.RawMessage `json:"entries"`
			} `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return fmt.Errorf("subagent.list answer: %w", err)
	}
	if !resp.Result.OK || len(resp.Result.Value.Entries) != want {
		return fmt.Errorf("subagent.list of %s: ok %v, %d entries, want %d: %.200s", parent, resp.Result.OK,
			len(resp.Result.Value.Entries), want, body)
	}
	return nil
}
