package locallog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

func TestOwner(t *testing.T) {
	data := t.TempDir()
	if _, found, live := Owner(data, "r1"); found || live {
		t.Errorf("a run nobody started: found %v, live %v", found, live)
	}
	release, err := Own(data, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if pid, found, live := Owner(data, "r1"); !found || !live || pid != os.Getpid() {
		t.Errorf("an owned run: pid %d, found %v, live %v; want %d, true, true", pid, found, live, os.Getpid())
	}
	if _, err := Own(data, "r1"); err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("owning an owned run: %v, want a refusal naming the owner", err)
	}
	release()
	if _, found, _ := Owner(data, "r1"); found {
		t.Error("a released run still has an owner")
	}
	// A killed owner leaves its file unlocked.
	if err := os.WriteFile(ownerFile(data, "r2"), []byte("4242\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pid, found, live := Owner(data, "r2"); !found || live || pid != 4242 {
		t.Errorf("a dead owner: pid %d, found %v, live %v; want 4242, true, false", pid, found, live)
	}
	for _, id := range []string{"", "../x", "a/b", ".hidden"} {
		if _, err := Own(data, id); err == nil {
			t.Errorf("Own(%q) worked", id)
		}
	}
}

// With no server, Log appends to the file directly; while another process holds the file and
// no server answers, it says so after Wait; a stream the log refuses is an error wrapping
// protocol.ErrIllegalTransition.
func TestLogDirect(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()
	l := New(data)
	ev, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "run_start"})
	if m, err := l.Append(ctx, ev); err != nil || m.Seq != 1 {
		t.Fatalf("Append: %v, %v", m, err)
	}
	if _, err := Resumed(ctx, l, "r", "test"); err != nil { // a run left open: ended, then resumed
		t.Fatal(err)
	}
	st, err := OpenStore(data, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var types []protocol.Type
	for m, err := range st.After(ctx, "r", 0) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, m.Type)
	}
	if want := []protocol.Type{protocol.TypeRunEvent, protocol.TypeRunEnd, protocol.TypeRunResume}; !slices.Equal(types, want) {
		t.Errorf("the stream: %v, want %v", types, want)
	}
	l.Wait = 200 * time.Millisecond
	if _, err := l.Append(ctx, ev); err == nil || !strings.Contains(err.Error(), "no server answers on "+filepath.Join(data, "serve.sock")) {
		t.Errorf("Append while the file is held and no server answers: %v", err)
	}
	l.Wait = time.Hour // after a failure, appends try once: the run is not held up
	start := time.Now()
	if _, err := l.Append(ctx, ev); err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("Append after a failure: %v after %v, want a quick error", err, time.Since(start))
	}
	st.Close()
	end, _ := protocol.NewMessage(protocol.TypeRunResume, "new", "new", &protocol.RunResume{By: "test"})
	if _, err := l.Append(ctx, end); !errors.Is(err, protocol.ErrIllegalTransition) {
		t.Errorf("a run_resume of an unknown run: %v, want ErrIllegalTransition", err)
	}
	if st, err := sqlite.Open(filepath.Join(data, File)); err != nil {
		t.Errorf("the file is still held after Append: %v", err)
	} else {
		st.Close()
	}
}

// A server that stops between receiving a message on its door and answering may or may not
// have logged it: Append finds out from the log and the message is logged exactly once.
func TestLostReply(t *testing.T) {
	for _, committed := range []bool{true, false} {
		t.Run(fmt.Sprintf("committed=%v", committed), func(t *testing.T) {
			data := t.TempDir()
			ctx := context.Background()
			l := New(data)
			first, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "run_start"})
			if _, err := l.Append(ctx, first); err != nil {
				t.Fatal(err)
			}
			st, err := OpenStore(data, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			ln, err := Listen(data)
			if err != nil {
				t.Fatal(err)
			}
			// The server dies as it answers: the connection closes with no reply, and the
			// file and the door are released.
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var m protocol.EnhancedMessage
				if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
					t.Error(err)
				}
				if committed {
					if _, err := st.Append(r.Context(), &m); err != nil {
						t.Error(err)
					}
				}
				st.Close()
				ln.Close()
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				conn.Close()
			})}
			go srv.Serve(ln)
			defer srv.Close()
			ev, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "step"})
			c, err := l.Append(ctx, ev)
			if err != nil || c.ID != ev.ID || c.Seq != 2 {
				t.Fatalf("Append to a server that died as it answered: %+v, %v", c, err)
			}
			ro, err := sqlite.OpenReadOnly(filepath.Join(data, File))
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			var ids []string
			for m, err := range ro.After(ctx, "r", 0) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, m.ID)
			}
			if want := []string{first.ID, ev.ID}; !slices.Equal(ids, want) {
				t.Errorf("the log holds %v, want %v: the message once", ids, want)
			}
		})
	}
}
