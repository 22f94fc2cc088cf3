package local

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/sandbox"
	"golang.org/x/sys/unix"
)

// dispatch settles the running jobs, reads their output and starts the queued jobs that fit.
func (s *Scheduler) dispatch() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("job/local: %w", err)
	}
	unlock := s.lock()
	defer unlock()
	var running, queued []*record
	for _, e := range entries {
		id := job.ID(e.Name())
		s.mu.Lock()
		done := s.terminal[id]
		s.mu.Unlock()
		if done || !e.IsDir() || !validID(id) {
			continue
		}
		r, err := s.readRecord(id)
		if err != nil {
			continue // being submitted, or unreadable: Status says why
		}
		if err := s.settle(r); err != nil {
			continue
		}
		switch r.State {
		case job.Running:
			running = append(running, r)
		case job.Queued:
			queued = append(queued, r)
		default:
			s.mu.Lock()
			s.terminal[id] = true
			s.mu.Unlock()
		}
	}
	cores, mem := 0, int64(0)
	for _, r := range running {
		cores += r.Cores
		mem += r.Memory
		_ = s.ingest(r, false)
		s.relaunch(r)
	}
	slices.SortStableFunc(queued, func(a, b *record) int { return a.Submitted.Compare(b.Submitted) })
	var blocker *record
	for _, r := range queued {
		var why string
		switch {
		case blocker != nil:
			why = fmt.Sprintf("waiting behind %s, which was submitted first", blocker.ID)
		case cores+r.Cores > s.cores || mem+r.Memory > s.mem:
			why = fmt.Sprintf("waiting for %d core(s) and %s: running jobs hold %d of %d cores and %s of %s",
				r.Cores, sandbox.FormatSize(r.Memory), cores, s.cores, sandbox.FormatSize(mem), sandbox.FormatSize(s.mem))
			blocker = r
		default:
			if err := s.start(r); err != nil {
				r.State, r.Reason, r.Ended = job.Failed, err.Error(), time.Now().UTC()
				_ = s.writeRecord(r)
				continue
			}
			cores += r.Cores
			mem += r.Memory
			continue
		}
		if r.Reason != why {
			r.Reason = why
			_ = s.writeRecord(r)
		}
	}
	return nil
}

// settle finishes a running record whose recorder has ended: from its exit record, or LOST
// without one. The caller holds the lock.
func (s *Scheduler) settle(r *record) error {
	if r.State != job.Running {
		return nil
	}
	dir := s.jobDir(r.ID)
	exit, err := os.ReadFile(filepath.Join(dir, "exit"))
	if err != nil && s.alive(r) {
		return nil
	}
	if err != nil {
		// Gone: look once more, the recorder may have written its record and exited since.
		if exit, err = os.ReadFile(filepath.Join(dir, "exit")); err != nil {
			return s.lost(r)
		}
	}
	var code, ooms int
	if _, err := fmt.Sscan(string(exit), &code, &ooms); err != nil {
		return s.lost(r)
	}
	killCgroups(r.Cgroups) // nothing is left in them: this removes them
	_ = s.ingest(r, true)
	r.Ended = time.Now().UTC()
	if fi, err := os.Stat(filepath.Join(dir, "exit")); err == nil {
		r.Ended = fi.ModTime().UTC()
	}
	r.ExitCode, r.Signal = nil, ""
	if sig := code - 128; sig > 0 && sig < 65 {
		r.Signal = signalName(sig)
	} else {
		c := code
		r.ExitCode = &c
	}
	last := s.lastLine(r)
	switch {
	case exists(filepath.Join(dir, failMarker)):
		why, _ := os.ReadFile(filepath.Join(dir, failMarker))
		r.State, r.Reason = job.Failed, string(why)
	case exists(filepath.Join(dir, "cancel")):
		why, _ := os.ReadFile(filepath.Join(dir, "cancel"))
		r.State, r.Reason = job.Cancelled, string(why)
	case exists(filepath.Join(dir, "timeout")):
		r.State, r.Reason = job.TimedOut, fmt.Sprintf("ran past its wall time of %v and was stopped", s.wallTime(r.ID))
	case code == 0:
		r.State, r.Reason = job.Completed, ""
	case ooms > 0:
		r.State = job.Failed
		r.Reason = fmt.Sprintf("out of memory: the job's %s memory budget ran out and the kernel's OOM killer ended %d process(es)", sandbox.FormatSize(r.Memory), ooms)
	case r.Signal != "":
		r.State, r.Reason = job.Failed, "killed by "+r.Signal+withLast(last)
	default:
		r.State, r.Reason = job.Failed, fmt.Sprintf("exit code %d%s", code, withLast(last))
	}
	return s.writeRecord(r)
}

func withLast(last string) string {
	if last == "" {
		return ""
	}
	return "; last log line: " + last
}

func (s *Scheduler) wallTime(id job.ID) time.Duration {
	if sp, err := s.spec(id); err == nil {
		return sp.Resources.WallTime
	}
	return 0
}

