package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/coder/websocket"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/server"
)

// lines is an in-process kernel that prints n lines as fast as it can: it isolates the
// protocol (store, fan-out, WebSocket) from interpreter speed in the load test.
type lines struct{ n int }

func (l lines) Exec(ctx context.Context, c *kernel.Cell) iter.Seq2[*kernel.Step, error] {
	return func(yield func(*kernel.Step, error) bool) {
		for i := range l.n {
			o := &protocol.Observation{Kind: protocol.ObsStdout, Time: time.Now(), Line: fmt.Sprintf("line %d of the run", i)}
			if !yield(&kernel.Step{Observation: o}, nil) {
				return
			}
		}
		yield(&kernel.Step{Result: &protocol.Result{Status: protocol.StatusOK, WorkspaceOK: true}}, nil)
	}
}
func (lines) Interrupt() error              { return nil }
func (lines) Restart(context.Context) error { return nil }
func (lines) Info() kernel.Info             { return kernel.Info{Name: "lines"} }
func (lines) Close() error                  { return nil }

func benchServer(b *testing.B, n int, agents runner.Agents) (*httptest.Server, func()) {
	return benchServerAt(b, filepath.Join(b.TempDir(), "labmate.db"), n, agents)
}

// benchServerAt is benchServer over the log file at path.
func benchServerAt(b *testing.B, path string, n int, agents runner.Agents) (*httptest.Server, func()) {
	store, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Config{Config: runner.Config{
		Store:      store,
		Kernels:    kernelFuncs{start: func(context.Context, string, string) (kernel.Kernel, error) { return lines{n}, nil }},
		Workspaces: b.TempDir(),
		Limits:     runner.Limits{Kernels: 1024, Runs: 1024}, // each operation's session starts a kernel of its own
		Agents:     agents,
		Log:        log.New(b.Output(), "", 0),
	}})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	return hs, func() { hs.Close(); srv.Close(); store.Close() }
}

// eventRuns are agents whose runs wait for start to close, then emit n events, one per pace
// — each an operation's output line, the bulk of a real run's stream — and stop.
func eventRuns(n int, pace time.Duration, start <-chan struct{}) runner.Agents {
	return &agentFuncs{run: func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
		return func(yield func(*agent.Event, error) bool) {
			select {
			case <-start:
			case <-ctx.Done():
				return
			}
			for i := range n {
				m, err := protocol.NewMessage(protocol.TypeProgress, task.ID, "op", &protocol.Progress{
					Observation: &protocol.Observation{Kind: protocol.ObsStdout, Time: time.Now(), Line: fmt.Sprintf("line %d of the run", i)}})
				ev := &agent.Event{RunID: task.ID, Seq: int64(i + 1), Type: agent.EventOperation, Time: time.Now(), Message: m}
				if i == n-1 {
					ev = &agent.Event{RunID: task.ID, Seq: int64(i + 1), Type: agent.EventStop, Time: time.Now(), Stop: &agent.Stop{Reason: agent.StopAnswered}}
				}
				if !yield(ev, err) {
					return
				}
				time.Sleep(pace)
			}
		}
	}}
}

