package server

import (
	"context"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labmate/labmate/runner"

	"github.com/labmate/labmate/protocol"
)

// BenchmarkGuard measures what the guard (Host allow-list, Origin check, application/json,
// body deadline, token) adds to a request, against the same routes without it, in one run:
// go test -bench Guard ./server/ -run '^$'. The ratio is reported as guarded/bare.
func BenchmarkGuard(b *testing.B) {
	const token = "benchmark-token-0123456789abcdef"
	s, err := New(context.Background(), Config{
		Config:     runner.Config{Store: protocol.NewMemStore(), Log: log.New(b.Output(), "", 0)},
		Token:      token,
		Addr:       "127.0.0.1:7878",
		AllowHosts: []string{"lab.example.org"},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	noop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	chain := s.guardChain(noop)
	b.Run("middleware-only", func(b *testing.B) {
		r := httptest.NewRequest("POST", "/v1/sessions/x/operations", nil)
		r.Host = "127.0.0.1:7878"
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Origin", "http://127.0.0.1:7878")
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = 2
		w := httptest.NewRecorder()
		for b.Loop() {
			chain.ServeHTTP(w, r)
		}
		if w.Code >= 300 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	for _, c := range []struct {
		name, method, path, body string
	}{
		{"healthz", "GET", "/healthz", ""},
		{"sessions", "GET", "/v1/sessions", ""},
		{"post", "POST", "/v1/sessions", `{}`},
	} {
		req := func() *http.Request {
			r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			r.Host = "127.0.0.1:7878"
			r.Header.Set("Authorization", "Bearer "+token)
			r.Header.Set("Origin", "http://127.0.0.1:7878")
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			if c.body != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			return r
		}
		var bare, guarded float64
		b.Run(c.name+"/bare", func(b *testing.B) {
			for b.Loop() {
				s.mux.ServeHTTP(httptest.NewRecorder(), req())
			}
			bare = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(c.name+"/guarded", func(b *testing.B) {
			for b.Loop() {
				w := httptest.NewRecorder()
				s.ServeHTTP(w, req())
				if w.Code >= 300 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			guarded = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if bare > 0 {
				b.ReportMetric(guarded/bare, "guarded/bare")
				b.ReportMetric(guarded-bare, "ns-added/op")
			}
		})
	}
}

// BenchmarkGuardLoopback is the same comparison over HTTP on loopback (a kept-alive
// connection), where a request costs what a client actually waits for.
func BenchmarkGuardLoopback(b *testing.B) {
	const token = "benchmark-token-0123456789abcdef"
	s, err := New(context.Background(), Config{Config: runner.Config{Store: protocol.NewMemStore(), Log: log.New(b.Output(), "", 0)}, Token: token})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var bare float64
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"bare", s.mux}, {"guarded", s}} {
		b.Run(c.name, func(b *testing.B) {
			hs := httptest.NewServer(c.h)
			defer hs.Close()
			cl := hs.Client()
			for b.Loop() {
				r, _ := http.NewRequest("POST", hs.URL+"/v1/sessions", strings.NewReader(`{}`))
				r.Header.Set("Authorization", "Bearer "+token)
				r.Header.Set("Content-Type", "application/json")
				resp, err := cl.Do(r)
				if err != nil || resp.StatusCode != http.StatusCreated {
					b.Fatalf("%v %v", resp, err)
				}
				resp.Body.Close()
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if c.name == "bare" {
				bare = ns
			} else if bare > 0 {
				b.ReportMetric(ns/bare, "guarded/bare")
			}
		})
	}
}