// lost marks r LOST: its recorder vanished without an exit record. What is left in its cgroups
// is killed and they are removed.
func (s *Scheduler) lost(r *record) error {
	killCgroups(r.Cgroups)
	_ = s.ingest(r, true)
	r.Ended = time.Now().UTC()
	if why, err := os.ReadFile(filepath.Join(s.jobDir(r.ID), failMarker)); err == nil {
		r.State, r.Reason = job.Failed, string(why)
		return s.writeRecord(r)
	}
	if why, err := os.ReadFile(filepath.Join(s.jobDir(r.ID), "cancel")); err == nil {
		r.State, r.Reason = job.Cancelled, string(why)
		return s.writeRecord(r)
	}
	r.State = job.Lost
	r.Reason = fmt.Sprintf("its process %d vanished without recording how it ended", r.PID)
	if r.PID == 0 {
		r.Reason = "labmate stopped while starting it"
	}
	r.Reason += withLast(s.lastLine(r))
	return s.writeRecord(r)
}

func killCgroups(cg sandbox.Cgroups) {
	if cg.Procs == "" {
		return
	}
	for i := 0; i < 100; i++ {
		b, err := os.ReadFile(cg.Procs)
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			break
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, d := range cg.Dirs {
		_ = os.Remove(d)
	}
}

// box returns the sandbox for a job of cores and mem.
func (s *Scheduler) box(cores int, mem int64) (*sandbox.Sandbox, error) {
	k := boxKey{cores, mem}
	s.mu.Lock()
	b := s.boxes[k]
	s.mu.Unlock()
	if b != nil {
		return b, nil
	}
	p := s.base
	p.Hide = slices.Clone(s.base.Hide)
	p.MemoryBytes = mem
	p.CPUs = float64(cores)
	p.DiskBytes = -1 // the job's quota is its supervisor's watchdog (sandbox.WatchQuota): the job outlives this process
	mode, err := s.sandboxMode()
	if err != nil {
		return nil, err
	}
	b, err = sandbox.New(mode, &p)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.boxes[k]; old != nil {
		return old, nil
	}
	s.boxes[k] = b
	return b, nil
}

// sandboxMode is Options.Mode, or the one sandbox.Detect finds, once.
func (s *Scheduler) sandboxMode() (sandbox.Mode, error) {
	s.modeMu.Lock()
	defer s.modeMu.Unlock()
	if s.mode == "" {
		m, err := sandbox.Detect()
		if err != nil {
			return "", fmt.Errorf("job/local: %w", err)
		}
		s.mode = m
	}
	return s.mode, nil
}

// start starts r's recorder and records it RUNNING; the caller holds the lock.
func (s *Scheduler) start(r *record) error {
	sp, err := s.spec(r.ID)
	if err != nil {
		return err
	}
	box, err := s.box(r.Cores, r.Memory)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	argv := sp.Command
	if sp.Script != "" {
		argv = []string{"bash", "-c", sp.Script, "labmate-job"}
	}
	if r.Pin == nil { // submitted by an older labmate
		if r.Pin, err = pinWorkspace(sp.Workspace); err != nil {
			return fmt.Errorf("job workspace: %w", err)
		}
	}
	wsfd, err := r.Pin.check()
	if err != nil {
		return err
	}
	defer unix.Close(wsfd)
	labmateDir(wsfd)
	if sp.Resources.DiskBytes > 0 {
		// The quota counts from here; a workspace too big to measure at once is measured by
		// the supervisor.
		r.DiskBase = -1
		if n, ok := sandbox.WorkspaceBytes(r.Pin.Path, 50*time.Millisecond); ok {
			r.DiskBase = n
		}
	}
	// The job's own environment is exported by the preamble inside the sandbox: the recorder,
	// the sandbox's wrappers and bwrap run with labmate's defaults only.
	cmd, err := box.Command(preambled(r.Pin, userEnv(sp), argv), s.env(r), r.Pin.Path)
	if err != nil {
		return err
	}
	dir := s.jobDir(r.ID)
	cg := box.Cgroups(cmd)
	out, err := os.OpenFile(filepath.Join(dir, "stdout"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		box.Kill(cmd)
		return err
	}
	defer out.Close()
	errf, err := os.OpenFile(filepath.Join(dir, "stderr"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		box.Kill(cmd)
		return err
	}
	defer errf.Close()

	wall := "0"
	if w := sp.Resources.WallTime; w > 0 {
		wall = strconv.FormatFloat(w.Seconds(), 'f', 3, 64)
	}
	detached, err := box.Detached(cmd)
	if err != nil {
		box.Kill(cmd)
		return err
	}
	args := []string{"labmate-job", "-c", s.recorderScript(), "labmate-job", dir, wall, cg.Procs, cg.OOM, strconv.Itoa(len(cg.Dirs))}
	args = append(append(args, cg.Dirs...), detached...)
	// The recorder is root's, in the session of its own that outlives labmate; the command's
	// namespaces (outside ModeBubblewrap) are made for the recorder and its child together.
	attr := *cmd.SysProcAttr
	attr.Setpgid, attr.Setsid, attr.Pdeathsig, attr.Credential = false, true, 0, nil
	rec := &exec.Cmd{Path: "/bin/sh", Args: args, Env: cmd.Env, Dir: cmd.Dir, Stdout: out, Stderr: errf, SysProcAttr: &attr}

	// Recorded as starting first: if labmate dies before the pid is recorded, the job is
	// lost rather than started twice.
	r.State, r.Reason, r.Started = job.Running, "starting", time.Now().UTC()
	r.Cgroups = cg
	if err := s.writeRecord(r); err != nil {
		box.Kill(cmd)
		return err
	}
	if err := box.StartWith(cmd, rec); err != nil {
		box.Kill(cmd)
		r.State = job.Queued
		return fmt.Errorf("starting the job's recorder: %w", err)
	}
	pid := rec.Process.Pid
	st, ok := procfs.ReadStat(pid)
	if !ok {
		// It cannot have exited yet: it is our unreaped child.
		st = procfs.Stat{}
	}
	r.PID, r.Start, r.Boot, r.Native, r.Reason = pid, st.Start, s.boot, strconv.Itoa(pid), ""
	err = s.writeRecord(r)
	if err == nil {
		s.launch(r)
	}
	go func() {
		_ = rec.Wait()
		box.Kill(cmd) // releases what the sandbox keeps of cmd; the recorder removed its cgroups
		if !s.closed() {
			s.kick()
		}
	}()
	return err
}

// env is the environment labmate gives every job (and the host processes that start it): the
// spec's own comes on top inside the sandbox (userEnv).
func (s *Scheduler) env(r *record) []string {
	m := map[string]string{
		"PATH":                 "/usr/local/bin:/usr/bin:/bin",
		"LABMATE_JOB_ID":       string(r.ID),
		"OMP_NUM_THREADS":      strconv.Itoa(r.Cores),
		"OPENBLAS_NUM_THREADS": strconv.Itoa(r.Cores),
		"MKL_NUM_THREADS":      strconv.Itoa(r.Cores),
		"LANG":                 "C.UTF-8",
	}
	var env []string
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// userEnv is the spec's environment as NAME=value words, sorted.
func userEnv(sp *job.Spec) []string {
	env := make([]string, 0, len(sp.Env))
	for k, v := range sp.Env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// recorderScript is the /bin/sh that runs a job: "$@" is the sandboxed command; before it come
// the job directory, the wall time in seconds (0: none), the cgroup.procs file, the OOM-count
// file, the number of cgroup directories and the directories. It runs the command as its child,
// stops it on SIGTERM (Cancel) or past the wall time, and records its exit status with the OOM
// kills in DIR/exit, renamed into place. The empty cgroups are removed by whoever settles the
// job (or by the sandbox, once their creator is gone).
func (s *Scheduler) recorderScript() string {
	q := func(t string) string { return shellQuote(s.tools[t]) }
	return strings.Join([]string{
		`d=$1 wall=$2 procs=$3 oom=$4 n=$5; shift 5`,
		`dirs=''; while [ "$n" -gt 0 ]; do dirs="$dirs$1` + "\n" + `"; shift; n=$((n - 1)); done`,
		`"$@" </dev/null & child=$!`,
		`rec=$$ stopped=0 timer=''`,
		// Builtins only but for mv: every fork here is paid by every job.
		`killall() { kill -KILL "$child" 2>/dev/null; [ -n "$procs" ] || return 0; i=0; while [ $i -lt 200 ]; do p=''; while read -r x; do p="$p $x"; done <"$procs" 2>/dev/null; [ -n "$p" ] || break; kill -KILL $p 2>/dev/null; i=$((i + 1)); ` + q("sleep") + ` 0.01; done; }`,
		`trap 'stopped=1; killall' TERM INT HUP`,
		`if [ "$wall" != 0 ]; then (trap - TERM; ` + q("sleep") + ` "$wall" & s=$!; trap 'kill $s 2>/dev/null; exit 0' TERM; wait $s; [ -e "$d/exit" ] || { : >"$d/timeout"; kill -TERM $rec; }) & timer=$!; fi`,
		`wait "$child"; code=$?`,
		`while [ "$stopped" = 1 ] && [ "$code" -gt 128 ] && kill -0 "$child" 2>/dev/null; do stopped=0; wait "$child"; code=$?; done`,
		`[ -z "$timer" ] || kill -TERM "$timer" 2>/dev/null`,
		`killall`,
		`ooms=0; if [ -n "$oom" ]; then while read -r k v; do [ "$k" != oom_kill ] || ooms=$v; done <"$oom" 2>/dev/null; fi`,
		`echo "$code $ooms" >"$d/exit.tmp" && ` + q("mv") + ` -f "$d/exit.tmp" "$d/exit"`,
	}, "\n")
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var signalNames = map[int]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
	14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
	20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
	26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

func signalName(n int) string {
	if name, ok := signalNames[n]; ok {
		return name
	}
	return "SIGRTMIN+" + strconv.Itoa(n-34)
}