// BenchmarkProtocol: 200 concurrent operations, each streaming 1,000 lines, and 20 agent runs
// in the same store, each streaming 1,000 events, every stream to 2 WebSocket subscribers,
// through the SQLite store. Reports delivered messages per second, the p99 latency from a
// message's creation to its delivery, lost messages (must be 0), and the CPU time the process
// (server and subscribers) spent per delivered message, which the machine's load does not
// change as much.
func BenchmarkProtocol(b *testing.B) {
	const ops, perOp, runs, perRun, subs = 200, 1000, 20, 1000, 2
	// A run's events come at the pace of the agent and its kernel, not of a loop: a thousand a
	// second is a cell printing as fast as a terminal can show.
	const runPace = time.Millisecond
	for b.Loop() {
		b.StopTimer()
		start := make(chan struct{})
		hs, stop := benchServer(b, perOp, eventRuns(perRun, runPace, start))
		ws := strings.Replace(hs.URL, "http", "ws", 1)
		sessions := make([]string, 0, ops+runs)
		for i := range ops {
			sessions = append(sessions, fmt.Sprintf("s%d", i))
		}
		for range runs { // each run's stream is its session, named by its id
			resp, err := http.Post(hs.URL+"/v1/runs", "application/json", strings.NewReader(`{"goal": "stream"}`))
			if err != nil {
				b.Fatal(err)
			}
			var started struct{ ID string }
			json.NewDecoder(resp.Body).Decode(&started)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Fatalf("run: %s", resp.Status)
			}
			sessions = append(sessions, started.ID)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var lat []time.Duration
		delivered, lost := 0, 0
		ready := make(chan struct{}, len(sessions)*subs)
		for _, session := range sessions {
			for range subs {
				wg.Go(func() {
					c, _, err := websocket.Dial(context.Background(), fmt.Sprintf("%s/v1/sessions/%s/ws", ws, session), nil)
					if err != nil {
						b.Error(err)
						ready <- struct{}{}
						return
					}
					defer c.CloseNow()
					c.SetReadLimit(1 << 20)
					ready <- struct{}{}
					var mine []time.Duration
					var last int64
					for {
						_, data, err := c.Read(context.Background())
						if err != nil {
							b.Error(err)
							return
						}
						now := time.Now()
						m := peek(data)
						if m.Seq != last+1 {
							mu.Lock()
							lost += int(m.Seq - last - 1)
							mu.Unlock()
						}
						last = m.Seq
						mine = append(mine, now.Sub(time.Unix(0, int64(m.Timestamp*1e9))))
						if m.Terminal {
							break
						}
					}
					mu.Lock()
					lat = append(lat, mine...)
					delivered += len(mine)
					mu.Unlock()
				})
			}
		}
		for range len(sessions) * subs {
			<-ready
		}
		b.StartTimer()
		begin, cpu := time.Now(), cpuTime(b)
		close(start)
		for i := range ops {
			body, _ := json.Marshal(&protocol.Request{Kind: "exec", Kernel: "lines", Code: "-"})
			resp, err := http.Post(fmt.Sprintf("%s/v1/sessions/s%d/operations", hs.URL, i), "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Fatalf("operation %d: %s: its subscribers would wait forever", i, resp.Status)
			}
		}
		wg.Wait()
		elapsed, cpu := time.Since(begin), cpuTime(b)-cpu
		b.StopTimer()
		stop()
		slices.Sort(lat)
		b.ReportMetric(float64(delivered)/elapsed.Seconds(), "msgs/s")
		b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
		b.ReportMetric(float64(lost), "lost")
		b.ReportMetric(float64(cpu)/1e3/float64(delivered), "cpu-us/msg")
		b.StartTimer()
	}
}

// appenderEnv names the log file a test binary run as BenchmarkAppendLatency's second process
// appends to; appenderEnv_SESSION the session.
const appenderEnv = "LABMATE_BENCH_APPENDER"

// The second process appends an operation of appendLines lines, one every appendPace: a cell
// printing fast, as labmate exec logs it.
const (
	appendLines = 2000
	appendPace  = time.Millisecond
)

// appender is the second process: it appends one operation to the log file at path, as a
// labmate exec beside labmate serve does, and exits.
func appender(path string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "appender:", err)
		os.Exit(2)
	}
	st, err := sqlite.OpenAs(path, "exec")
	if err != nil {
		fail(err)
	}
	session := os.Getenv(appenderEnv + "_SESSION")
	add := func(t protocol.Type, payload any) {
		m, err := protocol.NewMessage(t, session, "op", payload) // its timestamp: now
		if err == nil {
			_, err = st.Append(ctx, m)
		}
		if err != nil {
			fail(err)
		}
	}
	add(protocol.TypeRequest, &protocol.Request{Kind: "exec", Kernel: "lines", Code: "-"})
	add(protocol.TypeAck, &protocol.StatePayload{State: protocol.Acknowledged})
	add(protocol.TypeStart, &protocol.StatePayload{State: protocol.Started})
	for i := range appendLines {
		add(protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Time: time.Now(), Line: fmt.Sprintf("line %d of the run", i)}})
		time.Sleep(appendPace)
	}
	add(protocol.TypeComplete, &protocol.Complete{Result: &protocol.Result{Status: protocol.StatusOK, WorkspaceOK: true}})
	if err := st.Close(); err != nil {
		fail(err)
	}
	os.Exit(0)
}

