package locallog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/locallog"
)

// BenchmarkAppend is the cost of one event of a labmate run in the log: appended to the file
// directly (opened for that message), and through a server's local door.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	events := func(b *testing.B, l *locallog.Log, id string) {
		for i := range b.N {
			m, _ := protocol.NewMessage(protocol.TypeRunEvent, id, id, map[string]any{"type": "progress", "seq": i + 1})
			if _, err := l.Append(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		data := b.TempDir()
		release, err := locallog.Own(data, "r")
		if err != nil {
			b.Fatal(err)
		}
		defer release()
		events(b, locallog.New(data), "r")
	})
	b.Run("door", func(b *testing.B) {
		data, err := os.MkdirTemp("", "door") // short: a Unix socket's path has at most 107 bytes
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(data)
		st, err := locallog.OpenStore(data, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		srv, err := server.New(ctx, server.Config{Store: st, Workspaces: filepath.Join(data, "ws"), Logf: func(string, ...any) {},
			Owner: func(id string) (int, bool, bool) { return locallog.Owner(data, id) }})
		if err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		ln, err := locallog.Listen(data)
		if err != nil {
			b.Fatal(err)
		}
		go srv.ServeLocal(ctx, ln)
		defer ln.Close()
		release, err := locallog.Own(data, "r")
		if err != nil {
			b.Fatal(err)
		}
		defer release()
		events(b, locallog.New(data), "r")
	})
}
