package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// crashEnv names the role and store file (ROLE:PATH) of a test binary run as the crash child.
const crashEnv = "LABMATE_SQLITE_CRASH_CHILD"

const (
	crashOps       = 20 // operations the child starts
	crashCompleted = 5  // of which it completes the first ones
	crashSessions  = 4
	crashLines     = 50 // progress messages of each completed operation
)

func crashSession(i int) string { return fmt.Sprint("s", i%crashSessions) }
func crashOp(i int) string      { return fmt.Sprint("op", i) }

func crashLine(i, j int) *protocol.Progress {
	return &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: fmt.Sprintf("op%d line %d", i, j)}}
}

// crashChild is the process the crash test kills: it starts crashOps operations, completes
// crashCompleted of them, says "completed", then streams progress to the others until it is
// killed, saying "streaming" once it is well under way.
func crashChild(role, path string) {
	ctx := context.Background()
	s, err := sqlite.OpenAs(path, role)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	appendMsg := func(typ protocol.Type, i int, payload any) {
		m, err := protocol.NewMessage(typ, crashSession(i), crashOp(i), payload)
		if err == nil {
			_, err = s.Append(ctx, m)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	for i := range crashOps {
		appendMsg(protocol.TypeRequest, i, protocol.Request{Kind: "exec", Code: fmt.Sprint("run(", i, ")")})
		appendMsg(protocol.TypeAck, i, protocol.StatePayload{State: protocol.Acknowledged})
		appendMsg(protocol.TypeStart, i, protocol.StatePayload{State: protocol.Started})
	}
	for i := range crashCompleted {
		for j := range crashLines {
			appendMsg(protocol.TypeProgress, i, crashLine(i, j))
		}
		appendMsg(protocol.TypeComplete, i, protocol.Complete{Result: &protocol.Result{Status: protocol.StatusOK}})
	}
	fmt.Println("completed")
	deadline := time.Now().Add(time.Minute) // the parent kills it long before
	for j := 0; time.Now().Before(deadline); j++ {
		for i := crashCompleted; i < crashOps; i++ {
			appendMsg(protocol.TypeProgress, i, crashLine(i, j))
		}
		if j == 200 {
			fmt.Println("streaming")
		}
	}
	os.Exit(3)
}

// TestCrash kills a process with SIGKILL while it streams 15 operations, then reopens its store:
// the file is sound, Recover fails the 15 with server_restart (process_died when the writer was not a server: labmate exec), the 5 completed before the kill
// are intact, and every session's seq is gap-free.
func TestCrash(t *testing.T) {
	t.Run("serve", func(t *testing.T) { testCrash(t, "serve", protocol.ReasonServerRestart, "the server stopped") })
	t.Run("exec", func(t *testing.T) { testCrash(t, "exec", protocol.ReasonProcessDied, "labmate exec (pid ") })
}

func testCrash(t *testing.T, role string, reason protocol.Reason, why string) {
	path := filepath.Join(t.TempDir(), "store.db")
	cmd := startCrashChild(t, role, path)
	time.Sleep(100 * time.Millisecond) // commits go on while the child streams
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.Success() {
		t.Fatalf("the child exited with %v, want killed", err)
	}

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v; want ok", check, err)
	}
	db.Close()

	ctx := context.Background()
	s := open(t, path)
	ids, err := s.Recover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := crashCompleted; i < crashOps; i++ {
		want = append(want, crashOp(i))
	}
	slices.Sort(ids)
	slices.Sort(want)
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("Recover() closed (-want +got):\n%s", diff)
	}

	for i := range crashOps {
		var types []protocol.Type
		var lines []string
		var last *protocol.EnhancedMessage
		for m, err := range s.Operation(ctx, crashSession(i), crashOp(i)) {
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, m.Type)
			if m.Type == protocol.TypeProgress {
				var p protocol.Progress
				if err := m.Decode(&p); err != nil {
					t.Fatal(err)
				}
				lines = append(lines, p.Observation.Line)
			}
			last = m
		}
		n := len(lines)
		if i < crashCompleted && n != crashLines {
			t.Errorf("completed %s has %d progress messages, want %d", crashOp(i), n, crashLines)
		}
		var wantLines []string
		for j := range n {
			wantLines = append(wantLines, crashLine(i, j).Observation.Line)
		}
		if diff := cmp.Diff(wantLines, lines); diff != "" {
			t.Errorf("%s: progress lines (-want +got):\n%s", crashOp(i), diff)
		}
		end := protocol.TypeComplete
		if i >= crashCompleted {
			end = protocol.TypeFailed
		}
		wantTypes := slices.Concat(
			[]protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart},
			slices.Repeat([]protocol.Type{protocol.TypeProgress}, n),
			[]protocol.Type{end})
		if diff := cmp.Diff(wantTypes, types); diff != "" {
			t.Errorf("%s: message types (-want +got):\n%s", crashOp(i), diff)
			continue
		}
		if i >= crashCompleted {
			var f protocol.Failed
			if err := last.Decode(&f); err != nil || f.Reason != reason || !strings.Contains(f.Error, why) {
				t.Errorf("%s ended with %+v, %v; want reason %s, %q", crashOp(i), f, err, reason, why)
			}
		}
	}

	for i := range crashSessions {
		session := crashSession(i)
		var next int64 = 1
		for m, err := range s.After(ctx, session, 0) {
			if err != nil {
				t.Fatal(err)
			}
			if m.Seq != next {
				t.Fatalf("session %s: seq %d where %d was due", session, m.Seq, next)
			}
			next++
		}
		t.Logf("session %s: %d messages survived", session, next-1)
		ops, err := s.Operations(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if !op.State.Terminal() {
				t.Errorf("%s/%s is %s after Recover", session, op.ID, op.State)
			}
		}
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer s.Close()
	if ids, err := s.Recover(ctx, nil); err != nil || len(ids) != 0 {
		t.Errorf("Recover() after a restart following recovery = %v, %v; want nothing", ids, err)
	}
}

// TestStopWhileWriting: a labmate process that streams into the log is stopped with Ctrl-Z
// (SIGTSTP). Stopped inside its write transaction it would hold the file's write lock for as
// long as it stays stopped, and every other writer (the server) would wait out its busy timeout
// and fail; it commits first, so another process appends at once, and once continued it
// appends again.
func TestStopWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	cmd := startCrashChild(t, "exec", path)
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	if err := cmd.Process.Signal(syscall.SIGTSTP); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("the child did not stop: %v %q", err, b)
		}
		if _, after, _ := strings.Cut(string(b), ") "); strings.HasPrefix(after, "T") {
			break
		}
	}
	ctx := context.Background()
	start := time.Now()
	s := open(t, path)
	defer s.Close()
	m, _ := protocol.NewMessage(protocol.TypeRunEvent, "server", "server", map[string]any{"type": "progress"})
	if _, err := s.Append(ctx, m); err != nil {
		t.Fatalf("appending beside a stopped writer, after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("opening and appending beside a stopped writer took %v", d)
	}
	count := func() int {
		n := 0
		for _, err := range s.Operation(ctx, crashSession(crashOps-1), crashOp(crashOps-1)) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	stopped := count()
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); count() == stopped; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child appended nothing once continued (%d messages)", stopped)
		}
	}
}

// startCrashChild starts crashChild as role on path and waits until it is streaming.
func startCrashChild(t *testing.T, role, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+role+":"+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for _, want := range []string{"completed", "streaming"} {
		if !lines.Scan() || lines.Text() != want {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child said %q, want %q", lines.Text(), want)
		}
	}
	return cmd
}
