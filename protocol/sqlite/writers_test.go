package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/protocol/storetest"
)

// writerEnv names the store file of a test binary run as a writer child; writerEnv_NAME its name.
const writerEnv = "LABMATE_SQLITE_WRITER_CHILD"

const (
	writerOps   = 6   // operations each child runs at once, half of them in the session both share
	writerLines = 300 // progress messages of each operation of the child that finishes
)

// writerChild appends to the store at path beside another process: writerOps operations, half in
// the session "shared" (which the other child writes too), half in its own session, each
// streaming progress. It prints "acked SESSION SEQ ID" for each message once it is durable:
// Append has returned for a terminal message, or Sync after it. The child named "finisher" completes its operations after writerLines lines each and
// exits; the other streams until it is killed.
func writerChild(path, name string) {
	ctx := context.Background()
	s, err := sqlite.OpenAs(path, "test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var unsynced []*protocol.EnhancedMessage // appended, not yet known durable
	appendMsg := func(typ protocol.Type, session, op string, payload any) {
		m, err := protocol.NewMessage(typ, session, op, payload)
		if err == nil {
			m, err = s.Append(ctx, m)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, name, err)
			os.Exit(2)
		}
		mu.Lock()
		defer mu.Unlock()
		unsynced = append(unsynced, m)
		// A terminal message is durable when Append returns, and so is everything before a
		// Sync: only then is a message acknowledged.
		if !typ.Terminal() && len(unsynced) < 16 {
			return
		}
		if !typ.Terminal() {
			if err := s.Sync(ctx); err != nil {
				fmt.Fprintln(os.Stderr, name, err)
				os.Exit(2)
			}
		}
		for _, m := range unsynced {
			fmt.Fprintf(out, "acked %s %d %s\n", m.SessionID, m.Seq, m.ID)
		}
		out.Flush()
		unsynced = unsynced[:0]
	}
	var wg sync.WaitGroup
	for i := range writerOps {
		session := "own-" + name
		if i%2 == 0 {
			session = "shared"
		}
		op := fmt.Sprintf("%s-op%d", name, i)
		wg.Go(func() {
			appendMsg(protocol.TypeRequest, session, op, protocol.Request{Kind: "exec", Code: op})
			appendMsg(protocol.TypeAck, session, op, protocol.StatePayload{State: protocol.Acknowledged})
			appendMsg(protocol.TypeStart, session, op, protocol.StatePayload{State: protocol.Started})
			for j := 0; name != "finisher" || j < writerLines; j++ {
				appendMsg(protocol.TypeProgress, session, op, crashLine(i, j))
			}
			appendMsg(protocol.TypeComplete, session, op, protocol.Complete{Result: &protocol.Result{Status: protocol.StatusOK}})
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// TestManyWriters runs two processes appending to one file at once, to a session they share and
// to one each, while this process follows the file with Tail; one of them is killed (SIGKILL)
// mid-stream. Every message a child was told is durable is in the file with the seq it was
// told; every session's seqs are gap-free and every stream replays through the state machine;
// Tail saw every message, each session's in seq order; Recover closes the killed child's
// streams, and leaves alone those of a writer that is still open.
func TestManyWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	s := open(t, path)
	defer s.Close()

	tctx, stopTail := context.WithCancel(ctx)
	var tailed []*protocol.EnhancedMessage
	tailDone := make(chan error, 1)
	go func() {
		var err error
		for m, e := range s.Tail(tctx) {
			if e != nil {
				err = e
				break
			}
			tailed = append(tailed, m)
		}
		tailDone <- err
	}()
	time.Sleep(2 * sqlite.TailPoll) // the tail has begun

	type acked struct {
		session string
		seq     int64
	}
	var mu sync.Mutex
	ack := map[string]acked{} // message id → where its child was told it is
	start := func(name string) (*exec.Cmd, chan struct{}, chan int) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+path, writerEnv+"_NAME="+name)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done, count := make(chan struct{}), make(chan int, 1<<16)
		go func() {
			defer close(done)
			lines := bufio.NewScanner(stdout)
			n := 0
			for lines.Scan() {
				f := strings.Fields(lines.Text())
				if len(f) != 4 || f[0] != "acked" {
					t.Errorf("%s said %q", name, lines.Text())
					continue
				}
				seq, _ := strconv.ParseInt(f[2], 10, 64)
				mu.Lock()
				ack[f[3]] = acked{f[1], seq}
				mu.Unlock()
				n++
				select {
				case count <- n:
				default:
				}
			}
		}()
		return cmd, done, count
	}
	streamer, streamerOut, streamed := start("streamer")
	finisher, finisherOut, _ := start("finisher")

	// Kill the streamer once it is well under way, while the finisher still writes.
	for n := range streamed {
		if n >= 1000 {
			break
		}
	}
	if err := streamer.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	streamer.Wait()
	<-streamerOut
	if err := finisher.Wait(); err != nil {
		t.Fatalf("the finisher: %v", err)
	}
	<-finisherOut

	// Every acknowledged message is in the file where its child was told.
	mu.Lock()
	defer mu.Unlock()
	logged := map[string]acked{}
	for _, session := range []string{"shared", "own-streamer", "own-finisher"} {
		for m, err := range s.After(ctx, session, 0) {
			if err != nil {
				t.Fatal(err)
			}
			logged[m.ID] = acked{m.SessionID, m.Seq}
		}
	}
	for id, a := range ack {
		if got, ok := logged[id]; !ok || got != a {
			t.Errorf("message %s was acknowledged as %s/%d; the log has %+v (found %v)", id, a.session, a.seq, got, ok)
		}
	}
	n, err := storetest.Consistent(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages acknowledged to the children, %d in the log", len(ack), n)
	if want := writerOps * (writerLines + 4); len(ack) < want+1000 {
		t.Errorf("%d messages acknowledged, want at least %d", len(ack), want+1000)
	}

	// The tail saw what both children committed, each session in seq order.
	time.Sleep(3 * sqlite.TailPoll)
	stopTail()
	if err := <-tailDone; err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	for _, m := range tailed {
		if m.Seq != last[m.SessionID]+1 {
			t.Fatalf("the tail gave %s/%d after %d", m.SessionID, m.Seq, last[m.SessionID])
		}
		last[m.SessionID] = m.Seq
	}
	if len(tailed) != n {
		t.Errorf("the tail saw %d messages, the log has %d", len(tailed), n)
	}

	// A writer still open keeps its streams from Recover; the killed one's are closed.
	other := open(t, path)
	defer other.Close()
	for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck} {
		m, _ := protocol.NewMessage(typ, "shared", "other-op", protocol.Request{Kind: "exec"})
		if _, err := other.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Sync(ctx); err != nil { // what other processes see is what is committed
		t.Fatal(err)
	}
	if w, ok := s.Writer(ctx, "shared", "other-op"); !ok || !w.Live || w.Self || w.Pid != os.Getpid() || w.Role != "labmate" {
		t.Errorf("Writer of a stream another open Store writes = %+v, %v; want this pid, live, not self", w, ok)
	}
	if w, ok := other.Writer(ctx, "shared", "other-op"); !ok || !w.Self {
		t.Errorf("Writer of a stream the Store asked wrote = %+v, %v; want self", w, ok)
	}
	if w, ok := s.Writer(ctx, "shared", "streamer-op0"); !ok || w.Live || w.Pid != streamer.Process.Pid || w.Role != "test" {
		t.Errorf("Writer of the killed child's stream = %+v, %v; want pid %d, role test, not live", w, ok, streamer.Process.Pid)
	}
	closed, err := s.Recover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i := range writerOps {
		want[fmt.Sprintf("streamer-op%d", i)] = true
	}
	for _, id := range closed {
		if !want[id] {
			t.Errorf("Recover closed %s", id)
		}
		delete(want, id)
	}
	if len(want) > 0 {
		t.Errorf("Recover left open %v", want)
	}
	if _, err := storetest.Consistent(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// A file of schema version 1 (one writer, no writer column) is brought to version 2 on Open,
// its messages kept: its streams have no writer, and Recover closes them.
func TestMigrateVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE operations (session_id TEXT NOT NULL, operation_id TEXT NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL,
			created REAL NOT NULL, updated REAL NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
			PRIMARY KEY (session_id, operation_id))`,
		`CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL,
			operation_id TEXT NOT NULL, timestamp REAL NOT NULL, payload BLOB NOT NULL, PRIMARY KEY (session_id, seq),
			FOREIGN KEY (session_id, operation_id) REFERENCES operations)`,
		`INSERT INTO operations VALUES ('s', 'op', 'exec', 'ACKNOWLEDGED', 1, 2, 1, 2)`,
		`INSERT INTO messages VALUES ('s', 1, 'm1', 'operation_request', 'op', 1, '{"kind":"exec"}')`,
		`INSERT INTO messages VALUES ('s', 2, 'm2', 'operation_ack', 'op', 2, '{"state":"ACKNOWLEDGED"}')`,
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := open(t, path)
	defer s.Close()
	if _, ok := s.Writer(ctx, "s", "op"); ok {
		t.Error("a stream of a version 1 file has a writer")
	}
	if ids, err := s.Recover(ctx, nil); err != nil || len(ids) != 1 {
		t.Fatalf("Recover = %v, %v; want op closed", ids, err)
	}
	if n, err := storetest.Consistent(ctx, s); err != nil || n != 3 {
		t.Errorf("Consistent = %d, %v; want 3 messages", n, err)
	}
}
