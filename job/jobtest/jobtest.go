// Package jobtest is the suite every job.Scheduler passes: job/local on this machine, job/slurm
// against a real Slurm. Run it from a backend's test:
//
//	func TestScheduler(t *testing.T) {
//		jobtest.Run(t, func(t *testing.T) job.Scheduler { return open(t) }, &jobtest.Options{Cores: 2})
//	}
//
// The jobs it submits are bash scripts and argvs of coreutils, bash and python3, which must be
// on the PATH the scheduler gives its jobs.
package jobtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
)

// Options says what differs between schedulers. Nil means defaults.
type Options struct {
	// Cores is how many cores a job must ask for to take the whole machine (or partition), so
	// that the next job queues behind it. 0 skips the cases that need a queued job.
	Cores int
	// Start is how long a free scheduler may take to start a job (default 30 s).
	Start time.Duration
	// Workspace returns a fresh workspace the scheduler's jobs can reach (default t.TempDir()).
	Workspace func(t *testing.T) string
	// NoMemoryLimit skips the memory-limit case (a scheduler or cluster that cannot enforce one).
	NoMemoryLimit bool
	// WallTime is the wall time the timeout case asks for (default 2 s; Slurm counts minutes).
	WallTime time.Duration
	// StreamOrder says that lines of different streams written a second apart keep their order
	// (the scheduler reads its jobs' output while they run).
	StreamOrder bool
}

func (o *Options) start() time.Duration {
	if o.Start > 0 {
		return o.Start
	}
	return 30 * time.Second
}

// Run runs the suite; newScheduler returns the scheduler under test (a fresh one or a shared
// one: the cases only look at the jobs they submit).
func Run(t *testing.T, newScheduler func(t *testing.T) job.Scheduler, opts *Options) {
	if opts == nil {
		opts = &Options{}
	}
	newHarness := func(t *testing.T) *harness {
		ws := t.TempDir
		if opts.Workspace != nil {
			ws = func() string { return opts.Workspace(t) }
		}
		return &harness{t: t, s: newScheduler(t), o: opts, ws: ws()}
	}
	// The cases that fill the machine run one after the other, before the others start.
	seq := newHarness
	t.Run("Transitions", func(t *testing.T) { seq(t).transitions() })
	t.Run("CancelQueued", func(t *testing.T) { seq(t).cancelQueued() })
	h := func(t *testing.T) *harness {
		t.Parallel()
		return newHarness(t)
	}
	t.Run("SubmitCommand", func(t *testing.T) { h(t).submitCommand() })
	t.Run("SubmitScript", func(t *testing.T) { h(t).submitScript() })
	t.Run("ExitCode", func(t *testing.T) { h(t).exitCode() })
	t.Run("Signal", func(t *testing.T) { h(t).signal() })
	t.Run("LogsStreams", func(t *testing.T) { h(t).logsStreams() })
	t.Run("LogsFollowFile", func(t *testing.T) { h(t).logsFollowFile() })
	t.Run("LogsResume", func(t *testing.T) { h(t).logsResume() })
	t.Run("LogsNoFollow", func(t *testing.T) { h(t).logsNoFollow() })
	t.Run("CancelRunning", func(t *testing.T) { h(t).cancelRunning() })
	t.Run("MemoryLimit", func(t *testing.T) { h(t).memoryLimit() })
	t.Run("WallTime", func(t *testing.T) { h(t).wallTime() })
	t.Run("BadSpec", func(t *testing.T) { h(t).badSpec() })
	t.Run("Unknown", func(t *testing.T) { h(t).unknown() })
}

type harness struct {
	t  *testing.T
	s  job.Scheduler
	o  *Options
	ws string
}

func (h *harness) ctx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	h.t.Cleanup(cancel)
	return ctx
}

// submit submits spec (in h's workspace unless it names one) and cancels it when the test ends.
func (h *harness) submit(spec *job.Spec) job.ID {
	h.t.Helper()
	if spec.Workspace == "" {
		spec.Workspace = h.ws
	}
	id, err := h.s.Submit(h.ctx(time.Minute), spec)
	if err != nil {
		h.t.Fatalf("Submit(%+v): %v", spec, err)
	}
	if id == "" {
		h.t.Fatal("Submit returned an empty id")
	}
	h.t.Cleanup(func() { _ = h.s.Cancel(context.Background(), id, "test over") })
	return id
}