// BenchmarkAppendLatency: another process (this test binary run again, as a labmate exec)
// appends an operation of appendLines lines to the server's log file while the server follows
// the file (the runner's tail); 2 WebSocket subscribers of its session get every message.
// Reports the latency from a message's creation in the other process (just before its Append)
// to its delivery, at the median and the 99th percentile, and lost messages (must be 0).
func BenchmarkAppendLatency(b *testing.B) {
	const subs = 2
	path := filepath.Join(b.TempDir(), "labmate.db")
	hs, stop := benchServerAt(b, path, 1, nil)
	defer stop()
	ws := strings.Replace(hs.URL, "http", "ws", 1)
	var lat []time.Duration
	lost, iter := 0, 0
	for b.Loop() {
		b.StopTimer()
		iter++
		session := fmt.Sprintf("lat%d", iter)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ready := make(chan struct{}, subs)
		for range subs {
			wg.Go(func() {
				c, _, err := websocket.Dial(context.Background(), fmt.Sprintf("%s/v1/sessions/%s/ws", ws, session), nil)
				ready <- struct{}{}
				if err != nil {
					b.Error(err)
					return
				}
				defer c.CloseNow()
				var mine []time.Duration
				var last int64
				for {
					_, data, err := c.Read(context.Background())
					if err != nil {
						b.Error(err)
						return
					}
					now := time.Now()
					m := peek(data)
					mu.Lock()
					lost += int(m.Seq - last - 1)
					mu.Unlock()
					last = m.Seq
					mine = append(mine, now.Sub(time.Unix(0, int64(m.Timestamp*1e9))))
					if m.Terminal {
						break
					}
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
		}
		for range subs {
			<-ready
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), appenderEnv+"="+path, appenderEnv+"_SESSION="+session)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		b.StartTimer()
		if err := cmd.Run(); err != nil {
			b.Fatalf("the appending process: %v", err)
		}
		wg.Wait()
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) == 0 {
		b.Fatal("no message was delivered")
	}
	b.ReportMetric(float64(len(lat))/float64(iter), "msgs")
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
	b.ReportMetric(float64(lost), "lost")
}

// cpuTime is the CPU time the process (server and subscribers) has used so far, all threads,
// in nanoseconds: unlike msgs/s it does not depend on what else the machine runs.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// peeked is what the load generator needs of a message.
type peeked struct {
	Seq       int64
	Timestamp float64
	Terminal  bool
}

// peek reads seq, timestamp and whether the message is terminal without decoding the whole
// message: the load generator shares the machine's two cores with the server, so it must
// stay light. The fields come in EnhancedMessage's order, after the payload.
func peek(data []byte) peeked {
	var p peeked
	num := func(key string) string {
		i := bytes.LastIndex(data, []byte(key))
		if i < 0 {
			return ""
		}
		rest := data[i+len(key):]
		j := bytes.IndexAny(rest, ",}")
		if j < 0 {
			return ""
		}
		return string(rest[:j])
	}
	p.Seq, _ = strconv.ParseInt(num(`"seq":`), 10, 64)
	p.Timestamp, _ = strconv.ParseFloat(num(`"timestamp":`), 64)
	if i := bytes.Index(data, []byte(`"type":"`)); i >= 0 {
		t := data[i+len(`"type":"`):]
		p.Terminal = bytes.HasPrefix(t, []byte(protocol.TypeComplete)) || bytes.HasPrefix(t, []byte(protocol.TypeFailed)) ||
			bytes.HasPrefix(t, []byte(protocol.TypeRunEnd))
	}
	return p
}

// BenchmarkIdleSession reports the server memory one idle session costs (one finished
// operation in its log, no subscriber).
func BenchmarkIdleSession(b *testing.B) {
	const n = 500
	for b.Loop() {
		b.StopTimer()
		hs, stop := benchServer(b, 10, nil)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		for i := range n {
			body, _ := json.Marshal(&protocol.Request{Kind: "exec", Kernel: "lines", Code: "-"})
			resp, err := http.Post(fmt.Sprintf("%s/v1/sessions/idle%d/operations", hs.URL, i), "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		time.Sleep(500 * time.Millisecond) // let the operations finish
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/session")
		stop()
		b.StartTimer()
	}
}
