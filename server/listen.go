package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Timeouts of the HTTP server that Serve and HTTPServer set, besides Config.BodyTimeout
// (http.Server.ReadTimeout: the whole request, headers and body, must arrive within it).
// Neither read timeout outlives the request: net/http lifts the read deadline once the body
// has been read (a long answer, an SSE or NDJSON stream, is not cut) and when a WebSocket
// takes the connection over.
const (
	headerTimeout = 10 * time.Second // a client trickling its request headers is cut off
	idleTimeout   = 2 * time.Minute  // a kept-alive connection without a request is closed
	maxHeaderSize = 64 << 10
)

// HTTPServer returns an http.Server for s with header, request and idle timeouts.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s, ReadHeaderTimeout: min(headerTimeout, s.cfg.BodyTimeout), ReadTimeout: s.cfg.BodyTimeout,
		IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderSize}
}

// Serve serves s on ln (at most Config.MaxConns connections at once; more wait to be
// accepted) until ctx ends, then stops: Close (running operations end FAILED, saying so;
// streams close), then the HTTP server, which gets 5 s to finish its requests. It returns
// nil after a shutdown, or the error that stopped the listener.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.HTTPServer()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(netutil.LimitListener(ln, s.cfg.MaxConns)) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
