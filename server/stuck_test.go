package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
)

// A session stuck with its lock held (what no code path does any more, but what a regression
// would bring back) holds up neither the server's lock (reaping, evicting, opening other
// sessions) nor /healthz, which names the session stuck.
func TestStuckSessionAlone(t *testing.T) {
	srv, err := New(context.Background(), Config{Store: protocol.NewMemStore(), Workspaces: t.TempDir(), MaxSessions: 2, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ss, err := srv.open("stuck")
	if err != nil {
		t.Fatal(err)
	}
	srv.release(ss)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.busy.Store(&busyNote{what: "serving the bench", since: time.Now().Add(-time.Minute)})

	done := make(chan error, 1)
	go func() {
		srv.reap(time.Nanosecond)
		other, err := srv.open("other")
		if err != nil {
			done <- err
			return
		}
		defer srv.release(other)
		_, err = srv.open("third") // beyond MaxSessions: evicting skips the stuck one, at once
		if err == nil {
			t.Error("a third session beyond MaxSessions 2, one in use and one stuck: opened")
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server's lock waits for a stuck session's")
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(hs.URL + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	defer resp.Body.Close()
	var h struct {
		OK    bool           `json:"ok"`
		Stuck []stuckSession `json:"stuck_sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if !h.OK || len(h.Stuck) != 1 || h.Stuck[0].ID != "stuck" || h.Stuck[0].Doing != "serving the bench" {
		t.Errorf("/healthz: %+v, want ok with session stuck listed, serving the bench", h)
	}
}
