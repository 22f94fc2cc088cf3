package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Stores opened at once (six labmate exec started together) are all live to one another: a
// Store that removes the lock files of dead writers as it opens took one whose Store had
// created it and not locked it yet for a dead writer's, and that Store's streams then looked
// abandoned — ended as process_died by the server while it ran.
func TestOpenAtOnceAllLive(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	first := open(t, path)
	defer first.Close()
	for round := range 30 {
		const n = 8
		stores := make([]*sqlite.Store, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				s, err := sqlite.OpenAs(path, "exec")
				if err != nil {
					t.Error(err)
					return
				}
				stores[i] = s
				m, _ := protocol.NewMessage(protocol.TypeRequest, fmt.Sprint("s", round), fmt.Sprint("op", i), protocol.Request{Kind: "exec"})
				if _, err := s.Append(ctx, m); err != nil {
					t.Error(err)
				}
				if err := s.Sync(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for i, s := range stores {
			if s == nil {
				continue
			}
			if w, ok := first.Writer(ctx, fmt.Sprint("s", round), fmt.Sprint("op", i)); !ok || !w.Live {
				t.Errorf("round %d: the Store that writes op%d is open, but Writer says %+v (found %v)", round, i, w, ok)
			}
		}
		for _, s := range stores {
			if s != nil {
				s.Close()
			}
		}
		if t.Failed() {
			return
		}
	}
}