// script submits a bash script.
func (h *harness) script(name, script string, res job.Resources) job.ID {
	h.t.Helper()
	return h.submit(&job.Spec{Name: name, Script: script, Resources: res})
}

// wait watches id until a terminal state and returns it with the states seen on the way.
func (h *harness) wait(id job.ID, d time.Duration) (*job.Status, []job.State) {
	h.t.Helper()
	var last *job.Status
	var seen []job.State
	for st, err := range h.s.Watch(h.ctx(d), id) {
		if err != nil {
			h.t.Fatalf("Watch(%s) after %v: %v (last status %+v)", id, seen, err, last)
		}
		if st.ID != id {
			h.t.Errorf("Watch(%s) yielded the status of %s", id, st.ID)
		}
		if len(seen) == 0 || seen[len(seen)-1] != st.State {
			seen = append(seen, st.State)
		}
		last = st
	}
	if last == nil || !last.State.Terminal() {
		h.t.Fatalf("Watch(%s) ended at %+v, not in a terminal state (seen %v)", id, last, seen)
	}
	return last, seen
}

// until polls Status until state; it fails the test on a terminal state or after d.
func (h *harness) until(id job.ID, state job.State, d time.Duration) *job.Status {
	h.t.Helper()
	deadline := time.Now().Add(d)
	for {
		st, err := h.s.Status(h.ctx(time.Minute), id)
		if err != nil {
			h.t.Fatalf("Status(%s): %v", id, err)
		}
		if st.State == state {
			return st
		}
		if st.State.Terminal() || time.Now().After(deadline) {
			h.t.Fatalf("job %s is %s (%s), waited %v for %s", id, st.State, st.Reason, d, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logs reads id's log after seq, with or without follow.
func (h *harness) logs(id job.ID, after int64, follow bool, d time.Duration) []*job.Line {
	h.t.Helper()
	var out []*job.Line
	for l, err := range h.s.Logs(h.ctx(d), id, after, follow) {
		if err != nil {
			h.t.Fatalf("Logs(%s, after %d, follow %v) after %d lines: %v", id, after, follow, len(out), err)
		}
		out = append(out, l)
	}
	return out
}

func texts(lines []*job.Line, stream string) []string {
	var out []string
	for _, l := range lines {
		if stream == "" || l.Stream == stream {
			out = append(out, l.Text)
		}
	}
	return out
}

// checkSeq checks that lines are numbered after+1, after+2, … with no gap.
func (h *harness) checkSeq(lines []*job.Line, after int64) {
	h.t.Helper()
	for i, l := range lines {
		if want := after + int64(i) + 1; l.Seq != want {
			h.t.Fatalf("line %d has seq %d, want %d (lines %s)", i, l.Seq, want, dump(lines))
		}
		if l.Time.IsZero() {
			h.t.Errorf("line %d (%q) has no time", l.Seq, l.Text)
		}
	}
}

func dump(lines []*job.Line) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "\n  %d %s %q", l.Seq, l.Stream, l.Text)
	}
	return b.String()
}

func (h *harness) completed(id job.ID) *job.Status {
	h.t.Helper()
	st, _ := h.wait(id, h.o.start()+time.Minute)
	if st.State != job.Completed {
		h.t.Fatalf("job %s ended %s (%s), want %s; log:%s", id, st.State, st.Reason, job.Completed, dump(h.logs(id, 0, false, time.Minute)))
	}
	if st.ExitCode == nil || *st.ExitCode != 0 {
		h.t.Errorf("completed job %s has exit code %v, want 0", id, st.ExitCode)
	}
	return st
}

func (h *harness) submitCommand() {
	id := h.submit(&job.Spec{Name: "echo", Command: []string{"sh", "-c", `echo "hello $1" >result.txt; echo done`, "sh", "command"}})
	st := h.completed(id)
	if st.Name != "echo" || st.Submitted.IsZero() || st.Started.IsZero() || st.Ended.IsZero() {
		h.t.Errorf("status %+v: want name echo and submitted, started and ended times", st)
	}
	if st.Spec == nil || !slices.Equal(st.Spec.Command, []string{"sh", "-c", `echo "hello $1" >result.txt; echo done`, "sh", "command"}) {
		h.t.Errorf("status spec %+v, want the submitted command", st.Spec)
	}
	b, err := os.ReadFile(filepath.Join(h.ws, "result.txt"))
	if err != nil || string(b) != "hello command\n" {
		h.t.Errorf("result.txt in the workspace: %q, %v; want \"hello command\\n\"", b, err)
	}
	if got := texts(h.logs(id, 0, false, time.Minute), "stdout"); !slices.Equal(got, []string{"done"}) {
		h.t.Errorf("stdout %q, want [done]", got)
	}
	list, err := h.s.List(h.ctx(time.Minute))
	if err != nil {
		h.t.Fatal("List:", err)
	}
	if !slices.ContainsFunc(list, func(s *job.Status) bool { return s.ID == id }) {
		h.t.Errorf("List does not hold %s", id)
	}
	for i := 1; i < len(list); i++ {
		if list[i].Submitted.Before(list[i-1].Submitted) {
			h.t.Errorf("List is not oldest first: %s (%v) before %s (%v)", list[i-1].ID, list[i-1].Submitted, list[i].ID, list[i].Submitted)
		}
	}
}

func (h *harness) submitScript() {
	id := h.submit(&job.Spec{
		Name:   "script",
		Script: "set -e\nx=$((6 * 7))\necho \"answer $x\"\necho \"$GREETING from the script\"\nfor i in 1 2 3; do echo line $i; done\n",
		Env:    map[string]string{"GREETING": "hi"},
	})
	h.completed(id)
	want := []string{"answer 42", "hi from the script", "line 1", "line 2", "line 3"}
	if got := texts(h.logs(id, 0, false, time.Minute), "stdout"); !slices.Equal(got, want) {
		h.t.Errorf("stdout %q, want %q", got, want)
	}
}

// blocker submits a job that takes every core until it is cancelled, and waits until it runs.
func (h *harness) blocker() job.ID {
	h.t.Helper()
	if h.o.Cores <= 0 {
		h.t.Skip("Options.Cores is not set: no job can be made to queue")
	}
	id := h.script("blocker", "sleep 120", job.Resources{Cores: h.o.Cores})
	h.until(id, job.Running, h.o.start())
	return id
}

func (h *harness) transitions() {
	blocker := h.blocker()
	id := h.script("queued", "echo ran", job.Resources{Cores: 1})
	st, err := h.s.Status(h.ctx(time.Minute), id)
	if err != nil {
		h.t.Fatal(err)
	}
	if st.State != job.Queued || st.Reason == "" {
		h.t.Errorf("behind a job on every core: %s with reason %q, want %s with a reason", st.State, st.Reason, job.Queued)
	}
	done := make(chan []job.State)
	go func() {
		var seen []job.State
		for st, err := range h.s.Watch(h.ctx(h.o.start()+time.Minute), id) {
			if err != nil {
				h.t.Errorf("Watch: %v", err)
				break
			}
			seen = append(seen, st.State)
		}
		done <- seen
	}()
	time.Sleep(500 * time.Millisecond)
	if err := h.s.Cancel(h.ctx(time.Minute), blocker, "make room"); err != nil {
		h.t.Fatal(err)
	}
	seen := <-done
	if want := []job.State{job.Queued, job.Running, job.Completed}; !slices.Equal(seen, want) {
		h.t.Errorf("Watch saw %v, want %v", seen, want)
	}
}

func (h *harness) exitCode() {
	id := h.script("exit3", "echo about to fail >&2\nexit 3", job.Resources{})
	st, _ := h.wait(id, h.o.start()+time.Minute)
	if st.State != job.Failed || st.ExitCode == nil || *st.ExitCode != 3 || st.Signal != "" {
		h.t.Errorf("exit 3: %s, exit code %v, signal %q; want %s, 3, none", st.State, ptr(st.ExitCode), st.Signal, job.Failed)
	}
	if !strings.Contains(st.Reason, "3") {
		h.t.Errorf("exit 3: reason %q does not give the exit code", st.Reason)
	}
}

func ptr(p *int) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func (h *harness) signal() {
	id := h.script("kill9", "echo before\nkill -9 $$\necho after", job.Resources{})
	st, _ := h.wait(id, h.o.start()+time.Minute)
	if st.State != job.Failed || st.Signal != "SIGKILL" {
		h.t.Errorf("kill -9 self: %s, signal %q (reason %q); want %s, SIGKILL", st.State, st.Signal, st.Reason, job.Failed)
	}
	if got := texts(h.logs(id, 0, false, time.Minute), "stdout"); !slices.Equal(got, []string{"before"}) {
		h.t.Errorf("stdout %q, want [before]", got)
	}
}

func (h *harness) logsStreams() {
	id := h.script("streams", "echo out1\necho err1 >&2\nsleep 1\necho out2\nsleep 1\necho err2 >&2\nsleep 1\nprintf 'out3 without newline'", job.Resources{})
	lines := h.logs(id, 0, true, h.o.start()+time.Minute)
	h.checkSeq(lines, 0)
	if got, want := texts(lines, "stdout"), []string{"out1", "out2", "out3 without newline"}; !slices.Equal(got, want) {
		h.t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := texts(lines, "stderr"), []string{"err1", "err2"}; !slices.Equal(got, want) {
		h.t.Errorf("stderr %q, want %q", got, want)
	}
	if h.o.StreamOrder {
		var got []string
		for _, l := range lines {
			if l.Text != "out1" && l.Text != "err1" { // written together: either order
				got = append(got, l.Text)
			}
		}
		if want := []string{"out2", "err2", "out3 without newline"}; !slices.Equal(got, want) {
			h.t.Errorf("lines a second apart out of order:%s", dump(lines))
		}
	}
	st, err := h.s.Status(h.ctx(time.Minute), id)
	if err != nil || !st.State.Terminal() {
		h.t.Errorf("after Logs with follow ended: status %+v, %v; want a terminal state", st, err)
	}
}

func (h *harness) logsFollowFile() {
	id := h.submit(&job.Spec{
		Name:   "follow",
		Script: "echo starting\nfor i in 1 2 3 4 5; do echo \"step $i\" >>sub/out.log; sleep 0.3; done\necho finished",
		Follow: []string{"sub/out.log"},
	})
	// Made after the submit, writable by whoever the job runs as (the sandbox's own account
	// when labmate is root): 0777 whatever the umask.
	if err := os.MkdirAll(filepath.Join(h.ws, "sub"), 0o777); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(h.ws, "sub"), 0o777); err != nil {
		h.t.Fatal(err)
	}
	lines := h.logs(id, 0, true, h.o.start()+time.Minute)
	h.checkSeq(lines, 0)
	if got, want := texts(lines, "sub/out.log"), []string{"step 1", "step 2", "step 3", "step 4", "step 5"}; !slices.Equal(got, want) {
		h.t.Errorf("followed file: %q, want %q (log:%s)", got, want, dump(lines))
	}
	if got, want := texts(lines, "stdout"), []string{"starting", "finished"}; !slices.Equal(got, want) {
		h.t.Errorf("stdout %q, want %q", got, want)
	}
}

func (h *harness) logsResume() {
	id := h.script("resume", "for i in $(seq 1 12); do echo \"line $i\"; echo \"warn $i\" >&2; sleep 0.15; done", job.Resources{})
	// Read three lines while it runs, stop, resume after the last one read.
	var first []*job.Line
	ctx, cancel := context.WithTimeout(context.Background(), h.o.start()+time.Minute)
	defer cancel()
	for l, err := range h.s.Logs(ctx, id, 0, true) {
		if err != nil {
			h.t.Fatal(err)
		}
		first = append(first, l)
		if len(first) == 3 {
			break
		}
	}
	if len(first) != 3 {
		h.t.Fatalf("followed log ended after %d lines", len(first))
	}
	rest := h.logs(id, first[2].Seq, true, h.o.start()+time.Minute)
	all := h.logs(id, 0, false, time.Minute)
	h.checkSeq(all, 0)
	if len(all) != 24 {
		h.t.Errorf("%d lines, want 24:%s", len(all), dump(all))
	}
	joined := append(slices.Clone(first), rest...)
	h.checkSeq(joined, 0)
	if got, want := texts(joined, ""), texts(all, ""); !slices.Equal(got, want) {
		h.t.Errorf("3 lines and the rest after seq %d:%s\nwant:%s", first[2].Seq, dump(joined), dump(all))
	}
	// Resumed at every point of the finished log.
	for _, after := range []int64{0, 1, 7, 23, 24, 30} {
		got := h.logs(id, after, false, time.Minute)
		want := all[min(int(after), len(all)):]
		if !slices.Equal(texts(got, ""), texts(want, "")) {
			h.t.Errorf("after %d:%s\nwant:%s", after, dump(got), dump(want))
		}
		h.checkSeq(got, after)
	}
}

func (h *harness) logsNoFollow() {
	id := h.script("nofollow", "echo ready\nsleep 120", job.Resources{})
	deadline := time.Now().Add(h.o.start() + time.Minute)
	for {
		start := time.Now()
		lines := h.logs(id, 0, false, 30*time.Second)
		if took := time.Since(start); took > 10*time.Second {
			h.t.Fatalf("Logs without follow of a running job took %v", took)
		}
		if slices.Contains(texts(lines, "stdout"), "ready") {
			break
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no line \"ready\" in the log of %s:%s", id, dump(lines))
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := h.s.Status(h.ctx(time.Minute), id)
	if err != nil || st.State != job.Running {
		h.t.Errorf("status %+v, %v: want %s", st, err, job.Running)
	}
}

func (h *harness) cancelRunning() {
	id := h.script("cancel", "echo started\nsleep 120", job.Resources{})
	h.until(id, job.Running, h.o.start())
	start := time.Now()
	if err := h.s.Cancel(h.ctx(time.Minute), id, "perception: the SCF oscillates"); err != nil {
		h.t.Fatal(err)
	}
	st, _ := h.wait(id, time.Minute)
	if st.State != job.Cancelled || !strings.Contains(st.Reason, "perception: the SCF oscillates") {
		h.t.Errorf("cancelled: %s (%q), want %s with the reason", st.State, st.Reason, job.Cancelled)
	}
	h.t.Logf("cancel → %s in %v", st.State, time.Since(start))
	// Cancelling an ended job is no error and changes nothing.
	if err := h.s.Cancel(h.ctx(time.Minute), id, "again"); err != nil {
		h.t.Errorf("Cancel of an ended job: %v", err)
	}
	if st2, err := h.s.Status(h.ctx(time.Minute), id); err != nil || st2.State != job.Cancelled || st2.Reason != st.Reason {
		h.t.Errorf("after a second Cancel: %+v, %v", st2, err)
	}
}

func (h *harness) cancelQueued() {
	h.blocker()
	id := h.script("queued", "echo must not run >ran.txt", job.Resources{Cores: 1})
	if st, err := h.s.Status(h.ctx(time.Minute), id); err != nil || st.State != job.Queued {
		h.t.Fatalf("behind a job on every core: %+v, %v; want %s", st, err, job.Queued)
	}
	if err := h.s.Cancel(h.ctx(time.Minute), id, "not needed"); err != nil {
		h.t.Fatal(err)
	}
	st, seen := h.wait(id, time.Minute)
	if st.State != job.Cancelled || !strings.Contains(st.Reason, "not needed") || slices.Contains(seen, job.Running) {
		h.t.Errorf("cancelled while queued: %s (%q), states %v; want %s with the reason, never running", st.State, st.Reason, seen, job.Cancelled)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "ran.txt")); err == nil {
		h.t.Error("the cancelled queued job ran")
	}
}

func (h *harness) memoryLimit() {
	if h.o.NoMemoryLimit {
		h.t.Skip("the scheduler enforces no memory limit")
	}
	// 2 GiB in 32 MiB pieces, each written so that its pages are really used.
	const alloc = "import sys\nchunks = []\nfor i in range(64):\n    chunks.append(bytearray(32 << 20))\n    print('allocated', (i + 1) * 32, 'MiB', flush=True)\nprint('survived 2 GiB')\n"
	id := h.submit(&job.Spec{Name: "hog", Command: []string{"python3", "-c", alloc}, Resources: job.Resources{MemoryBytes: 1 << 30}})
	st, _ := h.wait(id, h.o.start()+2*time.Minute)
	lines := h.logs(id, 0, false, time.Minute)
	if st.State != job.Failed {
		h.t.Fatalf("1 GiB job allocating 2 GiB: %s (%q), want %s; log:%s", st.State, st.Reason, job.Failed, dump(lines))
	}
	if r := strings.ToLower(st.Reason); !strings.Contains(r, "memory") && !strings.Contains(r, "oom") {
		h.t.Errorf("reason %q says nothing of memory", st.Reason)
	}
	if slices.Contains(texts(lines, ""), "survived 2 GiB") {
		h.t.Error("the job allocated 2 GiB under a 1 GiB limit")
	}
	h.t.Logf("1 GiB job allocating 2 GiB: %s, %s", st.State, st.Reason)
}

func (h *harness) wallTime() {
	wall := h.o.WallTime
	if wall <= 0 {
		wall = 2 * time.Second
	}
	sleep := int((3*wall + time.Minute).Seconds())
	id := h.script("slow", fmt.Sprintf("echo working\nsleep %d", sleep), job.Resources{WallTime: wall})
	st, _ := h.wait(id, h.o.start()+2*wall+time.Minute)
	if st.State != job.TimedOut {
		h.t.Fatalf("a %v job sleeping %d s: %s (%q), want %s", wall, sleep, st.State, st.Reason, job.TimedOut)
	}
	if took := st.Ended.Sub(st.Started); took < wall || took > wall+h.o.start() {
		h.t.Errorf("timed out after %v, want ≈%v", took, wall)
	}
}

func (h *harness) badSpec() {
	for _, c := range []struct {
		name  string
		spec  job.Spec
		field string
	}{
		{"nothing", job.Spec{}, "command"},
		{"both", job.Spec{Command: []string{"true"}, Script: "true"}, "command"},
		{"no workspace", job.Spec{Command: []string{"true"}, Workspace: "-"}, "workspace"},
		{"relative workspace", job.Spec{Command: []string{"true"}, Workspace: "rel/dir"}, "workspace"},
		{"negative cores", job.Spec{Command: []string{"true"}, Resources: job.Resources{Cores: -1}}, "resources.cores"},
		{"negative memory", job.Spec{Command: []string{"true"}, Resources: job.Resources{MemoryBytes: -1}}, "resources.memory_bytes"},
		{"negative wall time", job.Spec{Command: []string{"true"}, Resources: job.Resources{WallTime: -time.Second}}, "resources.wall_time"},
		{"negative gpus", job.Spec{Command: []string{"true"}, Resources: job.Resources{GPUs: -1}}, "resources.gpus"},
		{"follow outside", job.Spec{Command: []string{"true"}, Follow: []string{"../x.log"}}, "follow"},
		{"hotfix", job.Spec{Command: []string{"true"}, Hotfix: "sometimes"}, "hotfix"},
	} {
		spec := c.spec
		switch spec.Workspace {
		case "":
			spec.Workspace = h.ws
		case "-":
			spec.Workspace = ""
		}
		id, err := h.s.Submit(h.ctx(time.Minute), &spec)
		if err == nil {
			h.t.Errorf("%s: Submit accepted it as %s", c.name, id)
			_ = h.s.Cancel(context.Background(), id, "test over")
			continue
		}
		if !strings.Contains(err.Error(), c.field) {
			h.t.Errorf("%s: error %q does not name %s", c.name, err, c.field)
		}
	}
}

func (h *harness) unknown() {
	const id = job.ID("local-no-such-job")
	ctx := h.ctx(time.Minute)
	if _, err := h.s.Status(ctx, id); !errors.Is(err, job.ErrUnknownJob) {
		h.t.Errorf("Status: %v, want ErrUnknownJob", err)
	}
	if err := h.s.Cancel(ctx, id, "why"); !errors.Is(err, job.ErrUnknownJob) {
		h.t.Errorf("Cancel: %v, want ErrUnknownJob", err)
	}
	n := 0
	for _, err := range h.s.Logs(ctx, id, 0, true) {
		n++
		if !errors.Is(err, job.ErrUnknownJob) {
			h.t.Errorf("Logs: %v, want ErrUnknownJob", err)
		}
		break
	}
	if n != 1 {
		h.t.Errorf("Logs of an unknown job yielded %d times, want one error", n)
	}
	n = 0
	for _, err := range h.s.Watch(ctx, id) {
		n++
		if !errors.Is(err, job.ErrUnknownJob) {
			h.t.Errorf("Watch: %v, want ErrUnknownJob", err)
		}
	}
	if n != 1 {
		h.t.Errorf("Watch of an unknown job yielded %d times, want one error", n)
	}
}
