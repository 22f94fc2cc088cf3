package runner

import (
	"context"
	"log"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
)

// A session stuck with its lock held (what no code path does any more, but what a regression
// would bring back) holds up neither the server's lock (reaping, evicting, opening other
// sessions) nor Stuck (/healthz), which names the session stuck.
func TestStuckSessionAlone(t *testing.T) {
	srv, err := New(context.Background(), Config{Store: protocol.NewMemStore(), Workspaces: t.TempDir(), Limits: Limits{Sessions: 2}, Log: log.New(t.Output(), "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ss, err := srv.Open("stuck")
	if err != nil {
		t.Fatal(err)
	}
	srv.Release(ss)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.busy.Store(&busyNote{what: "serving the bench", since: time.Now().Add(-time.Minute)})

	done := make(chan error, 1)
	go func() {
		srv.reap(time.Nanosecond)
		other, err := srv.Open("other")
		if err != nil {
			done <- err
			return
		}
		defer srv.Release(other)
		_, err = srv.Open("third") // beyond MaxSessions: evicting skips the stuck one, at once
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
	stuck := make(chan []StuckSession, 1)
	go func() { stuck <- srv.Stuck() }()
	select {
	case h := <-stuck:
		if len(h) != 1 || h[0].ID != "stuck" || h[0].Doing != "serving the bench" {
			t.Errorf("stuck sessions: %+v, want session stuck, serving the bench", h)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("listing the stuck sessions waits for a stuck session's lock")
	}
}
